/*
 * fuzz_hf_added.c - property: a real tokenizer.json whose added tokens,
 * normalizer and post-processor are mutated either is refused with a
 * message, or encodes every text to the ids HF tokenizers gives.
 *
 * The file is Qwen3's, its vocabulary cut to the byte tokens and the first
 * 400 merges' (tests/data/hf/qwen3_2k.json, cut further here: loading the
 * file is most of an input's time). Each input builds, from fragments, up to
 * five added tokens (content, special, normalized; now and then lstrip), a
 * normalizer (NFC or none), a post-processor (null, ByteLevel,
 * TemplateProcessing, RobertaProcessing, BertProcessing, an unknown type,
 * or a Sequence of them, nested) and a text; the library loads the file
 * and encodes the text with special tokens allowed and as text, with and
 * without the post-processor's ids.
 *
 * The ids are compared with a reference written here, the slow and plain
 * reading of HF tokenizers 0.23's semantics (src/added_vocabulary.rs,
 * processors/): added tokens get the id model.vocab gives their content,
 * else the next one from its size on, a content listed again being the
 * same token; the text is cut at the non-normalized tokens' contents, then
 * each stretch left is normalized (utf8proc's NFC, called here, on the
 * whole stretch) and cut at the normalized ones' normalized contents, each
 * time at the leftmost place a token begins, the longest there; the
 * stretches left are encoded by the model without
 * added tokens (the other targets and the golden tests vouch for that
 * part). Special tokens "as text" are not matched at all. The
 * post-processor's ids come from its JSON: a template's items in order
 * (the sequence wherever and as often as it appears), cls and sep for
 * RobertaProcessing and BertProcessing, ByteLevel nothing, and a Sequence
 * the one of them that adds ids; without them (add_special_tokens false) a
 * template still gives the sequence as often as it holds it, so none for
 * a template without it. What HF does that the reference does not
 * follow (two processors that add ids, a template naming B or a missing
 * special token, ids past 32 bits, an unknown type, lstrip, two normalized
 * tokens with one normalized text, of which HF matches either at random)
 * must be refused by the library: accepting such a file is a failure.
 *
 * The reference was checked against HF tokenizers itself on every input of
 * the corpus (ctest hf_added_tokens: FUZZ_HF_ADDED_DUMP=DIR makes the
 * replay write each input's file, text and expected ids into DIR, and
 * tests/hf/added_tokens.mjs compares them with the npm package's).
 */
#include <jansson.h>
#include <utf8proc.h>

#include "fuzz.h"

#define MERGES 400
#define BASE_SIZE (256 + MERGES) /* model.vocab's entries: ids 0 .. BASE_SIZE - 1 */
#define MAX_ADDED 5   /* made by an input, after Qwen3's 26 if it keeps them */
#define MAX_REF_TOKENS 32
#define MAX_TEXT 512
#define MAX_IDS 1024

/* Text made of these: letters and words of the vocabulary, the byte-level
 * character of a space, both spellings of A-ring and of Omega, combining
 * marks, spaces, digits, CJK and added tokens' texts. All are assigned in
 * Unicode 9.0, whose NFC HF applies, so utf8proc's NFC is HF's here. */
static const char *const fragments[] = {
    "a", "b", "X", "Q", " ", "  ", "\n", "hi", "the", "\xC4\xA0", "\xC3\x85", "\xE2\x84\xAB",
    "A", "\xCC\x8A", "e", "\xCC\x81", "\xC3\xA9", "<|", "|>", "<|endoftext|>", "<think>", "1",
    "23", "\xE4\xB8\xAD", "\xE2\x84\xA6", "\xCE\xA9", "\xEF\xAC\x81", "\xC4\xA0the", "!", "on",
};
#define N_FRAGMENTS (sizeof fragments / sizeof fragments[0])

/* Ids a post-processor may name: tokens, added ids, past the vocabulary,
 * past 2^24 (the library's limit), past 32 bits, negative. */
static const json_int_t pp_ids[] = {1,  64, 65, 129, BASE_SIZE, BASE_SIZE + 1, BASE_SIZE + 5,
                                    BASE_SIZE + 44, 16777216, 4294967295LL, 4294967303LL, -1};
