/*
 * test_model_files.c - loading tokenizer.json and .tiktoken files, and
 * opening models by name and by directory: what is read, what is refused
 * (with what message), added tokens and the post-processor.
 *
 * The tokenizer.json files are made here, small: the 256 byte tokens of
 * GPT-2's byte-level alphabet (ids 0-255 in code point order, as GPT-2's)
 * and a few merges, so the expected ids follow by hand from the merges.
 * The real models' parity is test_models.c's.
 */
#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "model/model.h"

/* The byte-level string of byte b (GPT-2's alphabet), UTF-8. */
static void spell(uint8_t b, char out[3])
{
    uint32_t cp = simdbpe__bytelevel_cp(b);
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = 0;
    } else {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        out[2] = 0;
    }
}

/* The id of byte b in GPT-2's order: the bytes sorted by their code point. */
static uint32_t byte_id(uint8_t b)
{
    uint32_t cp = simdbpe__bytelevel_cp(b), id = 0;
    for (int o = 0; o < 256; o++)
        id += simdbpe__bytelevel_cp((uint8_t)o) < cp;
    return id;
}

/* A tokenizer.json: byte tokens, then the merges "a b" (byte-level
 * strings; ids 256, 257, ... in order), the given pre_tokenizer and the
 * rest. Returns a json object the caller edits or dumps. */
static json_t *small_json(const char *const *merges, size_t n_merges)
{
    json_t *vocab = json_object();
    for (int b = 0; b < 256; b++) {
        char s[3];
        spell((uint8_t)b, s);
        json_object_set_new(vocab, s, json_integer(byte_id((uint8_t)b)));
    }
    json_t *ml = json_array();
    for (size_t i = 0; i < n_merges; i++) {
        char joined[64];
        const char *sp = strchr(merges[i], ' ');
        snprintf(joined, sizeof joined, "%.*s%s", (int)(sp - merges[i]), merges[i], sp + 1);
        json_object_set_new(vocab, joined, json_integer((json_int_t)(256 + i)));
        json_array_append_new(ml, json_string(merges[i]));
    }
    json_t *model = json_pack("{s:s, s:o, s:o, s:b}", "type", "BPE", "vocab", vocab, "merges", ml,
                              "ignore_merges", 0);
    json_t *pre = json_pack(
        "{s:s, s:[{s:s, s:{s:s}, s:s, s:b}, {s:s, s:b, s:b, s:b}]}", "type", "Sequence",
        "pretokenizers", "type", "Split", "pattern", "Regex",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "behavior", "Isolated", "invert", 0, "type", "ByteLevel", "add_prefix_space", 0,
        "trim_offsets", 1, "use_regex", 0);
    return json_pack("{s:s, s:[], s:n, s:o, s:n, s:o}", "version", "1.0", "added_tokens",
                     "normalizer", "pre_tokenizer", pre, "post_processor", "model", model);
}

static simdbpe_status load_json(json_t *j, simdbpe_model **m, simdbpe_error *err)
{
    char *text = json_dumps(j, JSON_COMPACT);
    cr_assert(text);
    simdbpe_status st = simdbpe_model_load_hf_json(text, strlen(text), m, err);
    free(text);
    return st;
}

static const char *const MERGES[] = {"h e", "l l", "he ll", "Ġ w"};

static void expect_encode(simdbpe_model *m, const char *text, simdbpe_special_policy special,
                          int add, const uint32_t *want, size_t n_want)
{
    simdbpe_encoder *e = tu_encoder(m);
    simdbpe_encode_options o = {.special = special, .add_special_tokens = add};
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode(e, text, strlen(text), &o, &ids, &n, &err), SIMDBPE_OK, "%s",
                 err.message);
    char msg[200];
    cr_assert(!tu_ids_differ(ids, n, want, n_want, msg, sizeof msg), "\"%s\": %s", text, msg);
    simdbpe_encoder_free(e);
}

