/*
 * test_offsets.c - the calls under simdbpe's HF-shaped Python API, from C:
 * simdbpe_encode_offsets (spans and pieces), simdbpe_model_add_tokens,
 * simdbpe_model_special_flags, simdbpe_model_load_buffer and
 * simdbpe_model_load_tiktoken_with.
 *
 * Expected values are HF tokenizers 0.23.2's and tiktoken's (npm tiktoken
 * 1.0.22), recorded in tests/data/api by tests/gen/api_golden.mjs: the
 * offsets there are in characters (HF's Python and Node APIs), turned into
 * bytes here; for SentencePiece-style models, in tests/data/hf by
 * tests/gen/sp_offsets.mjs.
 */
#include <criterion/criterion.h>

#include <unistd.h>

#include "simdbpe_dataset.h"
#include "test_util.h"

#define API_DIR SIMDBPE_TEST_DATA_DIR "/api"

/* A gzip'd file's contents (the library's reader decompresses it). */
static char *read_gz(const char *path, size_t *len)
{
    simdbpe_dataset_input *in;
    simdbpe_error err;
    cr_assert_eq(simdbpe_dataset_input_open(path, &in, &err), SIMDBPE_OK, "%s", err.message);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
        cr_assert(buf);
        long got = simdbpe_dataset_input_read(in, buf + n, cap - n, &err);
        cr_assert(got >= 0, "%s", err.message);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    simdbpe_dataset_input_close(in);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static json_t *golden(const char *name)
{
    size_t len;
    char *data = read_gz(name, &len);
    json_error_t jerr;
    json_t *root = json_loadb(data, len, JSON_ALLOW_NUL, &jerr);
    cr_assert(root, "%s: %s", name, jerr.text);
    free(data);
    return root;
}

static simdbpe_model *small_model(void)
{
    size_t len;
    char *json = read_gz(API_DIR "/hf_small.tokenizer.json.gz", &len);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_buffer(json, len, "hf_small.tokenizer.json", &m, &err),
                 SIMDBPE_OK, "%s", err.message);
    free(json);
    return m;
}

/* The byte offset of character k of UTF-8 text s. */
static size_t byte_of_char(const char *s, size_t len, size_t k)
{
    size_t i = 0;
    for (size_t c = 0; i < len; i++) {
        if (((uint8_t)s[i] & 0xC0) != 0x80) {
            if (c == k)
                return i;
            c++;
        }
    }
    return len;
}

/* Checks encode_offsets of `text` against HF's record (ids, offsets,
 * word_ids) under the ALLOW policy (HF recognises special tokens). */
static void check_record(simdbpe_encoder *enc, const json_t *jtext, const json_t *want, int add)
{
    simdbpe_encode_options o = SIMDBPE_ENCODE_OPTIONS_INIT;
    o.special = SIMDBPE_SPECIAL_ALLOW;
    o.add_special_tokens = add;
    const char *text = json_string_value(jtext);
    size_t len = json_string_length(jtext), n;
    const uint32_t *ids;
    simdbpe_span *spans;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode_offsets(enc, text, len, &o, &ids, &spans, &n, &err), SIMDBPE_OK,
                 "%s", err.message);
    const json_t *wids = json_object_get(want, "ids"), *woff = json_object_get(want, "offsets"),
                 *wwords = json_object_get(want, "word_ids");
    cr_assert_eq(n, json_array_size(wids), "%s: %zu ids", text, n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(ids[i], json_integer_value(json_array_get(wids, i)), "%s: id %zu", text, i);
        const json_t *o2 = json_array_get(woff, i);
        size_t a = (size_t)json_integer_value(json_array_get(o2, 0));
        size_t b = (size_t)json_integer_value(json_array_get(o2, 1));
        int affix = json_is_null(json_array_get(wwords, i));
        if (affix) {
            cr_assert(spans[i].start == 0 && spans[i].end == 0, "%s: token %zu", text, i);
            cr_assert_eq(spans[i].piece, SIMDBPE_NO_PIECE);
            continue;
        }
        cr_assert_eq(spans[i].start, byte_of_char(text, len, a), "%s: token %zu start", text, i);
        cr_assert_eq(spans[i].end, byte_of_char(text, len, b), "%s: token %zu end", text, i);
        cr_assert_eq(spans[i].piece, (size_t)json_integer_value(json_array_get(wwords, i)),
                     "%s: token %zu piece", text, i);
    }
    free(spans);
}