#define N_PP_IDS (sizeof pp_ids / sizeof pp_ids[0])

/* ------------------------------------------------------------- the input */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned next(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

/* `count` fragments into out (cap bytes); returns the length. */
static size_t build_text(reader *r, size_t count, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < count; i++) {
        const char *f = fragments[next(r) % N_FRAGMENTS];
        size_t fl = strlen(f);
        if (len + fl + 1 > cap)
            break;
        memcpy(out + len, f, fl + 1);
        len += fl;
    }
    return len;
}

static json_t *pp_id(reader *r)
{
    return json_integer(pp_ids[next(r) % N_PP_IDS]);
}

/* A post-processor from the input (depth: how many Sequences deep). */
static json_t *build_pp(reader *r, int depth)
{
    unsigned kind = next(r) % (depth < 2 ? 8 : 7);
    switch (kind) {
    case 0:
        return json_null();
    case 1:
        return json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 0,
                         "trim_offsets", 0, "use_regex", 0);
    case 2:
    case 3: {
        /* single: up to 4 items, each a special token X/Y/Z (Z is not in
         * special_tokens) or the sequence A (or, rarely, B). */
        json_t *single = json_array();
        unsigned items = 1 + next(r) % 4;
        for (unsigned i = 0; i < items; i++) {
            unsigned what = next(r) % 8;
            if (what < 3)
                json_array_append_new(single, json_pack("{s:{s:s, s:i}}", "Sequence", "id",
                                                        what == 2 && next(r) % 4 == 0 ? "B" : "A",
                                                        "type_id", 0));
            else
                json_array_append_new(single,
                                      json_pack("{s:{s:s, s:i}}", "SpecialToken", "id",
                                                what < 6 ? "X" : what < 7 ? "Y" : "Z",
                                                "type_id", 0));
        }
        json_t *x_ids = json_array();
        unsigned nx = next(r) % 3;
        for (unsigned i = 0; i < nx; i++)
            json_array_append_new(x_ids, pp_id(r));
        json_t *x_tokens = json_array();
        for (unsigned i = 0; i < nx; i++)
            json_array_append_new(x_tokens, json_string("x"));
        return json_pack("{s:s, s:o, s:[{s:{s:s,s:i}}, {s:{s:s,s:i}}], s:{s:{s:s, s:o, s:o}, "
                         "s:{s:s, s:[o], s:[s]}}}",
                         "type", "TemplateProcessing", "single", single, "pair", "Sequence",
                         "id", "A", "type_id", 0, "Sequence", "id", "B", "type_id", 1,
                         "special_tokens", "X", "id", "X", "ids", x_ids, "tokens", x_tokens, "Y",
                         "id", "Y", "ids", pp_id(r), "tokens", "y");
    }
    case 4:
    case 5:
        return json_pack("{s:s, s:[s, o], s:[s, o], s:b, s:b}", "type",
                         kind == 4 ? "RobertaProcessing" : "BertProcessing", "sep", "s", pp_id(r),
                         "cls", "c", pp_id(r), "trim_offsets", 0, "add_prefix_space", 0);
    case 6:
        return json_pack("{s:s}", "type", "Shuffle");
    default: {
        json_t *list = json_array();
        unsigned k = next(r) % 4;
        for (unsigned i = 0; i < k; i++)
            json_array_append_new(list, build_pp(r, depth + 1));
        return json_pack("{s:s, s:o}", "type", "Sequence", "processors", list);
    }
    }
}

/* ------------------------------------------------------------- reference */

typedef struct ref_token {
    char content[64];
    char match[64]; /* what it is matched by */
    size_t match_len;
    uint32_t id;
    int special, normalized;
} ref_token;

typedef struct ref {
    ref_token tok[MAX_REF_TOKENS];
    size_t n;
    int nfc;
    /* post-processor: ids before and after the sequence, how many times
     * the sequence appears (0, 1, 2...), and whether HF's behaviour is one
     * the reference follows */
    json_int_t pre[16], post[16];
    size_t n_pre, n_post, copies;
    int adders, unmodelled;
} ref;