Test(model_files, tokenizer_json_with_a_known_family_loads)
{
    json_t *j = small_json(MERGES, 4);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(load_json(j, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_str_eq(simdbpe_model_pretokenizer(m), "cl100k");
    cr_assert_eq(simdbpe_model_vocab_size(m), 260);
    /* "hello" -> he ll o; " w" is one merge (Ġw = 259). */
    uint32_t want[] = {258, byte_id('o'), 259};
    expect_encode(m, "hello w", SIMDBPE_SPECIAL_AS_TEXT, 0, want, 3);
    simdbpe_model_free(m);
    json_decref(j);
}

Test(model_files, merges_as_pairs_are_the_same_merges)
{
    json_t *j = small_json(MERGES, 4);
    json_t *ml = json_object_get(json_object_get(j, "model"), "merges");
    json_array_clear(ml);
    json_array_append_new(ml, json_pack("[s,s]", "h", "e"));
    json_array_append_new(ml, json_pack("[s,s]", "l", "l"));
    json_array_append_new(ml, json_pack("[s,s]", "he", "ll"));
    json_array_append_new(ml, json_pack("[s,s]", "Ġ", "w"));
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(load_json(j, &m, &err), SIMDBPE_OK, "%s", err.message);
    uint32_t want[] = {258, byte_id('o'), 259};
    expect_encode(m, "hello w", SIMDBPE_SPECIAL_AS_TEXT, 0, want, 3);
    simdbpe_model_free(m);
    json_decref(j);
}

static void expect_refused(json_t *j, simdbpe_status want, const char *needle)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = load_json(j, &m, &err);
    cr_assert_eq(st, want, "status %s, message: %s", simdbpe_status_name(st), err.message);
    cr_assert_null(m);
    cr_assert(strstr(err.message, needle), "message \"%s\" lacks \"%s\"", err.message, needle);
    json_decref(j);
}

Test(model_files, a_pattern_the_generic_path_cannot_match_is_refused_and_quoted)
{
    json_t *j = small_json(MERGES, 4);
    json_t *split = json_array_get(json_object_get(json_object_get(j, "pre_tokenizer"),
                                                   "pretokenizers"),
                                   0);
    json_object_set_new(json_object_get(split, "pattern"), "Regex", json_string("\\w+|\\s+"));
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, "Split pattern \"\\\\w+|\\\\s+\" has an escape");
}

Test(model_files, other_unsupported_settings_are_refused_by_name)
{
    json_t *j = small_json(MERGES, 4);
    json_object_set_new(json_object_get(j, "model"), "byte_fallback", json_true());
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, "byte_fallback");

    j = small_json(MERGES, 4);
    json_object_set_new(j, "normalizer",
                        json_loads("{\"type\": \"Sequence\", \"normalizers\": [{\"type\": "
                                   "\"Lowercase\"}, {\"type\": \"BertNormalizer\"}]}",
                                   0, NULL));
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, "normalizer step 1 (\"BertNormalizer\")");

    j = small_json(MERGES, 4);
    json_object_set_new(j, "normalizer",
                        json_loads("{\"type\": \"Replace\", \"pattern\": {\"Regex\": "
                                   "\"\\\\d\"}, \"content\": \"0\"}",
                                   0, NULL));
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, "has an escape");

    j = small_json(MERGES, 4);
    json_array_append_new(json_object_get(j, "added_tokens"),
                          json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id", 300, "content",
                                    "<x>", "single_word", 0, "lstrip", 1, "rstrip", 0,
                                    "normalized", 0, "special", 1));
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, "\"<x>\" uses lstrip");

    j = small_json(MERGES, 4);
    json_t *bl = json_array_get(json_object_get(json_object_get(j, "pre_tokenizer"),
                                                "pretokenizers"),
                                1);
    json_object_set_new(bl, "add_prefix_space", json_true());
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, "add_prefix_space");
}

Test(model_files, metaspace_settings_hf_does_not_have_or_we_do_not_run_are_refused)
{
    /* A Metaspace pre-tokenizer makes the file SentencePiece-style; its
     * settings are read before the vocabulary is. */
    const char *bad[][2] = {
        {"{\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": \"always\"}",
         "replacement other than"},
        {"{\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"prepend_scheme\": \"once\"}",
         "prepend_scheme must be"},
        {"{\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"split\": \"yes\"}",
         "split must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = small_json(MERGES, 4);
        json_object_set_new(j, "pre_tokenizer", json_loads(bad[i][0], 0, NULL));
        expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, bad[i][1]);
    }
    json_t *j = small_json(MERGES, 4);
    json_object_set_new(j, "pre_tokenizer",
                        json_loads("{\"type\": \"Metaspace\", \"replacement\": \"\u2581\", "
                                   "\"prepend_scheme\": \"first\"}",
                                   0, NULL));
    json_object_set_new(j, "normalizer",
                        json_loads("{\"type\": \"Strip\", \"strip_left\": true, "
                                   "\"strip_right\": false}",
                                   0, NULL));
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED, "prepend_scheme \"first\" after a normalizer");
}

Test(model_files, malformed_files_name_where)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    const char *bad = "{\"model\": {\"vocab\": {\"a\": 0,}}}";
    cr_assert_eq(simdbpe_model_load_hf_json(bad, strlen(bad), &m, &err), SIMDBPE_ERR_VOCAB);
    cr_assert(strstr(err.message, "tokenizer.json line 1 column"), "%s", err.message);

    json_t *j = small_json(MERGES, 4);
    json_array_append_new(json_object_get(json_object_get(j, "model"), "merges"),
                          json_string("q z"));
    expect_refused(j, SIMDBPE_ERR_MERGES, "model.merges[4]: the merge of \"q\" and \"z\"");

    j = small_json(MERGES, 4);
    json_array_append_new(json_object_get(json_object_get(j, "model"), "merges"),
                          json_string("he"));
    expect_refused(j, SIMDBPE_ERR_MERGES, "model.merges[4]: expected two tokens");
}