Test(offsets, spans_and_pieces_are_hfs)
{
    json_t *g = golden(API_DIR "/hf_small.json.gz");
    simdbpe_model *m = small_model();
    simdbpe_encoder *enc = tu_encoder(m);
    const json_t *recs = json_object_get(json_object_get(g, "answers"), "encode");
    cr_assert(json_array_size(recs) > 30);
    size_t i;
    const json_t *r;
    json_array_foreach(recs, i, r)
    {
        const json_t *text = json_object_get(r, "text");
        check_record(enc, text, json_object_get(r, "with_special"), 1);
        check_record(enc, text, json_object_get(r, "plain"), 0);
    }
    simdbpe_encoder_free(enc);
    simdbpe_model_free(m);
    json_decref(g);
}

Test(offsets, tokens_inside_a_character_take_the_whole_character)
{
    simdbpe_model *m = tu_gpt2();
    simdbpe_encoder *enc = tu_encoder(m);
    const char text[] = "a\xF0\x9F\x98\x80"; /* a + U+1F600: 'a' then two tokens for the emoji */
    const uint32_t *ids;
    simdbpe_span *spans;
    size_t n;
    cr_assert_eq(simdbpe_encode_offsets(enc, text, 5, NULL, &ids, &spans, &n, NULL), SIMDBPE_OK);
    cr_assert_eq(n, 3);
    cr_assert(spans[0].start == 0 && spans[0].end == 1);
    for (int k = 1; k < 3; k++)
        cr_assert(spans[k].start == 1 && spans[k].end == 5, "token %d", k);
    free(spans);
    /* replace mode: the U+FFFD of an ill-formed sequence spans it */
    const char bad[] = "ab\xFF" "c";
    simdbpe_encode_options o = SIMDBPE_ENCODE_OPTIONS_INIT;
    o.errors = SIMDBPE_UTF8_REPLACE;
    cr_assert_eq(simdbpe_encode_offsets(enc, bad, 4, &o, &ids, &spans, &n, NULL), SIMDBPE_OK);
    size_t fffd = SIZE_MAX;
    for (size_t k = 0; k < n; k++)
        if (spans[k].start == 2)
            fffd = k;
    cr_assert(fffd != SIZE_MAX && spans[fffd].end == 3 && spans[n - 1].start == 3 &&
              spans[n - 1].end == 4);
    free(spans);
    /* strict mode fails as simdbpe_encode does, and gives no spans */
    simdbpe_error err;
    spans = (simdbpe_span *)&o;
    cr_assert_eq(simdbpe_encode_offsets(enc, bad, 4, NULL, &ids, &spans, &n, &err),
                 SIMDBPE_ERR_INVALID_UTF8);
    cr_assert(spans == NULL && err.byte_offset == 2);
    simdbpe_encoder_free(enc);
    simdbpe_model_free(m);
}