/* utf8proc's NFC of s[0..n), into out (cap bytes); returns its length. */
FUZZ_NO_COVERAGE static size_t ref_nfc(const char *s, size_t n, char *out, size_t cap)
{
    if (n == 0)
        return 0;
    utf8proc_uint8_t *norm = NULL;
    utf8proc_ssize_t got = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &norm,
                                        UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    FUZZ_CHECK(got >= 0 && (size_t)got < cap, "utf8proc_map: %zd", (ssize_t)got);
    memcpy(out, norm, (size_t)got);
    free(norm);
    return (size_t)got;
}

FUZZ_NO_COVERAGE static int valid_u32(const json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0 &&
           json_integer_value(v) <= 4294967295LL;
}

/* What HF's post-processor `pp` puts around a single sequence. */
FUZZ_NO_COVERAGE static void ref_pp(ref *rf, const json_t *pp)
{
    if (!pp || json_is_null(pp))
        return;
    const char *t = json_string_value(json_object_get(pp, "type"));
    t = t ? t : "";
    if (!strcmp(t, "ByteLevel"))
        return;
    if (!strcmp(t, "Sequence")) {
        size_t i;
        const json_t *p;
        json_array_foreach(json_object_get(pp, "processors"), i, p)
        {
            if (json_is_null(p))
                rf->unmodelled = 1; /* HF refuses the file */
            ref_pp(rf, p);
        }
        return;
    }
    if (++rf->adders > 1)
        rf->unmodelled = 1; /* a later one wraps each part of the earlier one's output */
    if (!strcmp(t, "RobertaProcessing") || !strcmp(t, "BertProcessing")) {
        const json_t *cls = json_array_get(json_object_get(pp, "cls"), 1);
        const json_t *sep = json_array_get(json_object_get(pp, "sep"), 1);
        if (!valid_u32(cls) || !valid_u32(sep)) {
            rf->unmodelled = 1; /* HF refuses the file */
            return;
        }
        rf->pre[rf->n_pre++] = json_integer_value(cls);
        rf->post[rf->n_post++] = json_integer_value(sep);
        rf->copies = 1;
        return;
    }
    if (strcmp(t, "TemplateProcessing") != 0) {
        rf->unmodelled = 1; /* an unknown type: HF refuses the file */
        return;
    }
    const json_t *specials = json_object_get(pp, "special_tokens");
    const char *name;
    const json_t *st;
    json_object_foreach((json_t *)specials, name, st)
    {
        size_t k;
        const json_t *v;
        json_array_foreach(json_object_get(st, "ids"), k, v)
        {
            if (!valid_u32(v))
                rf->unmodelled = 1; /* HF refuses the file */
        }
    }
    size_t i;
    const json_t *item;
    rf->copies = 0;
    json_array_foreach(json_object_get(pp, "single"), i, item)
    {
        const json_t *seq = json_object_get(item, "Sequence");
        if (seq) {
            if (strcmp(json_string_value(json_object_get(seq, "id")), "A") != 0)
                rf->unmodelled = 1; /* HF panics */
            if (rf->copies++ > 0)
                rf->unmodelled = 1; /* the text twice: not followed here */
            continue;
        }
        name = json_string_value(json_object_get(json_object_get(item, "SpecialToken"), "id"));
        const json_t *ids = json_object_get(json_object_get(specials, name), "ids");
        if (!ids) {
            rf->unmodelled = 1; /* HF panics */
            continue;
        }
        size_t k;
        const json_t *v;
        json_array_foreach(ids, k, v)
        {
            json_int_t *side = rf->copies ? rf->post : rf->pre;
            size_t *n = rf->copies ? &rf->n_post : &rf->n_pre;
            if (*n < 16)
                side[(*n)++] = json_integer_value(v);
        }
    }
}