Test(model_files, added_tokens_split_the_text_as_hf_does)
{
    json_t *j = small_json(MERGES, 4);
    json_t *added = json_object_get(j, "added_tokens");
    /* HF numbers added tokens the vocabulary lacks from its size on (see
     * added_tokens_get_hf_ids); the file states those ids. */
    int base = (int)json_object_size(json_object_get(json_object_get(j, "model"), "vocab"));
    /* A special token and a plain one, both outside the vocabulary, and a
     * longer special one starting like the first. */
    json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id", base,
                                           "content", "<s>", "single_word", 0, "lstrip", 0,
                                           "rstrip", 0, "normalized", 0, "special", 1));
    json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id", base + 1,
                                           "content", "<t>", "single_word", 0, "lstrip", 0,
                                           "rstrip", 0, "normalized", 0, "special", 0));
    json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id", base + 2,
                                           "content", "<s>x", "single_word", 0, "lstrip", 0,
                                           "rstrip", 0, "normalized", 0, "special", 1));
    json_object_set_new(j, "post_processor",
                        json_pack("{s:s, s:[{s:{s:s, s:i}}, {s:{s:s, s:i}}], s:{s:{s:s, s:[i], "
                                  "s:[s]}}}",
                                  "type", "TemplateProcessing", "single", "SpecialToken", "id",
                                  "<s>", "type_id", 0, "Sequence", "id", "A", "type_id", 0,
                                  "special_tokens", "<s>", "id", "<s>", "ids", base, "tokens",
                                  "<s>"));
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(load_json(j, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_vocab_size(m), (uint32_t)base + 3);
    uint32_t lt = byte_id('<'), gt = byte_id('>'), s = byte_id('s'), x = byte_id('x');
    /* Specials as text: only the plain added token is cut out. */
    uint32_t b = (uint32_t)base;
    uint32_t as_text[] = {lt, s, gt, x, b + 1};
    expect_encode(m, "<s>x<t>", SIMDBPE_SPECIAL_AS_TEXT, 0, as_text, 5);
    /* Allowed: leftmost-longest, "<s>x" over "<s>". */
    uint32_t allowed[] = {b + 2, b + 1, b};
    expect_encode(m, "<s>x<t><s>", SIMDBPE_SPECIAL_ALLOW, 0, allowed, 3);
    /* The post-processor's BOS, only on request. */
    uint32_t bos[] = {b, b + 1};
    expect_encode(m, "<t>", SIMDBPE_SPECIAL_AS_TEXT, 1, bos, 2);
    /* Refused: the special one is the error, at its offset. */
    simdbpe_encoder *e = tu_encoder(m);
    simdbpe_encode_options o = {.special = SIMDBPE_SPECIAL_ERROR};
    const uint32_t *ids;
    size_t n;
    cr_assert_eq(simdbpe_encode(e, "ab<t>c<s>", 9, &o, &ids, &n, &err), SIMDBPE_ERR_SPECIAL_TOKEN);
    cr_assert_eq(err.byte_offset, 6);
    /* Decoding gives an added token's text. */
    uint8_t out[16];
    size_t len;
    uint32_t dec[] = {b + 2, b + 1};
    cr_assert_eq(simdbpe_decode(m, dec, 2, out, sizeof out, &len, &err), SIMDBPE_OK);
    cr_assert(len == 7 && memcmp(out, "<s>x<t>", 7) == 0);
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
    json_decref(j);
}

/* An added token that model.vocab has and a merge makes ("er", id 257) is
 * a token BPE may reach, as in HF's BPE; it was refused ("the merge of e
 * and r is not in the vocabulary"). The ids are HF tokenizers 0.23.2's
 * for this file (tests/fuzz/findings/README.md, finding 6). */
Test(model_files, an_added_token_a_merge_makes_loads_as_in_hf)
{
    size_t len;
    char *text = tu_read(SIMDBPE_SOURCE_DIR
                         "/tests/fuzz/corpus/hf_json/finding6_added_token_made_by_merge",
                         &len);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_hf_json(text, len, &m, &err), SIMDBPE_OK, "%s", err.message);
    uint32_t want[] = {83, 264, 220, 257, 81, 258, 220, 257, 82, 220, 86, 64, 83, 257};
    expect_encode(m, "the error ers water", SIMDBPE_SPECIAL_AS_TEXT, 0, want, 14);
    simdbpe_model_free(m);
    free(text);
}