Test(offsets, added_tokens_at_run_time_are_hfs)
{
    json_t *g = golden(API_DIR "/hf_small.json.gz");
    const json_t *want = json_object_get(json_object_get(g, "answers"), "added");
    simdbpe_model *m = small_model(), *m2, *m3;
    simdbpe_added_token plain[8], special[4];
    size_t n = 0, k;
    const json_t *t;
    json_array_foreach(json_object_get(want, "add_tokens"), k, t)
    {
        plain[n++] = (simdbpe_added_token){json_string_value(t), json_string_length(t),
                                           SIMDBPE_ADDED_NORMALIZED};
    }
    size_t count, ns = 0;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_add_tokens(m, plain, n, &m2, &count, &err), SIMDBPE_OK, "%s",
                 err.message);
    cr_assert_eq(count, (size_t)json_integer_value(json_object_get(want, "count")));
    json_array_foreach(json_object_get(want, "add_special_tokens"), k, t)
    {
        special[ns++] = (simdbpe_added_token){json_string_value(t), json_string_length(t),
                                              SIMDBPE_ADDED_SPECIAL};
    }
    cr_assert_eq(simdbpe_model_add_tokens(m2, special, ns, &m3, NULL, &err), SIMDBPE_OK, "%s",
                 err.message);
    json_array_foreach(json_object_get(want, "ids"), k, t)
    {
        const char *text = json_string_value(json_array_get(t, 0));
        uint32_t id = (uint32_t)json_integer_value(json_array_get(t, 1));
        int found = 0;
        for (size_t i = 0; i < simdbpe_model_special_count(m3); i++) {
            uint32_t sid;
            const char *s;
            size_t len;
            simdbpe_model_special_at(m3, i, &sid, &s, &len);
            if (len == strlen(text) && memcmp(s, text, len) == 0) {
                cr_assert_eq(sid, id, "%s", text);
                found = 1;
            }
        }
        cr_assert(found, "%s is an added token", text);
    }
    simdbpe_encoder *enc = tu_encoder(m3);
    json_array_foreach(json_object_get(want, "encodings"), k, t)
    {
        check_record(enc, json_object_get(t, "text"), json_object_get(t, "enc"), 1);
    }
    simdbpe_encoder_free(enc);
    /* the model given is as it was */
    cr_assert_eq(simdbpe_model_special_count(m), 4);
    simdbpe_model_free(m3);
    simdbpe_model_free(m2);
    simdbpe_model_free(m);
    json_decref(g);
}

Test(offsets, added_token_flags)
{
    simdbpe_model *m = small_model();
    cr_assert_eq(simdbpe_model_special_count(m), 4);
    for (size_t i = 0; i < 4; i++) {
        uint32_t id;
        const char *s;
        size_t len;
        simdbpe_model_special_at(m, i, &id, &s, &len);
        unsigned f = simdbpe_model_special_flags(m, i);
        if (len == 3 && !memcmp(s, "<s>", 3))
            cr_assert_eq(f, SIMDBPE_ADDED_SPECIAL);
        else if (len == 4 && !memcmp(s, "tool", 4))
            cr_assert_eq(f, SIMDBPE_ADDED_NORMALIZED);
        else if (len == 6 && !memcmp(s, "<tool>", 6))
            cr_assert_eq(f, 0);
    }
    cr_assert_eq(simdbpe_model_special_flags(m, 4), 0);
    simdbpe_model_free(m);
    /* vocab.json's special token is also in the vocabulary */
    simdbpe_model *g2 = tu_gpt2();
    cr_assert_eq(simdbpe_model_special_flags(g2, 0), SIMDBPE_ADDED_SPECIAL | SIMDBPE_ADDED_IN_VOCAB);
    simdbpe_model_free(g2);
}