/* The added tokens as HF numbers them (see the header). */
FUZZ_NO_COVERAGE static void ref_added(ref *rf, const json_t *added, const json_t *vocab)
{
    uint32_t next_id = BASE_SIZE;
    rf->n = 0;
    size_t i;
    const json_t *a;
    json_array_foreach(added, i, a)
    {
        const char *content = json_string_value(json_object_get(a, "content"));
        if (json_is_true(json_object_get(a, "lstrip")))
            rf->unmodelled = 1;
        int dup = 0;
        for (size_t k = 0; k < rf->n; k++)
            dup |= !strcmp(rf->tok[k].content, content);
        if (dup)
            continue;
        ref_token *t = &rf->tok[rf->n++];
        snprintf(t->content, sizeof t->content, "%s", content);
        t->special = json_is_true(json_object_get(a, "special"));
        t->normalized = json_is_true(json_object_get(a, "normalized"));
        const json_t *v = json_object_get(vocab, content);
        t->id = v ? (uint32_t)json_integer_value(v) : next_id++;
        if (t->normalized && rf->nfc)
            t->match_len = ref_nfc(content, strlen(content), t->match, sizeof t->match);
        else
            t->match_len = strlen(memcpy(t->match, content, strlen(content) + 1));
        for (size_t k = 0; k + 1 < rf->n; k++)
            if (rf->tok[k].normalized && t->normalized && rf->tok[k].match_len == t->match_len &&
                !memcmp(rf->tok[k].match, t->match, t->match_len))
                rf->unmodelled = 1; /* HF matches one of them at random */
    }
}

/* The token (special ones only if `specials`, normalized ones or not) of
 * HF's leftmost-longest match at s[i..n). */
FUZZ_NO_COVERAGE static const ref_token *ref_match_at(const ref *rf, const char *s, size_t n,
                                                      size_t i, int normalized, int specials)
{
    const ref_token *best = NULL;
    for (size_t k = 0; k < rf->n; k++) {
        const ref_token *t = &rf->tok[k];
        if (t->normalized != normalized || (t->special && !specials) || t->match_len > n - i ||
            memcmp(s + i, t->match, t->match_len) != 0)
            continue;
        if (!best || t->match_len > best->match_len)
            best = t;
    }
    return best;
}

typedef struct ids {
    uint32_t v[MAX_IDS];
    size_t n;
} ids;

FUZZ_NO_COVERAGE static void push(ids *o, uint32_t id)
{
    FUZZ_CHECK(o->n < MAX_IDS, "too many ids");
    o->v[o->n++] = id;
}

/* The base model's ids for a stretch no added token is in. */
FUZZ_NO_COVERAGE static void ref_plain(simdbpe_encoder *base, const char *s, size_t n, ids *o)
{
    if (!n)
        return;
    const uint32_t *got;
    size_t k;
    simdbpe_error err;
    FUZZ_CHECK(simdbpe_encode(base, s, n, NULL, &got, &k, &err) == SIMDBPE_OK, "base: %s",
               err.message);
    for (size_t i = 0; i < k; i++)
        push(o, got[i]);
}

/* Cuts s[0..n) at the tokens of one pass; the stretches between go to
 * the next pass (normalized), or to the model. */
FUZZ_NO_COVERAGE static void ref_pass(const ref *rf, simdbpe_encoder *base, const char *s,
                                      size_t n, int normalized, int specials, ids *o)
{
    size_t start = 0, i = 0;
    char norm[4 * MAX_TEXT + 64];
    while (i <= n) {
        const ref_token *t = i < n ? ref_match_at(rf, s, n, i, normalized, specials) : NULL;
        if (!t && i < n) {
            i++;
            continue;
        }
        if (i > start) {
            if (normalized) {
                ref_plain(base, s + start, i - start, o);
            } else {
                size_t m = rf->nfc ? ref_nfc(s + start, i - start, norm, sizeof norm)
                                   : (memcpy(norm, s + start, i - start), i - start);
                ref_pass(rf, base, norm, m, 1, specials, o);
            }
        }
        if (!t)
            break;
        push(o, t->id);
        i += t->match_len;
        start = i;
    }
}