Test(model_files, ignore_merges_emits_a_whole_token_merges_would_not_build)
{
    /* "hel" is a token no merge makes: BPE gives he + l; with
     * ignore_merges the whole piece "hel" is that token. */
    json_t *j = small_json(MERGES, 4);
    json_object_set_new(json_object_get(json_object_get(j, "model"), "vocab"), "hel",
                        json_integer(260));
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(load_json(j, &m, &err), SIMDBPE_OK, "%s", err.message);
    uint32_t plain[] = {256, byte_id('l')};
    expect_encode(m, "hel", SIMDBPE_SPECIAL_AS_TEXT, 0, plain, 2);
    simdbpe_model_free(m);
    json_object_set_new(json_object_get(j, "model"), "ignore_merges", json_true());
    cr_assert_eq(load_json(j, &m, &err), SIMDBPE_OK, "%s", err.message);
    uint32_t whole[] = {260};
    expect_encode(m, "hel", SIMDBPE_SPECIAL_AS_TEXT, 0, whole, 1);
    /* Only whole pieces: inside "hello" BPE runs as usual. */
    uint32_t hello[] = {258, byte_id('o')};
    expect_encode(m, "hello", SIMDBPE_SPECIAL_AS_TEXT, 0, hello, 2);
    simdbpe_model_free(m);
    json_decref(j);
}