Test(offsets, a_rank_file_with_a_pat_str_and_special_tokens)
{
    json_t *g = golden(API_DIR "/tiktoken.json.gz");
    const json_t *chat = json_object_get(json_object_get(g, "answers"), "chat");
    size_t len;
    char *ranks = tu_read(SIMDBPE_SOURCE_DIR "/src/model/tiktoken/cl100k_base.tiktoken", &len);
    const char *texts[16];
    uint32_t ids[16];
    size_t n = 0;
    const char *key;
    const json_t *v;
    json_object_foreach(json_object_get(chat, "special_tokens"), key, v)
    {
        texts[n] = key;
        ids[n++] = (uint32_t)json_integer_value(v);
    }
    simdbpe_tiktoken_options o = SIMDBPE_TIKTOKEN_OPTIONS_INIT;
    o.pat_str = json_string_value(json_object_get(chat, "pat_str"));
    o.special_texts = texts;
    o.special_ids = ids;
    o.n_specials = n;
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_tiktoken_with(ranks, len, &o, &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    simdbpe_encoder *enc = tu_encoder(m);
    simdbpe_encode_options allow = SIMDBPE_ENCODE_OPTIONS_INIT;
    allow.special = SIMDBPE_SPECIAL_ALLOW;
    size_t k;
    const json_t *r;
    json_array_foreach(json_object_get(chat, "records"), k, r)
    {
        const char *text = json_string_value(json_object_get(r, "text"));
        const uint32_t *got;
        size_t ng;
        cr_assert_eq(simdbpe_encode(enc, text, strlen(text), &allow, &got, &ng, NULL), SIMDBPE_OK);
        const json_t *want = json_object_get(r, "all");
        cr_assert_eq(ng, json_array_size(want), "%s", text);
        for (size_t i = 0; i < ng; i++)
            cr_assert_eq(got[i], json_integer_value(json_array_get(want, i)), "%s", text);
    }
    simdbpe_encoder_free(enc);
    simdbpe_model_free(m);
    /* a pattern no family has: refused, quoted */
    o.pat_str = "\\w+|\\s+";
    cr_assert_eq(simdbpe_model_load_tiktoken_with(ranks, len, &o, &m, &err),
                 SIMDBPE_ERR_UNSUPPORTED);
    cr_assert(strstr(err.message, "\"\\\\w+|\\\\s+\"") && m == NULL, "%s", err.message);
    free(ranks);
    json_decref(g);
}

Test(offsets, load_buffer_reads_each_kind)
{
    simdbpe_model *gpt2 = tu_gpt2(), *m;
    size_t n = simdbpe_model_compiled_size(gpt2), got;
    char *image = malloc(n);
    cr_assert_eq(simdbpe_model_compile(gpt2, image, n, &got, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_model_load_buffer(image, got, NULL, &m, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_model_vocab_size(m), 50257);
    simdbpe_model_free(m);
    free(image);
    size_t len;
    char *ranks = tu_read(SIMDBPE_SOURCE_DIR "/src/model/tiktoken/p50k_base.tiktoken", &len);
    cr_assert_eq(simdbpe_model_load_buffer(ranks, len, NULL, &m, NULL), SIMDBPE_OK);
    simdbpe_model_free(m);
    free(ranks);
    simdbpe_error err;
    cr_assert_neq(simdbpe_model_load_buffer("{\"model\": 1}", 12, "x.json", &m, &err),
                  SIMDBPE_OK);
    cr_assert(!strncmp(err.message, "x.json: ", 8), "%s", err.message);
    cr_assert_eq(simdbpe_model_load_buffer("plain text", 10, "notes.txt", &m, &err),
                 SIMDBPE_ERR_UNSUPPORTED);
    cr_assert(strstr(err.message, "notes.txt: not a tokenizer.json"), "%s", err.message);
    simdbpe_model_free(gpt2);
}

Test(offsets, the_models_end_of_text)
{
    uint32_t id;
    simdbpe_model *m = tu_gpt2();
    cr_assert_eq(simdbpe_model_eot(m, &id), SIMDBPE_OK);
    cr_assert_eq(id, 50256); /* <|endoftext|> */
    simdbpe_model_free(m);
    m = small_model(); /* no <|endoftext|> added token; its template ends with </s> */
    cr_assert_eq(simdbpe_model_eot(m, &id), SIMDBPE_OK);
    cr_assert_eq(id, 10430);
    simdbpe_model_free(m);
}

/* ---- SentencePiece-style models and normalizer chains: HF's answers in
 * hf/sp_offsets.json.gz (tests/gen/sp_offsets.mjs): sp_small and its
 * variants, written there whole; the small byte-level model of api/ under
 * other normalizers; mistral_v1 and gemma3 named, read from the shared
 * models. */

static const json_t *sp_answers(const json_t *g, const char *name)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(g, "models"), i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
            return m;
    }
    cr_assert_fail("%s: no answers recorded", name);
    return NULL;
}

static void check_sp_model(const json_t *answers, const char *json, size_t len)
{
    const char *name = json_string_value(json_object_get(answers, "name"));
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_buffer(json, len, "tokenizer.json", &m, &err), SIMDBPE_OK,
                 "%s: %s", name, err.message);
    simdbpe_encoder *enc = tu_encoder(m);
    const json_t *recs = json_object_get(answers, "records");
    cr_assert(json_array_size(recs) > 300, "%s", name);
    size_t i;
    const json_t *r;
    json_array_foreach(recs, i, r)
    {
        check_record(enc, json_object_get(r, "text"), r, 0);
    }
    simdbpe_encoder_free(enc);
    const json_t *added = json_object_get(answers, "added");
    if (added) { /* tokens added at run time, as HF's addTokens and addSpecialTokens */
        simdbpe_added_token add[16];
        size_t n = 0;
        const json_t *t;
        json_array_foreach(json_object_get(added, "tokens"), i, t)
        {
            add[n++] = (simdbpe_added_token){json_string_value(t), json_string_length(t),
                                             SIMDBPE_ADDED_NORMALIZED};
        }
        json_array_foreach(json_object_get(added, "special_tokens"), i, t)
        {
            add[n++] = (simdbpe_added_token){json_string_value(t), json_string_length(t),
                                             SIMDBPE_ADDED_SPECIAL};
        }
        simdbpe_model *m2;
        cr_assert_eq(simdbpe_model_add_tokens(m, add, n, &m2, NULL, &err), SIMDBPE_OK, "%s: %s",
                     name, err.message);
        enc = tu_encoder(m2);
        json_array_foreach(json_object_get(added, "encodings"), i, r)
        {
            check_record(enc, json_object_get(r, "text"), r, 1);
        }
        simdbpe_encoder_free(enc);
        simdbpe_model_free(m2);
    }
    simdbpe_model_free(m);
}