FUZZ_NO_COVERAGE static void ref_encode(const ref *rf, simdbpe_encoder *base, const char *text,
                                        size_t len, int specials, int add, ids *o)
{
    o->n = 0;
    if (add)
        for (size_t i = 0; i < rf->n_pre; i++)
            push(o, (uint32_t)rf->pre[i]);
    /* A template without the sequence gives no text even without its
     * ids: HF skips its special tokens then, not its structure. */
    if (rf->copies)
        ref_pass(rf, base, text, len, 0, specials, o);
    if (add)
        for (size_t i = 0; i < rf->n_post; i++)
            push(o, (uint32_t)rf->post[i]);
}

/* --------------------------------------------------------------- harness */

static json_t *base_json;          /* edited for each input */
static json_t *original;           /* as it is */
static simdbpe_model *base_model; /* the file without added tokens or normalizer */
static simdbpe_encoder *base_enc;

static void load_base(void)
{
    if (base_json)
        return;
    json_error_t je;
    base_json = json_load_file(SIMDBPE_QWEN3_2K, 0, &je);
    FUZZ_CHECK(base_json, "%s: %s", SIMDBPE_QWEN3_2K, je.text);
    /* The byte tokens and the first MERGES merges' (Qwen3's ids are 256 +
     * the merge's rank); Qwen3's added tokens numbered after them. */
    json_t *model = json_object_get(base_json, "model");
    json_t *vocab = json_object_get(model, "vocab");
    const char *key;
    json_t *v, *tmp;
    json_object_foreach_safe(vocab, tmp, key, v)
    {
        if (json_integer_value(v) >= BASE_SIZE)
            json_object_del(vocab, key);
    }
    FUZZ_CHECK(json_object_size(vocab) == BASE_SIZE, "vocabulary of %zu", json_object_size(vocab));
    json_t *merges = json_object_get(model, "merges");
    while (json_array_size(merges) > MERGES)
        json_array_remove(merges, json_array_size(merges) - 1);
    size_t i;
    json_array_foreach(json_object_get(base_json, "added_tokens"), i, v)
    {
        json_object_set_new(v, "id", json_integer(BASE_SIZE + (json_int_t)i));
    }
    original = json_deep_copy(base_json);
    json_t *plain = json_deep_copy(base_json);
    json_object_set_new(plain, "added_tokens", json_array());
    json_object_set_new(plain, "normalizer", json_null());
    json_object_set_new(plain, "post_processor", json_null());
    char *text = json_dumps(plain, JSON_COMPACT);
    simdbpe_error err;
    FUZZ_CHECK(simdbpe_model_load_hf_json(text, strlen(text), &base_model, &err) == SIMDBPE_OK,
               "%s", err.message);
    FUZZ_CHECK(simdbpe_encoder_new(base_model, &base_enc, &err) == SIMDBPE_OK, "encoder: %s",
               err.message);
    free(text);
    json_decref(plain);
}

/* FUZZ_HF_ADDED_DUMP=DIR: each input's file, text and what the reference
 * expects, for tests/hf/added_tokens.mjs: a line "accepted" or "refused"
 * (the library's verdict), then the ids with special tokens allowed,
 * without and with the post-processor's, on a line each, or "unmodelled"
 * (HF does what the reference does not follow). */