Test(model_files, names_open_the_embedded_models)
{
    static const char *const want[][2] = {{"gpt2", "gpt2"},
                                          {"r50k_base", "gpt2"},
                                          {"p50k_base", "gpt2"},
                                          {"cl100k_base", "cl100k"},
                                          {"o200k_base", "o200k"}};
    size_t i = 0;
    for (; simdbpe_model_name_at(i); i++) {
        cr_assert_lt(i, 5);
        cr_assert_str_eq(simdbpe_model_name_at(i), want[i][0]);
        simdbpe_model *m;
        simdbpe_error err;
        cr_assert_eq(simdbpe_model_open(want[i][0], &m, &err), SIMDBPE_OK, "%s", err.message);
        cr_assert_str_eq(simdbpe_model_pretokenizer(m), want[i][1]);
        simdbpe_model_free(m);
    }
    cr_assert_eq(i, 5);
    /* tiktoken's special token ids (openai_public.py). */
    simdbpe_model *m;
    uint32_t id;
    cr_assert_eq(simdbpe_model_open("cl100k_base", &m, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_model_special_id(m, "<|endofprompt|>", 15, &id), SIMDBPE_OK);
    cr_assert_eq(id, 100276);
    cr_assert_eq(simdbpe_model_vocab_size(m), 100277);
    simdbpe_model_free(m);
}

Test(model_files, tiktoken_files_are_read_and_checked)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    /* An unknown rank file names no pre-tokenizer: refused without a name. */
    const char *ranks = "YQ== 0\nYg== 1\n";
    cr_assert_eq(simdbpe_model_load_tiktoken(ranks, strlen(ranks), NULL, &m, &err),
                 SIMDBPE_ERR_UNSUPPORTED);
    cr_assert(strstr(err.message, "give the encoding"), "%s", err.message);
    const char *bad = "YQ== 0\nnot base64! 1\n";
    cr_assert_eq(simdbpe_model_load_tiktoken(bad, strlen(bad), "cl100k_base", &m, &err),
                 SIMDBPE_ERR_VOCAB);
    cr_assert(strstr(err.message, ".tiktoken line 2"), "%s", err.message);
    cr_assert_eq(simdbpe_model_load_tiktoken(ranks, strlen(ranks), "p99k", &m, &err),
                 SIMDBPE_ERR_UNSUPPORTED);
    cr_assert_null(m);
    /* The same token at two ranks (found by fuzz_tiktoken: "aW5=" is a
     * non-canonical base64 of "in"): refused at once, naming both ranks.
     * It took seconds and ended in "cannot build the whole-token hash". */
    size_t cap = 256 * 12 + 64, n = 0;
    char *twice = malloc(cap);
    cr_assert_not_null(twice);
    for (int b = 0; b < 256; b++) {
        static const char b64[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        n += (size_t)snprintf(twice + n, cap - n, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
    }
    n += (size_t)snprintf(twice + n, cap - n, "aW4= 256\naW5= 257\n");
    cr_assert_eq(simdbpe_model_load_tiktoken(twice, n, "cl100k_base", &m, &err),
                 SIMDBPE_ERR_VOCAB, "%s", err.message);
    cr_assert(strstr(err.message, "ranks 256 and 257 are the same token"), "%s", err.message);
    cr_assert_null(m);
    n -= strlen("aW5= 257\n"); /* without the second rank it loads */
    cr_assert_eq(simdbpe_model_load_tiktoken(twice, n, "cl100k_base", &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    simdbpe_model_free(m);
    m = NULL;
    free(twice);
    /* The shipped rank file, recognised by its contents, is cl100k_base. */
    size_t len;
    char *data = tu_read(SIMDBPE_SOURCE_DIR "/src/model/tiktoken/cl100k_base.tiktoken", &len);
    cr_assert_eq(simdbpe_model_load_tiktoken(data, len, NULL, &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    cr_assert_str_eq(simdbpe_model_pretokenizer(m), "cl100k");
    simdbpe_model *named;
    cr_assert_eq(simdbpe_model_open("cl100k_base", &named, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_model_compiled_size(m), simdbpe_model_compiled_size(named));
    simdbpe_model_free(named);
    simdbpe_model_free(m);
    free(data);
}

Test(model_files, a_directory_prefers_its_tokenizer_json)
{
    char dir[] = "/tmp/simdbpe-model-dir-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    /* GPT-2's vocab.json + merges.txt beside a tokenizer.json of the
     * cl100k family: the directory is the tokenizer.json's model. */
    size_t len;
    char *v = tu_read(TU_GPT2_DIR "/vocab.json", &len);
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    tu_write(path, v, len);
    free(v);
    char *mg = tu_read(TU_GPT2_DIR "/merges.txt", &len);
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    tu_write(path, mg, len);
    free(mg);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_str_eq(simdbpe_model_pretokenizer(m), "gpt2");
    simdbpe_model_free(m);
    json_t *j = small_json(MERGES, 4);
    char *text = json_dumps(j, JSON_COMPACT);
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    tu_write(path, text, strlen(text));
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_str_eq(simdbpe_model_pretokenizer(m), "cl100k");
    cr_assert_eq(simdbpe_model_vocab_size(m), 260);
    simdbpe_model_free(m);
    /* A tokenizer.json under another name opens as one too, and its
     * errors name the file. */
    snprintf(path, sizeof path, "%s/qwen-like.txt", dir);
    tu_write(path, text, strlen(text));
    cr_assert_eq(simdbpe_model_open(path, &m, &err), SIMDBPE_OK, "%s", err.message);
    simdbpe_model_free(m);
    tu_write(path, "{\"model\": 3", 11);
    cr_assert_neq(simdbpe_model_open(path, &m, &err), SIMDBPE_OK);
    cr_assert(strncmp(err.message, path, strlen(path)) == 0, "%s", err.message);
    free(text);
    json_decref(j);
    const char *names[] = {"vocab.json", "merges.txt", "tokenizer.json", "qwen-like.txt"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

Test(model_files, ids_past_two_to_the_twenty_go_through)
{
    /* Ids are 32-bit everywhere: a merge whose token has id 2^20 + 7 and
     * an added token at 2^22 (ids need not be dense; the added token is in
     * model.vocab, so HF keeps its id too). */
    json_t *j = small_json(MERGES, 4);
    json_t *vocab = json_object_get(json_object_get(j, "model"), "vocab");
    json_object_set_new(vocab, "hell", json_integer((1 << 20) + 7));
    json_object_set_new(vocab, "<big>", json_integer(1 << 22));
    json_array_append_new(json_object_get(j, "added_tokens"),
                          json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id", 1 << 22,
                                    "content", "<big>", "single_word", 0, "lstrip", 0,
                                    "rstrip", 0, "normalized", 0, "special", 0));
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(load_json(j, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_vocab_size(m), (1u << 22) + 1);
    /* "hello": hell (now 2^20 + 7), o; then the added token. */
    uint32_t want[] = {(1u << 20) + 7, byte_id('o'), 1u << 22};
    expect_encode(m, "hello<big>", SIMDBPE_SPECIAL_AS_TEXT, 0, want, 3);
    simdbpe_model_free(m);
    json_decref(j);
}

/* Added tokens get the ids HF tokenizers gives them, by content: the
 * vocabulary's id where it has the content, else the next id from the
 * number of vocabulary entries on; a stated id HF does not use is not
 * used (tests/data/hf/PROVENANCE.md has HF's figures for this file). And
 * the file of fuzz finding 10, as HF reads it. */
Test(model_files, added_tokens_get_hf_ids)
{
    size_t len;
    char *text = tu_read(SIMDBPE_SOURCE_DIR "/tests/data/hf/added_ids_by_content.json", &len);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_hf_json(text, len, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_vocab_size(m), 1048584);
    uint32_t id;
    const char *names[] = {"<s>", "<t>", "<big>", "zzz_big"};
    const uint32_t ids[] = {278, 279, 280, 1048583};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(simdbpe_model_special_id(m, names[i], strlen(names[i]), &id), SIMDBPE_OK,
                     "%s", names[i]);
        cr_assert_eq(id, ids[i], "%s: %u", names[i], id);
    }
    uint32_t want[] = {64, 278, 65, 279, 66, 280};
    expect_encode(m, "a<s>b<t>c<big>", SIMDBPE_SPECIAL_ALLOW, 0, want, 6);
    simdbpe_model_free(m);
    free(text);

    text = tu_read(SIMDBPE_SOURCE_DIR
                   "/tests/fuzz/corpus/hf_json/finding10_added_token_ids_hf_loads",
                   &len);
    cr_assert_eq(simdbpe_model_load_hf_json(text, len, &m, &err), SIMDBPE_OK, "%s", err.message);
    uint32_t want10[] = {64, 220, 277, 220, 65, 220, 276, 220, 66};
    expect_encode(m, "a <|im_start|> b <|endoftext|> c", SIMDBPE_SPECIAL_ALLOW, 0, want10, 9);
    simdbpe_model_free(m);
    free(text);
}

/* ---- a real tokenizer.json: Qwen3's, its vocabulary cut to the byte
 * tokens and the first 2,000 merges (tests/data/hf/PROVENANCE.md). The ids
 * below are HF tokenizers 0.23.2's for the same files and texts. */

static json_t *qwen3_small(void)
{
    json_error_t je;
    json_t *j = json_load_file(SIMDBPE_SOURCE_DIR "/tests/data/hf/qwen3_2k.json", 0, &je);
    cr_assert(j, "qwen3_2k.json: %s", je.text);
    return j;
}

static void add_token(json_t *j, const char *content, int normalized, int special)
{
    json_t *added = json_object_get(j, "added_tokens");
    json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id",
                                           (int)(2256 + json_array_size(added)), "content",
                                           content, "single_word", 0, "lstrip", 0, "rstrip", 0,
                                           "normalized", normalized, "special", special));
}

static simdbpe_model *load_ok(json_t *j)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(load_json(j, &m, &err), SIMDBPE_OK, "%s", err.message);
    return m;
}

static void expect_decode(simdbpe_model *m, const uint32_t *ids, size_t n, const char *want)
{
    uint8_t out[64];
    size_t len;
    simdbpe_error err;
    cr_assert_eq(simdbpe_decode(m, ids, n, out, sizeof out, &len, &err), SIMDBPE_OK, "%s",
                 err.message);
    cr_assert(len == strlen(want) && memcmp(out, want, len) == 0, "decoded \"%.*s\", not \"%s\"",
              (int)len, out, want);
}

/* A "normalized" added token of an NFC model is matched after NFC, by the
 * NFC of its content: the Angstrom sign U+212B is matched by U+00C5 and
 * by A + U+030A (it was never matched: "\u00c5X" gave 1683 227 48). A
 * new token is its normalized text, as in HF. */
Test(model_files, normalized_added_tokens_are_matched_after_nfc)
{
    json_t *j = qwen3_small();
    add_token(j, "\xE2\x84\xAB" "X", 1, 0); /* U+212B X: id 2282 */
    simdbpe_model *m = load_ok(j);
    uint32_t two[] = {2282, 220, 2282}, one[] = {2282}, bang[] = {2282, 0};
    expect_encode(m, "\xC3\x85X \xC3\x85X", SIMDBPE_SPECIAL_AS_TEXT, 0, two, 3);
    expect_encode(m, "\xE2\x84\xAB" "X", SIMDBPE_SPECIAL_AS_TEXT, 0, one, 1);
    expect_encode(m, "A\xCC\x8AX!", SIMDBPE_SPECIAL_AS_TEXT, 0, bang, 2);
    /* Its normalized text "\u00c5X" in byte-level characters: the bytes C5
     * 58 (HF decodes them lossily, "\ufffdX"). */
    uint32_t tok[] = {2282};
    expect_decode(m, tok, 1, "\xC5X");
    simdbpe_model_free(m);
    json_decref(j);

    /* Two contents with one NFC: HF matches either, at random (npm
     * tokenizers 0.23.2 gave 2282 or 2283 from run to run): refused. */
    j = qwen3_small();
    add_token(j, "\xE2\x84\xABQ", 1, 0);
    add_token(j, "\xC3\x85Q", 1, 1);
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED,
                   "added tokens \"\xE2\x84\xABQ\" and \"\xC3\x85Q\" are both matched by "
                   "\"\xC3\x85Q\" after the normalizer");
}

/* A normalizer chain (Strip, Lowercase) is applied to the whole text, so
 * "  HeLLo World \n" gives the ids of "hello world", and its texts are
 * never cut for threads (Strip works on the whole document). */
Test(model_files, a_normalizer_chain_applies_to_the_whole_text_which_is_never_cut)
{
    json_t *j = qwen3_small();
    json_object_set_new(j, "normalizer",
                        json_loads("{\"type\": \"Sequence\", \"normalizers\": [{\"type\": "
                                   "\"Strip\", \"strip_left\": true, \"strip_right\": true}, "
                                   "{\"type\": \"Lowercase\"}]}",
                                   0, NULL));
    simdbpe_model *m = load_ok(j);
    json_t *plain_json = qwen3_small();
    json_object_set_new(plain_json, "normalizer", json_null());
    simdbpe_model *plain = load_ok(plain_json);
    simdbpe_encoder *e = tu_encoder(plain);
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode(e, "hello world", 11, NULL, &ids, &n, &err), SIMDBPE_OK);
    uint32_t want[16];
    cr_assert(n <= 16);
    memcpy(want, ids, n * sizeof *ids);
    expect_encode(m, "  HeLLo World \n", SIMDBPE_SPECIAL_AS_TEXT, 0, want, n);
    char text[4001];
    for (size_t i = 0; i < 800; i++)
        memcpy(text + 5 * i, "word ", 5);
    text[4000] = '\0';
    cr_assert_neq(simdbpe_cut_find(plain, NULL, text, 4000, 1, 3999), SIMDBPE_NO_CUT);
    cr_assert_eq(simdbpe_cut_find(m, NULL, text, 4000, 1, 3999), SIMDBPE_NO_CUT);
    simdbpe_encoder_free(e);
    simdbpe_model_free(plain);
    simdbpe_model_free(m);
    json_decref(plain_json);
    json_decref(j);
}

/* A Replace regex that backtracks past Oniguruma's retry limit on a text
 * fails the encode, as HF's does, saying so. */
Test(model_files, a_replace_regex_that_gives_up_says_so)
{
    json_t *j = qwen3_small();
    json_object_set_new(j, "normalizer",
                        json_loads("{\"type\": \"Replace\", \"pattern\": {\"Regex\": "
                                   "\"(a+)+b\"}, \"content\": \"x\"}",
                                   0, NULL));
    simdbpe_model *m = load_ok(j);
    simdbpe_encoder *e = tu_encoder(m);
    char text[41];
    memset(text, 'a', 40);
    text[40] = '\0';
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode(e, text, 40, NULL, &ids, &n, &err), SIMDBPE_ERR_TOO_LARGE);
    cr_assert(strstr(err.message, "Replace regex gave up"), "%s", err.message);
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
    json_decref(j);
}

/* An added token whose content is a token of model.vocab keeps that
 * token's bytes: "\u00c5" is the byte token of 0xC5 (it was refused: "no
 * token for byte 0xC5"), and "\u0120the" the token " the", which BPE
 * makes too. Each is matched by its content and decodes to its bytes. */
Test(model_files, an_added_token_that_is_a_vocabulary_token_keeps_its_bytes)
{
    json_t *j = qwen3_small();
    add_token(j, "\xC3\x85", 0, 0);
    simdbpe_model *m = load_ok(j);
    uint32_t want[] = {87, 129, 88, 220, 129, 129};
    expect_encode(m, "x\xC3\x85y \xC3\x85\xC3\x85", SIMDBPE_SPECIAL_AS_TEXT, 0, want, 6);
    uint32_t byte[] = {129, 88};
    expect_decode(m, byte, 2, "\xC5y");
    simdbpe_model_free(m);
    json_decref(j);

    j = qwen3_small();
    add_token(j, "\xC4\xA0the", 0, 0);
    m = load_ok(j);
    uint32_t the[] = {263, 220, 279, 279};
    expect_encode(m, "on \xC4\xA0the the", SIMDBPE_SPECIAL_AS_TEXT, 0, the, 4);
    uint32_t t279[] = {279};
    expect_decode(m, t279, 1, " the");
    simdbpe_model_free(m);
    json_decref(j);
}

/* Without the token of a byte the message names the byte (it said "id
 * 2256 is given to more than one token": the added tokens' ids are
 * numbered from the vocabulary's size, one short). HF refuses the file
 * too ("Token `\u0120` out of vocabulary", from the merges). */
Test(model_files, a_missing_byte_token_is_named)
{
    json_t *j = qwen3_small();
    json_object_del(json_object_get(json_object_get(j, "model"), "vocab"), "\xC4\xA0");
    expect_refused(j, SIMDBPE_ERR_VOCAB,
                   "model.vocab has no token for byte 0x20 (its byte-level character is "
                   "\"\xC4\xA0\", U+0120)");
}

static json_t *roberta(json_int_t cls)
{
    return json_pack("{s:s, s:[s,i], s:[s,I], s:b, s:b}", "type", "RobertaProcessing", "sep",
                     "a", 64, "cls", "b", cls, "trim_offsets", 0, "add_prefix_space", 0);
}

/* A post-processor id that is no token id (RobertaProcessing's cls of
 * 2^32 + 7) is refused, as HF refuses it; it was taken modulo 2^32. */
Test(model_files, post_processor_ids_must_be_token_ids)
{
    json_t *j = qwen3_small();
    json_object_set_new(j, "post_processor", roberta(4294967303LL));
    expect_refused(j, SIMDBPE_ERR_VOCAB,
                   "post_processor RobertaProcessing: cls id 4294967303 is not a token id");
    j = qwen3_small();
    json_object_set_new(j, "post_processor", roberta(65));
    simdbpe_model *m = load_ok(j);
    uint32_t plain[] = {71, 72, 1052, 11, 498}, added[] = {65, 71, 72, 1052, 11, 498, 64};
    expect_encode(m, "hi there, you", SIMDBPE_SPECIAL_AS_TEXT, 0, plain, 5);
    expect_encode(m, "hi there, you", SIMDBPE_SPECIAL_AS_TEXT, 1, added, 7);
    simdbpe_model_free(m);
    json_decref(j);
    j = qwen3_small();
    json_object_set_new(j, "post_processor",
                        json_pack("{s:s, s:[s,i], s:[s,i]}", "type", "BertProcessing", "sep", "a",
                                  64, "cls", "b", 65));
    m = load_ok(j);
    expect_encode(m, "hi there, you", SIMDBPE_SPECIAL_AS_TEXT, 1, added, 7);
    simdbpe_model_free(m);
    json_decref(j);
}

static json_t *template_of(json_t *single)
{
    return json_pack("{s:s, s:o, s:[], s:{s:{s:s, s:[i,i,i], s:[s,s,s]}}}", "type",
                     "TemplateProcessing", "single", single, "pair", "special_tokens", "X", "id",
                     "X", "ids", 1, 2, 3, "tokens", "\"", "#", "$");
}

/* A Sequence of post-processors that add ids is refused (HF puts a later
 * one's ids around each part of the earlier one's output; 200
 * RobertaProcessing wrote past a 3-id array and crashed), and so is a
 * template whose single sequence is not there exactly once (HF repeats it
 * or drops it). */
Test(model_files, post_processor_sequences_that_add_ids_twice_are_refused)
{
    int counts[] = {2, 4, 200};
    for (int c = 0; c < 3; c++) {
        json_t *j = qwen3_small();
        json_t *list = json_array();
        for (int i = 0; i < counts[c]; i++)
            json_array_append_new(list, roberta(65));
        json_object_set_new(j, "post_processor",
                            json_pack("{s:s, s:o}", "type", "Sequence", "processors", list));
        expect_refused(j, SIMDBPE_ERR_UNSUPPORTED,
                       "a post_processor Sequence of more than one processor that adds ids");
    }
    json_t *j = qwen3_small();
    json_object_set_new(
        j, "post_processor",
        json_pack("{s:s, s:[o, o]}", "type", "Sequence", "processors",
                  template_of(json_pack("[{s:{s:s,s:i}}, {s:{s:s,s:i}}]", "SpecialToken", "id",
                                        "X", "type_id", 0, "Sequence", "id", "A", "type_id", 0)),
                  roberta(65)));
    expect_refused(j, SIMDBPE_ERR_UNSUPPORTED,
                   "(here RobertaProcessing after another) is not supported");
    const char *singles[] = {"[{\"SpecialToken\":{\"id\":\"X\",\"type_id\":0}},"
                             "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},"
                             "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}]",
                             "[{\"SpecialToken\":{\"id\":\"X\",\"type_id\":0}}]",
                             "[{\"Sequence\":{\"id\":\"B\",\"type_id\":0}}]"};
    for (int i = 0; i < 3; i++) {
        j = qwen3_small();
        json_object_set_new(j, "post_processor", template_of(json_loads(singles[i], 0, NULL)));
        expect_refused(j, SIMDBPE_ERR_UNSUPPORTED,
                       "the single template must hold the sequence A exactly once");
    }
    /* A ByteLevel one beside the template changes nothing. */
    j = qwen3_small();
    json_object_set_new(
        j, "post_processor",
        json_pack("{s:s, s:[{s:s}, o]}", "type", "Sequence", "processors", "type", "ByteLevel",
                  template_of(json_pack("[{s:{s:s,s:i}}, {s:{s:s,s:i}}]", "SpecialToken", "id",
                                        "X", "type_id", 0, "Sequence", "id", "A", "type_id", 0))));
    simdbpe_model *m = load_ok(j);
    uint32_t want[] = {1, 2, 3, 71, 72};
    expect_encode(m, "hi", SIMDBPE_SPECIAL_AS_TEXT, 1, want, 5);
    simdbpe_model_free(m);
    json_decref(j);
}

/* "truncation" and "padding" are settings of HF's encode calls: the model
 * loads, encodes the whole text unpadded, and says so once
 * (simdbpe_model_notice); a file without them has nothing to say. */
Test(model_files, truncation_and_padding_are_said_not_applied)
{
    json_t *j = qwen3_small();
    simdbpe_model *m = load_ok(j);
    cr_assert_str_eq(simdbpe_model_notice(m), "");
    simdbpe_model_free(m);
    json_object_set_new(j, "truncation",
                        json_pack("{s:s, s:i, s:s, s:i}", "direction", "Right", "max_length", 3,
                                  "strategy", "LongestFirst", "stride", 0));
    json_object_set_new(j, "padding", json_pack("{s:{s:i}}", "strategy", "Fixed", 8));
    m = load_ok(j);
    const char *note = simdbpe_model_notice(m);
    cr_assert(strstr(note, "truncation and padding are not applied"), "notice: %s", note);
    uint32_t whole[] = {71, 72, 1052, 11, 498};
    expect_encode(m, "hi there, you", SIMDBPE_SPECIAL_AS_TEXT, 0, whole, 5);
    simdbpe_model_free(m);
    json_object_set_new(j, "padding", json_null());
    m = load_ok(j);
    cr_assert(strstr(simdbpe_model_notice(m), "its truncation is not applied"), "%s",
              simdbpe_model_notice(m));
    simdbpe_model_free(m);
    json_decref(j);
}