/* Every model written whole in the answers, or as a file of tests/data
 * with another normalizer: the SentencePiece-style sp_small and its
 * variants, byte-level BPE under normalizer chains. */
Test(offsets, sentencepiece_and_normalizer_chain_spans_are_hfs)
{
    json_t *g = golden(SIMDBPE_TEST_DATA_DIR "/hf/sp_offsets.json.gz");
    size_t i, n = 0;
    const json_t *a;
    json_array_foreach(json_object_get(g, "models"), i, a)
    {
        const json_t *t = json_object_get(a, "tokenizer"), *base = json_object_get(a, "base");
        if (t) {
            check_sp_model(a, json_string_value(t), json_string_length(t));
        } else if (base) {
            char path[512];
            snprintf(path, sizeof path, SIMDBPE_TEST_DATA_DIR "/%s", json_string_value(base));
            json_t *j = golden(path);
            json_object_set(j, "normalizer", json_object_get(a, "normalizer"));
            char *text = json_dumps(j, 0);
            check_sp_model(a, text, strlen(text));
            free(text);
            json_decref(j);
        } else {
            continue; /* a shared model: below */
        }
        n++;
    }
    cr_assert_geq(n, 13);
    json_decref(g);
}

/* A shared model's answers, when $SIMDBPE_CORPUS_DIR/models (or
 * <project>/../shared/models) has it; skipped, saying so, when not. */