static void dump(const char *file, const char *text, size_t len, int accepted, const ref *rf,
                 const ids *plain, const ids *added)
{
    const char *dir = getenv("FUZZ_HF_ADDED_DUMP");
    if (!dir)
        return;
    static unsigned serial;
    char path[4200];
    snprintf(path, sizeof path, "%s/%05u.json", dir, serial);
    FILE *f = fopen(path, "w");
    FUZZ_CHECK(f, "%s", path);
    fputs(file, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/%05u.txt", dir, serial);
    f = fopen(path, "wb");
    FUZZ_CHECK(f, "%s", path);
    fwrite(text, 1, len, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/%05u.ids", dir, serial++);
    f = fopen(path, "w");
    FUZZ_CHECK(f, "%s", path);
    fputs(accepted ? "accepted\n" : "refused\n", f);
    if (rf->unmodelled) {
        fputs("unmodelled\n", f);
    } else {
        for (int k = 0; k < 2; k++) {
            const ids *o = k ? added : plain;
            for (size_t i = 0; i < o->n; i++)
                fprintf(f, "%s%u", i ? " " : "", o->v[i]);
            fputc('\n', f);
        }
    }
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_base();
    reader r = {data, size};
    unsigned flags = next(&r);
    int nfc = flags & 1;
    /* Qwen3's own added tokens, or none, then the input's. */
    json_t *added = flags & 2 ? json_deep_copy(json_object_get(original, "added_tokens"))
                              : json_array();
    unsigned n_added = next(&r) % (MAX_ADDED + 1);
    for (unsigned i = 0; i < n_added; i++) {
        char content[64];
        unsigned f = next(&r);
        if (!build_text(&r, 1 + f % 3, content, sizeof content))
            continue;
        json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id",
                                               BASE_SIZE + (int)json_array_size(added),
                                               "content", content,
                                               "single_word", 0, "lstrip", (f & 0xF8) == 0xF8,
                                               "rstrip", 0, "normalized", (f >> 3) & 1,
                                               "special", (f >> 4) & 1));
    }
    json_t *pp = build_pp(&r, 0);
    char text[MAX_TEXT];
    size_t len = build_text(&r, r.n, text, sizeof text);

    json_object_set_new(base_json, "added_tokens", added);
    json_object_set_new(base_json, "normalizer",
                        nfc ? json_pack("{s:s}", "type", "NFC") : json_null());
    json_object_set_new(base_json, "post_processor", pp);
    char *file = json_dumps(base_json, JSON_COMPACT);
    FUZZ_CHECK(file, "json_dumps");

    ref rf;
    memset(&rf, 0, sizeof rf);
    rf.nfc = nfc;
    rf.copies = 1;
    ref_added(&rf, added, json_object_get(json_object_get(base_json, "model"), "vocab"));
    ref_pp(&rf, pp);
    /* The reference's ids: special tokens as text and allowed, without and
     * with the post-processor's. */
    static ids want[2][2];
    for (int specials = 0; specials < 2 && !rf.unmodelled; specials++)
        for (int add = 0; add < 2; add++)
            ref_encode(&rf, base_enc, text, len, specials, add, &want[specials][add]);

    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_hf_json(file, strlen(file), &m, &err);
    dump(file, text, len, st == SIMDBPE_OK, &rf, &want[1][0], &want[1][1]);
    free(file);
    if (st != SIMDBPE_OK) {
        fuzz_check_load_failed(st, m, &err);
        return 0;
    }
    if (rf.unmodelled) {
        char *what = json_dumps(pp, JSON_COMPACT | JSON_ENCODE_ANY);
        char *tokens = json_dumps(added, JSON_COMPACT);
        FUZZ_CHECK(0, "accepted a file whose added tokens or post-processor HF treats otherwise: "
                      "added_tokens %s, post_processor %s", tokens, what);
    }
    simdbpe_encoder *e;
    FUZZ_CHECK(simdbpe_encoder_new(m, &e, &err) == SIMDBPE_OK, "encoder: %s", err.message);
    for (int specials = 0; specials < 2; specials++) {
        for (int add = 0; add < 2; add++) {
            const ids *w = &want[specials][add];
            simdbpe_encode_options o = SIMDBPE_ENCODE_OPTIONS_INIT;
            o.special = specials ? SIMDBPE_SPECIAL_ALLOW : SIMDBPE_SPECIAL_AS_TEXT;
            o.add_special_tokens = add;
            const uint32_t *got;
            size_t n;
            FUZZ_CHECK(simdbpe_encode(e, text, len, &o, &got, &n, &err) == SIMDBPE_OK,
                       "encode: %s", err.message);
            size_t d = 0;
            while (d < n && d < w->n && got[d] == w->v[d])
                d++;
            FUZZ_CHECK(n == w->n && d == n,
                       "specials %s, add %d: %zu ids, reference %zu; first difference at %zu "
                       "(%u, reference %u); text \"%.*s\"",
                       specials ? "allowed" : "as text", add, n, w->n, d, d < n ? got[d] : 0,
                       d < w->n ? w->v[d] : 0, (int)len, text);
        }
    }
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
    return 0;
}
