/*
 * test_encode.c - the encoder: arguments, special-token policies, strict
 * UTF-8 errors and replace mode, encoder reuse, threads, kernel choice.
 *
 * Expected ids come from the references via golden files:
 *   specials.jsonl  tiktoken encode(text, "all") / encode_ordinary and HF;
 *   utf8.jsonl      Python's UnicodeDecodeError.start (strict offset) and the
 *                   references' ids of bytes.decode("utf-8", "replace").
 */
#include <criterion/criterion.h>

#include <pthread.h>

#include "../../kernels/kernels.h"
#include "test_util.h"

static simdbpe_model *model;
static simdbpe_encoder *enc;

static void setup(void)
{
    model = tu_gpt2();
    enc = tu_encoder(model);
}

static void teardown(void)
{
    simdbpe_encoder_free(enc);
    simdbpe_model_free(model);
}

TestSuite(encode, .init = setup, .fini = teardown);

static const simdbpe_encode_options as_text = {.special = SIMDBPE_SPECIAL_AS_TEXT, .errors = SIMDBPE_UTF8_STRICT};
static const simdbpe_encode_options allow = {.special = SIMDBPE_SPECIAL_ALLOW, .errors = SIMDBPE_UTF8_STRICT};
static const simdbpe_encode_options forbid = {.special = SIMDBPE_SPECIAL_ERROR, .errors = SIMDBPE_UTF8_STRICT};
static const simdbpe_encode_options replace = {.special = SIMDBPE_SPECIAL_AS_TEXT, .errors = SIMDBPE_UTF8_REPLACE};

/* ------------------------------------------------------------ arguments */

Test(encode, empty_text)
{
    size_t n = 99;
    const uint32_t *ids = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode(enc, "", 0, NULL, &ids, &n, &err), SIMDBPE_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(simdbpe_encode(enc, NULL, 0, NULL, &ids, &n, &err), SIMDBPE_OK);
    cr_assert_eq(n, 0);
}