static void check_shared_sp_model(const char *name)
{
    const char *env = getenv("SIMDBPE_CORPUS_DIR");
    char path[1200];
    snprintf(path, sizeof path, "%s/models/%s/tokenizer.json.zst",
             env && *env ? env : SIMDBPE_SOURCE_DIR "/../shared", name);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "SIMDBPE SHARED MODEL SKIPPED: %s not found (set SIMDBPE_CORPUS_DIR to "
                        "a folder with models/)\n", path);
        cr_skip_test("%s not available", path);
    }
    size_t len;
    char *json = read_gz(path, &len); /* the reader decompresses zstd too */
    json_t *g = golden(SIMDBPE_TEST_DATA_DIR "/hf/sp_offsets.json.gz");
    check_sp_model(sp_answers(g, name), json, len);
    free(json);
    json_decref(g);
}

Test(offsets, sentencepiece_spans_of_mistral_v1_are_hfs) { check_shared_sp_model("mistral_v1"); }
Test(offsets, sentencepiece_spans_of_gemma3_are_hfs) { check_shared_sp_model("gemma3"); }

/* sp_small without the token <0xF0> (renamed "<0xF0>x"): a character with
 * that byte is unknown. HF tokenizers 0.23.2 gives (npm tokenizers,
 * encode(text, null, {addSpecialTokens: false})): "\U0001F600\U0001F600 x"
 * -> [0,1] [0,2] [2,3] [3,4] ("\u2581", "<unk>", "\u2581", "x"), and
 * "\U0001F600\u00e9" -> [0,1] [0,1] [1,2]. Where HF writes the unknown
 * token after the byte tokens of a later character ("a\U0001F600b" ->
 * "\u2581a", "<0x62>", "<unk>"), the tokens are out of the text's order:
 * refused, not given spans HF would not give. */
Test(offsets, sentencepiece_unknown_characters_without_their_byte_tokens)
{
    size_t len;
    char *text = tu_read(SIMDBPE_TEST_DATA_DIR "/hf/sp_small.tokenizer.json", &len);
    json_error_t jerr;
    json_t *j = json_loadb(text, len, 0, &jerr);
    cr_assert(j, "%s", jerr.text);
    free(text);
    json_t *vocab = json_object_get(json_object_get(j, "model"), "vocab");
    json_object_set(vocab, "<0xF0>x", json_object_get(vocab, "<0xF0>"));
    json_object_del(vocab, "<0xF0>");
    text = json_dumps(j, 0);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_buffer(text, strlen(text), "tokenizer.json", &m, &err),
                 SIMDBPE_OK, "%s", err.message);
    simdbpe_encoder *enc = tu_encoder(m);
    static const struct {
        const char *text;
        size_t n, spans[4][2]; /* bytes */
    } cases[] = {
        {"\xF0\x9F\x98\x80\xF0\x9F\x98\x80 x", 4, {{0, 4}, {0, 8}, {8, 9}, {9, 10}}},
        {"\xF0\x9F\x98\x80\xC3\xA9", 3, {{0, 4}, {0, 4}, {4, 6}}},
    };
    for (size_t c = 0; c < 2; c++) {
        const uint32_t *ids;
        simdbpe_span *spans;
        size_t n;
        cr_assert_eq(simdbpe_encode_offsets(enc, cases[c].text, strlen(cases[c].text), NULL, &ids,
                                            &spans, &n, &err),
                     SIMDBPE_OK, "%s", err.message);
        cr_assert_eq(n, cases[c].n);
        for (size_t i = 0; i < n; i++)
            cr_assert(spans[i].start == cases[c].spans[i][0] &&
                          spans[i].end == cases[c].spans[i][1],
                      "case %zu token %zu: [%zu, %zu)", c, i, spans[i].start, spans[i].end);
        free(spans);
    }
    const uint32_t *ids;
    simdbpe_span *spans;
    size_t n;
    cr_assert_eq(simdbpe_encode_offsets(enc, "a\xF0\x9F\x98\x80" "b", 6, NULL, &ids, &spans, &n,
                                        &err),
                 SIMDBPE_ERR_UNSUPPORTED);
    simdbpe_encoder_free(enc);
    simdbpe_model_free(m);
    free(text);
    json_decref(j);
}