Test(encode, null_arguments)
{
    size_t n;
    const uint32_t *ids;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode(enc, NULL, 3, NULL, &ids, &n, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(err.status, SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_encode(enc, "a", 1, NULL, NULL, &n, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_encode(enc, "a", 1, NULL, &ids, NULL, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_encode(NULL, "a", 1, NULL, &ids, &n, &err), SIMDBPE_ERR_INVALID_ARG);
    simdbpe_encoder *e = NULL;
    cr_assert_eq(simdbpe_encoder_new(NULL, &e, NULL), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_encoder_new(model, NULL, NULL), SIMDBPE_ERR_INVALID_ARG);
    /* cache_mb: 0 (the default) or 1..65536 */
    static const unsigned bad_mb[] = {65537, 1000000, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad_mb / sizeof *bad_mb; i++) {
        simdbpe_encoder_options o = {.cache_mb = bad_mb[i]};
        e = (simdbpe_encoder *)&o; /* must be reset */
        cr_assert_eq(simdbpe_encoder_new_with(model, &o, &e, &err), SIMDBPE_ERR_INVALID_ARG,
                     "cache_mb %u", bad_mb[i]);
        cr_assert_null(e);
        char want[64];
        snprintf(want, sizeof want, "cache_mb %u is above 65536", bad_mb[i]);
        cr_assert(err.status == SIMDBPE_ERR_INVALID_ARG && strstr(err.message, want),
                  "%s", err.message);
    }
    static const unsigned good_mb[] = {0, 1, 3, 5, 24, 96, 1000};
    for (size_t i = 0; i < sizeof good_mb / sizeof *good_mb; i++) {
        simdbpe_encoder_options o = {.cache_mb = good_mb[i]};
        cr_assert_eq(simdbpe_encoder_new_with(model, &o, &e, NULL), SIMDBPE_OK, "cache_mb %u",
                     good_mb[i]);
        cr_assert_eq(simdbpe_encode(e, "hello world", 11, NULL, &ids, &n, &err), SIMDBPE_OK);
        cr_assert(n == 2 && ids[0] == 31373 && ids[1] == 995); /* GPT-2's, as in tiktoken */
        simdbpe_encoder_free(e);
    }
    cr_assert_eq(simdbpe_encoder_new_with(model, NULL, &e, NULL), SIMDBPE_OK);
    simdbpe_encoder_free(e);
    /* A NULL error pointer is allowed on failure and on success. */
    cr_assert_eq(simdbpe_encode(enc, "\xFF", 1, NULL, &ids, &n, NULL), SIMDBPE_ERR_INVALID_UTF8);
    cr_assert_eq(simdbpe_encode(enc, "a", 1, NULL, &ids, &n, NULL), SIMDBPE_OK);
}

Test(encode, well_known_ids)
{
    /* tiktoken gpt2: "Hello world" -> [15496, 995]; edge.jsonl doc 7:
     * "x 中" -> [87, 220, 40792]. */
    uint32_t hello[] = {15496, 995};
    tu_expect_ids(enc, "Hello world", 11, NULL, hello, 2, "hello");
    uint32_t cjk[] = {87, 220, 40792};
    tu_expect_ids(enc, "x \xE4\xB8\xAD", 5, &as_text, cjk, 3, "cjk");
}

/* The ids stay valid until the next call, and results do not depend on
 * what the encoder saw before (the cache must not leak across words). */
Test(encode, results_do_not_depend_on_history)
{
    static const char *const words[] = {"hello", " hello", "Hello", "hello world",
                                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaa",
                                        " the", "the", "\xE4\xB8\xAD\xE6\x96\x87", "x"};
    size_t nw = sizeof words / sizeof words[0];
    uint32_t first[16][64];
    size_t first_n[16];
    for (size_t i = 0; i < nw; i++) {
        const uint32_t *ids = tu_encode(enc, words[i], strlen(words[i]), NULL, &first_n[i]);
        cr_assert_leq(first_n[i], 64);
        memcpy(first[i], ids, first_n[i] * sizeof *ids);
    }
    for (int round = 0; round < 3; round++) {
        for (size_t k = 0; k < nw; k++) {
            size_t i = round % 2 ? nw - 1 - k : k;
            tu_expect_ids(enc, words[i], strlen(words[i]), NULL, first[i], first_n[i],
                          "encoded again");
        }
    }
    simdbpe_encoder *fresh = tu_encoder(model);
    for (size_t i = 0; i < nw; i++)
        tu_expect_ids(fresh, words[i], strlen(words[i]), NULL, first[i], first_n[i],
                      "fresh encoder");
    simdbpe_encoder_free(fresh);
}

/* simdbpe_encode_append writes after the caller's ids, grows the array,
 * and leaves the count as it was on failure. */
Test(encode, append_after_the_callers_ids)
{
    uint32_t *a = NULL;
    size_t cap = 0, n = 0;
    simdbpe_error err;
    /* tiktoken gpt2, as in well_known_ids; <|endoftext|> is 50256 */
    cr_assert_eq(simdbpe_encode_append(enc, "Hello world", 11, NULL, &a, &cap, &n, &err),
                 SIMDBPE_OK);
    cr_assert(n == 2 && cap >= 2 && a[0] == 15496 && a[1] == 995);
    cr_assert_eq(simdbpe_encode_append(enc, "x \xE4\xB8\xAD<|endoftext|>", 18, &allow, &a, &cap,
                                       &n, &err),
                 SIMDBPE_OK);
    uint32_t want[] = {15496, 995, 87, 220, 40792, 50256};
    cr_assert_eq(n, 6);
    cr_assert_arr_eq(a, want, sizeof want);
    /* strict UTF-8: the error, and the ids before kept */
    cr_assert_eq(simdbpe_encode_append(enc, "ok \xFF", 4, NULL, &a, &cap, &n, &err),
                 SIMDBPE_ERR_INVALID_UTF8);
    cr_assert(n == 6 && err.byte_offset == 3);
    cr_assert_arr_eq(a, want, sizeof want);
    /* an array the caller made, exactly full: it grows */
    uint32_t *b = malloc(2 * sizeof *b);
    size_t bcap = 2, bn = 2;
    b[0] = 7;
    b[1] = 8;
    cr_assert_eq(simdbpe_encode_append(enc, "Hello world", 11, NULL, &b, &bcap, &bn, &err),
                 SIMDBPE_OK);
    cr_assert(bn == 4 && bcap >= 4 && b[0] == 7 && b[1] == 8 && b[2] == 15496 && b[3] == 995);
    /* a count past the room, a NULL array with room, NULL pointers */
    size_t big = cap + 1;
    cr_assert_eq(simdbpe_encode_append(enc, "a", 1, NULL, &a, &cap, &big, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    char want_msg[96];
    snprintf(want_msg, sizeof want_msg, "encode_append: %zu ids in an array of %zu", big, cap);
    cr_assert_str_eq(err.message, want_msg);
    uint32_t *none = NULL;
    size_t some = 4, zero = 0;
    cr_assert_eq(simdbpe_encode_append(enc, "a", 1, NULL, &none, &some, &zero, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    cr_assert_str_eq(err.message, "encode_append: 0 ids in an array of 4 that is NULL");
    cr_assert_eq(simdbpe_encode_append(enc, "a", 1, NULL, &a, NULL, &n, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_encode_append(enc, "a", 1, NULL, &a, &cap, NULL, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    cr_assert_str_eq(err.message, "encode_append: NULL argument");
    /* the encoder's own output is untouched by an append in between */
    const uint32_t *ids;
    size_t k;
    cr_assert_eq(simdbpe_encode(enc, "Hello world", 11, NULL, &ids, &k, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_encode_append(enc, "x", 1, NULL, &a, &cap, &n, &err), SIMDBPE_OK);
    cr_assert(k == 2 && ids[0] == 15496 && ids[1] == 995);
    free(a);
    free(b);
}

/* A long single pre-token (BPE over one long word, its ids written in
 * place) and text around it: the same ids appended after others as
 * encoded alone, in a fresh encoder and in one that has seen them. */
Test(encode, append_long_piece_as_encode)
{
    size_t len = (3u << 20) + 5;
    char *text = malloc(len);
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        text[i] = (char)('a' + x % 26);
    }
    memcpy(text, "one ", 4);
    text[len - 6] = ' ';
    for (int round = 0; round < 2; round++) {
        simdbpe_encoder *e = tu_encoder(model);
        const uint32_t *ids;
        size_t k;
        simdbpe_error err;
        cr_assert_eq(simdbpe_encode(e, text, len, NULL, &ids, &k, &err), SIMDBPE_OK);
        uint32_t *want = malloc(k * sizeof *want);
        memcpy(want, ids, k * sizeof *want);
        uint32_t *a = NULL;
        size_t cap = 0, n = 0;
        if (round) /* the encoder has seen the text */
            cr_assert_eq(simdbpe_encode(e, text, len, NULL, &ids, &k, &err), SIMDBPE_OK);
        cr_assert_eq(simdbpe_encode_append(e, "Hello world", 11, NULL, &a, &cap, &n, &err),
                     SIMDBPE_OK);
        cr_assert_eq(simdbpe_encode_append(e, text, len, NULL, &a, &cap, &n, &err), SIMDBPE_OK);
        cr_assert_eq(n, 2 + k);
        cr_assert(a[0] == 15496 && a[1] == 995);
        cr_assert_arr_eq(a + 2, want, k * sizeof *want);
        free(a);
        free(want);
        simdbpe_encoder_free(e);
    }
    free(text);
}

/* A document of four million ids: its output grows through several
 * mappings, each moved into the next (huge.c), and every id arrives; then
 * the same again in the encoder's grown array. */
Test(encode, output_grows_without_losing_ids)
{
    static const char unit[] = " the cat sat.";
    size_t ulen = sizeof unit - 1, reps = (size_t)1 << 20, len = ulen * reps;
    char *text = malloc(len);
    for (size_t i = 0; i < reps; i++)
        memcpy(text + i * ulen, unit, ulen);
    simdbpe_encoder *e = tu_encoder(model);
    const uint32_t *ids;
    size_t k, ku;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode(e, unit, ulen, NULL, &ids, &ku, &err), SIMDBPE_OK);
    uint32_t want[8];
    cr_assert(ku == 4);
    memcpy(want, ids, ku * sizeof *ids);
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(simdbpe_encode(e, text, len, NULL, &ids, &k, &err), SIMDBPE_OK);
        cr_assert_eq(k, ku * reps);
        size_t bad = 0;
        for (size_t i = 0; i < k; i++)
            bad += ids[i] != want[i % ku];
        cr_assert_eq(bad, 0, "round %d: %zu of %zu ids differ", round, bad, k);
    }
    simdbpe_encoder_free(e);
    free(text);
}

/* -------------------------------------------------------------- specials */

static size_t n_special_records;

static void check_special(json_t *rec, size_t line, void *ctx)
{
    (void)ctx;
    size_t len, na, nt;
    const char *text = tu_json_text(rec, "text", &len);
    uint32_t *want_allow = tu_json_ids(json_object_get(rec, "ids_allow"), &na);
    uint32_t *want_text = tu_json_ids(json_object_get(rec, "ids_text"), &nt);
    char where[64];
    snprintf(where, sizeof where, "specials.jsonl line %zu allow", line);
    tu_expect_ids(enc, text, len, &allow, want_allow, na, where);
    snprintf(where, sizeof where, "specials.jsonl line %zu text", line);
    tu_expect_ids(enc, text, len, &as_text, want_text, nt, where);
    tu_expect_ids(enc, text, len, NULL, want_text, nt, where); /* the default */
    /* Error policy: fails at the first occurrence, or encodes as text. */
    const char *hit = memmem(text, len, "<|endoftext|>", 13);
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(enc, text, len, &forbid, &ids, &n, &err);
    if (hit) {
        cr_assert_eq(st, SIMDBPE_ERR_SPECIAL_TOKEN, "line %zu", line);
        cr_assert_eq(err.byte_offset, (uint64_t)(hit - text), "line %zu: offset %llu", line,
                     (unsigned long long)err.byte_offset);
        cr_assert(strstr(err.message, "<|endoftext|>"), "message: %s", err.message);
    } else {
        cr_assert_eq(st, SIMDBPE_OK, "line %zu", line);
        char msg[160];
        cr_assert(!tu_ids_differ(ids, n, want_text, nt, msg, sizeof msg), "line %zu: %s", line,
                  msg);
    }
    free(want_allow);
    free(want_text);
    n_special_records++;
}

Test(encode, special_policies_match_the_references)
{
    size_t n = tu_each_jsonl(TU_GOLDEN_DIR "/specials.jsonl", check_special, NULL);
    cr_assert_gt(n, 200);
}

Test(encode, special_error_offset_hand_cases)
{
    static const struct {
        const char *text;
        uint64_t offset;
    } cases[] = {
        {"<|endoftext|>", 0},
        {"abc <|endoftext|> <|endoftext|>", 4},
        {"<|endoftext<|endoftext|>", 11},
        {"\xE4\xB8\xAD<|endoftext|>", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t *ids;
        size_t n;
        simdbpe_error err;
        cr_assert_eq(simdbpe_encode(enc, cases[i].text, strlen(cases[i].text), &forbid, &ids, &n,
                                    &err),
                     SIMDBPE_ERR_SPECIAL_TOKEN);
        cr_assert_eq(err.byte_offset, cases[i].offset, "case %zu", i);
    }
    /* Partial specials are text under every policy. */
    uint32_t want[] = {27, 91, 437, 1659, 5239, 91}; /* specials.jsonl: "<|endoftext|" */
    tu_expect_ids(enc, "<|endoftext|", 12, &forbid, want, 6, "partial special");
}

/* ---------------------------------------------------------------- UTF-8 */

static size_t n_invalid;

static void check_utf8(json_t *rec, size_t line, void *ctx)
{
    (void)ctx;
    const json_t *hex = json_object_get(rec, "hex");
    cr_assert(json_is_string(hex));
    size_t len, nw;
    uint8_t *bytes = tu_hex(json_string_value(hex), &len);
    uint32_t *want = tu_json_ids(json_object_get(rec, "ids"), &nw);
    const json_t *off = json_object_get(rec, "strict_offset");
    char where[80];
    snprintf(where, sizeof where, "utf8.jsonl line %zu (%s) replace", line,
             json_string_value(hex));
    tu_expect_ids(enc, (const char *)bytes, len, &replace, want, nw, where);
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(enc, (const char *)bytes, len, &as_text, &ids, &n, &err);
    if (json_is_null(off)) {
        cr_assert_eq(st, SIMDBPE_OK, "%s: valid text rejected: %s", where, err.message);
        char msg[160];
        cr_assert(!tu_ids_differ(ids, n, want, nw, msg, sizeof msg), "%s strict: %s", where, msg);
    } else {
        n_invalid++;
        cr_assert_eq(st, SIMDBPE_ERR_INVALID_UTF8, "%s: invalid UTF-8 accepted", where);
        cr_assert_eq(err.status, SIMDBPE_ERR_INVALID_UTF8);
        cr_assert_eq(err.byte_offset, (uint64_t)json_integer_value(off),
                     "%s: strict offset %llu, Python says %lld", where,
                     (unsigned long long)err.byte_offset, (long long)json_integer_value(off));
        char want_text[64];
        snprintf(want_text, sizeof want_text, "offset %lld", (long long)json_integer_value(off));
        cr_assert(strstr(err.message, want_text), "%s: message \"%s\" lacks \"%s\"", where,
                  err.message, want_text);
    }
    free(bytes);
    free(want);
}

Test(encode, utf8_strict_offsets_and_replacement_match_python)
{
    size_t n = tu_each_jsonl(TU_GOLDEN_DIR "/utf8.jsonl", check_utf8, NULL);
    cr_assert_gt(n, 2000);
    cr_assert_gt(n_invalid, 2000);
}

/* A few cases spelled out (the golden file has them all, with context). */
Test(encode, utf8_hand_cases)
{
    static const struct {
        const char *bytes;
        uint64_t offset;
        const char *why;
    } cases[] = {
        {"abc\xE2\x82", 3, "truncated at the end"},
        {"ab\xC0\x80", 2, "overlong NUL"},
        {"\xE0\x9F\xBF", 0, "overlong U+07FF"},
        {"x\xED\xA0\x80", 1, "surrogate U+D800"},
        {"xy\xF4\x90\x80\x80", 2, "U+110000"},
        {"\xF5\x80\x80\x80", 0, "lead byte F5"},
        {"a\x80", 1, "stray continuation"},
        {"\xC3\xA9\xFF", 2, "0xFF after a valid character"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t *ids;
        size_t n;
        simdbpe_error err;
        cr_assert_eq(simdbpe_encode(enc, cases[i].bytes, strlen(cases[i].bytes), NULL, &ids, &n,
                                    &err),
                     SIMDBPE_ERR_INVALID_UTF8, "%s", cases[i].why);
        cr_assert_eq(err.byte_offset, cases[i].offset, "%s", cases[i].why);
    }
    /* Replace: "a" U+FFFD "b" is the same as encoding the repaired text. */
    size_t n1, n2;
    const uint32_t *ids = tu_encode(enc, "a\xEF\xBF\xBD" "b", 5, NULL, &n1);
    uint32_t want[16];
    cr_assert_leq(n1, 16);
    memcpy(want, ids, n1 * sizeof *ids);
    ids = tu_encode(enc, "a\xE2\x82" "b", 4, &replace, &n2);
    char msg[160];
    cr_assert(!tu_ids_differ(ids, n2, want, n1, msg, sizeof msg), "%s", msg);
}

/*
 * An invalid byte far into a long text, where the kernels' blocks and the
 * pre-tokenizer's chunks have long been under way, must give the offset
 * the scalar whole-text validator gives (itself checked against Python
 * above), and replace mode the ids of the repaired text.
 */
static void repair_like_python(const uint8_t *s, size_t len, uint8_t *out, size_t *out_len)
{
    size_t i = 0, o = 0;
    while (i < len) {
        size_t ok = simdbpe__utf8_validate_from(s, len, i);
        memcpy(out + o, s + i, ok - i);
        o += ok - i;
        i = ok;
        if (i < len) {
            i += simdbpe__utf8_maximal_subpart(s + i, len - i);
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
        }
    }
    *out_len = o;
}

static void check_long_invalid(const uint8_t *text, size_t len, const char *what, size_t at)
{
    char where[96];
    snprintf(where, sizeof where, "%s at %zu", what, at);
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    size_t want_bad = simdbpe__utf8_validate_from(text, len, 0);
    cr_assert_lt(want_bad, len, "%s: the text is valid", where);
    cr_assert_eq(simdbpe_encode(enc, (const char *)text, len, &as_text, &ids, &n, &err),
                 SIMDBPE_ERR_INVALID_UTF8, "%s: accepted", where);
    cr_assert_eq(err.byte_offset, (uint64_t)want_bad, "%s: offset %llu, want %zu", where,
                 (unsigned long long)err.byte_offset, want_bad);
    uint8_t *fixed = malloc(3 * len);
    size_t fixed_len;
    repair_like_python(text, len, fixed, &fixed_len);
    size_t nw;
    const uint32_t *w = tu_encode(enc, (const char *)fixed, fixed_len, NULL, &nw);
    uint32_t *want = malloc((nw + 1) * sizeof *want);
    memcpy(want, w, nw * sizeof *want);
    tu_expect_ids(enc, (const char *)text, len, &replace, want, nw, where);
    free(want);
    free(fixed);
}

Test(encode, invalid_utf8_far_into_a_long_text)
{
    /* 16 KB of English, Cyrillic, CJK and emoji, and a copy to break. */
    static const char *const parts[] = {"The quick brown fox ", "\xD0\xBF\xD1\x80\xD0\xB8 ",
                                        "\xE6\x97\xA5\xE6\x9C\xAC ", "\xF0\x9F\x98\x80 ",
                                        "jumps, 42 times.\n"};
    enum { LEN = 16000 };
    uint8_t *base = malloc(LEN + 64), *text = malloc(LEN + 64);
    size_t len = 0;
    for (size_t i = 0; len < LEN; i++) {
        const char *p = parts[(i * 7 + i / 5) % 5];
        memcpy(base + len, p, strlen(p));
        len += strlen(p);
    }
    for (size_t at = 0; at < len; at += 29) {
        memcpy(text, base, len);
        text[at] = 0xFF; /* never valid */
        check_long_invalid(text, len, "0xFF", at);
        memcpy(text, base, len);
        text[at] = 0x80; /* a stray continuation, unless it replaced one */
        if (simdbpe__utf8_validate_from(text, len, 0) < len)
            check_long_invalid(text, len, "0x80", at);
        if (at + 5 <= len) { /* U+6000, then two stray continuations */
            memcpy(text, base, len);
            memcpy(text + at, "\xE6\x80\x80\x80\x80", 5);
            check_long_invalid(text, len, "E6 80 80 80 80", at);
        }
    }
    /* A text cut inside its last character. */
    memcpy(text, base, len);
    memcpy(text + len, "\xF0\x9F\x98", 3);
    check_long_invalid(text, len + 3, "cut at the end", len);
    free(base);
    free(text);
}

/* --------------------------------------------------- threads and kernels */

typedef struct thread_job {
    const simdbpe_model *m;
    const char *text;
    size_t len;
    const uint32_t *want;
    size_t n_want;
    int ok;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    simdbpe_encoder *e = NULL;
    j->ok = simdbpe_encoder_new(j->m, &e, NULL) == SIMDBPE_OK;
    for (int r = 0; j->ok && r < 50; r++) {
        const uint32_t *ids;
        size_t n;
        j->ok = simdbpe_encode(e, j->text, j->len, NULL, &ids, &n, NULL) == SIMDBPE_OK &&
                n == j->n_want && memcmp(ids, j->want, n * sizeof *ids) == 0;
    }
    simdbpe_encoder_free(e);
    return NULL;
}

/* A job on the stress file, with the ids this thread's encoder gives it
 * (free its text and want). */
static thread_job stress_job(void)
{
    thread_job j = {.m = model};
    j.text = tu_read(TU_GOLDEN_DIR "/stress.jsonl", &j.len);
    const uint32_t *ids = tu_encode(enc, j.text, j.len, NULL, &j.n_want);
    uint32_t *want = malloc(j.n_want * sizeof *want);
    cr_assert_not_null(want);
    memcpy(want, ids, j.n_want * sizeof *ids);
    j.want = want;
    return j;
}

/* One model, one encoder per thread: every thread gets the same ids. */
Test(encode, one_model_many_threads)
{
    thread_job jobs[4];
    pthread_t th[4];
    jobs[0] = stress_job();
    for (int i = 0; i < 4; i++) {
        jobs[i] = jobs[0];
        cr_assert_eq(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert(jobs[i].ok, "thread %d got different ids", i);
    }
    free((void *)jobs[0].want);
    free((void *)jobs[0].text);
}

/* An encode needs little stack: it runs on a thread given 64 KB of it
 * (musl gives new threads 128 KB; the encoder's per-chunk arrays alone
 * once took 84 KB of stack). */
Test(encode, runs_on_a_small_thread_stack)
{
    thread_job job = stress_job();
    pthread_attr_t attr;
    pthread_t th;
    cr_assert_eq(pthread_attr_init(&attr), 0);
    cr_assert_eq(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
    cr_assert_eq(pthread_create(&th, &attr, thread_main, &job), 0);
    pthread_join(th, NULL);
    pthread_attr_destroy(&attr);
    cr_assert(job.ok, "the thread got different ids");
    free((void *)job.want);
    free((void *)job.text);
}

Test(encode, kernel_choice)
{
    cr_assert_str_neq(simdbpe_encoder_kernel_name(enc), "");
    const simdbpe__kernels *const *all = simdbpe__kernels_available();
    cr_assert_not_null(all[0]);
    for (size_t i = 0; all[i]; i++) {
        cr_assert_eq(setenv("SIMDBPE_KERNEL", all[i]->name, 1), 0);
        simdbpe_encoder *e = tu_encoder(model);
        cr_assert_str_eq(simdbpe_encoder_kernel_name(e), all[i]->name);
        simdbpe_encoder_free(e);
    }
    cr_assert_eq(setenv("SIMDBPE_KERNEL", "no-such-kernel", 1), 0);
    simdbpe_encoder *e = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encoder_new(model, &e, &err), SIMDBPE_ERR_UNSUPPORTED);
    cr_assert_null(e);
    cr_assert(err.status == SIMDBPE_ERR_UNSUPPORTED && strstr(err.message, "SIMDBPE_KERNEL"),
              "%s", err.message);
    unsetenv("SIMDBPE_KERNEL");
}

/* Every kernel set the CPU supports gives the same ids and the same UTF-8
 * offsets (the golden UTF-8 cases, run once per kernel). */
Test(encode, every_kernel_passes_the_utf8_cases)
{
    const simdbpe__kernels *const *all = simdbpe__kernels_available();
    for (size_t i = 0; all[i]; i++) {
        cr_assert_eq(setenv("SIMDBPE_KERNEL", all[i]->name, 1), 0);
        simdbpe_encoder *saved = enc;
        enc = tu_encoder(model);
        tu_each_jsonl(TU_GOLDEN_DIR "/utf8.jsonl", check_utf8, NULL);
        simdbpe_encoder_free(enc);
        enc = saved;
    }
    unsetenv("SIMDBPE_KERNEL");
}
