/*
 * test_jsonl.c - the JSON Lines fast path (src/dataset/reader_jsonl.c) against
 * jansson, the arbiter.
 *
 * On every record the fast path handles itself, it must agree with jansson
 * (same value, or the same kind of failure), except for the two documented
 * differences, both about the extracted value only: its raw bytes may be
 * invalid UTF-8 (left to the encoder, which reports or replaces them), and
 * an escaped lone surrogate is JSONL_SURROGATE (or U+FFFD in replace mode)
 * where jansson calls the record malformed.
 */
#include <criterion/criterion.h>

#include "reader_jsonl.h"
#include "test_util.h"
#include "../../kernels/kernels.h"

static int valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t l = simdbpe__utf8_sequence_len((const uint8_t *)s + i, n - i);
        if (!l)
            return 0;
        i += l;
    }
    return 1;
}

typedef struct tally {
    size_t fast, delegated;
} tally;

/* Compares the fast path with jansson on one record; returns the status. */
static int compare(const char *line, size_t len, const char *key_spec, int replace, tally *t)
{
    jsonl_key key;
    cr_assert_eq(simdbpe__jsonl_key_parse(&key, key_spec), 0);
    jsonl_buf b1 = {0}, b2 = {0};
    const char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    char m1[400], m2[400], show[160];
    int fast = simdbpe__jsonl_fast(line, len, &key, replace, &b1, &t1, &n1, m1, sizeof m1);
    jsonl_status ref = simdbpe__jsonl_jansson(line, len, &key, &b2, &t2, &n2, m2, sizeof m2);
    tu_show(show, sizeof show, line, len);
    if (fast < 0) {
        t->delegated++;
    } else {
        t->fast++;
        if (fast == JSONL_OK && ref == JSONL_OK) {
            cr_assert(n1 == n2 && memcmp(t1, t2, n1) == 0, "values differ for %s", show);
        } else if (fast == JSONL_OK && ref == JSONL_MALFORMED) {
            /* Only a replaced lone surrogate or invalid UTF-8 in the value. */
            jsonl_buf b3 = {0};
            const char *t3;
            size_t n3;
            int strict = simdbpe__jsonl_fast(line, len, &key, 0, &b3, &t3, &n3, m1, sizeof m1);
            int bad_utf8 = strict == JSONL_OK && !valid_utf8(t3, n3);
            simdbpe__jsonl_buf_free(&b3);
            /* ... or valid JSON jansson cannot represent (a number beyond
             * int64/double, a NUL in a key). */
            int jansson_limit = strstr(m2, "too big") || strstr(m2, "overflow") ||
                                strstr(m2, "NUL");
            cr_assert(strict == JSONL_SURROGATE || bad_utf8 || jansson_limit,
                      "fast path accepted %s, jansson says: %s", show, m2);
        } else if (fast == JSONL_SURROGATE) {
            cr_assert_eq(ref, JSONL_MALFORMED, "%s", show);
        } else {
            cr_assert_eq(fast, (int)ref, "fast %d (%s), jansson %d (%s) for %s", fast, m1, ref, m2,
                         show);
        }
    }
    /* The combination never contradicts jansson except as documented. */
    jsonl_status all =
        simdbpe__jsonl_extract(line, len, &key, replace, &b1, &t1, &n1, m1, sizeof m1, NULL);
    if (all == JSONL_MALFORMED)
        cr_assert_eq(ref, JSONL_MALFORMED, "%s", show);
    /* In place: the same status and value; the record unchanged but on
     * success. */
    char *copy = malloc(len + 1);
    cr_assert(copy);
    memcpy(copy, line, len);
    jsonl_buf b4 = {0};
    const char *t4 = NULL;
    size_t n4 = 0;
    char m4[400];
    jsonl_status inp =
        simdbpe__jsonl_extract_in_place(copy, len, &key, replace, &b4, &t4, &n4, m4, sizeof m4);
    cr_assert_eq(inp, all, "in place %d, simdbpe__jsonl_extract %d for %s", inp, all, show);
    if (all == JSONL_OK)
        cr_assert(n4 == n1 && memcmp(t4, t1, n1) == 0, "in place: values differ for %s", show);
    else
        cr_assert(memcmp(copy, line, len) == 0 && strcmp(m4, m1) == 0,
                  "in place: record or message changed for %s", show);
    free(copy);
    simdbpe__jsonl_buf_free(&b4);
    simdbpe__jsonl_buf_free(&b1);
    simdbpe__jsonl_buf_free(&b2);
    simdbpe__jsonl_key_free(&key);
    return fast < 0 ? (int)ref : fast;
}

static void golden_record_line(const char *path, tally *t, const char *key, int want)
{
    size_t len;
    char *data = tu_read(path, &len);
    for (size_t i = 0; i < len;) {
        char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (end > i && strncmp(data + i, "{\"header\"", 9) != 0) {
            int st = compare(data + i, end - i, key, 0, t);
            cr_assert_eq(st, want, "%s: status %d for key %s", path, st, key);
        }
        i = end + 1;
    }
    free(data);
}

Test(jsonl, golden_files_agree_with_jansson)
{
    static const char *const files[] = {"edge.jsonl", "stress.jsonl", "random.jsonl",
                                        "specials.jsonl", "small_model.jsonl"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", TU_GOLDEN_DIR, files[f]);
        tally t = {0, 0};
        golden_record_line(path, &t, "text", JSONL_OK);
        cr_assert_eq(t.delegated, 0, "%s: %zu records went to jansson", files[f], t.delegated);
        golden_record_line(path, &t, "nope", JSONL_NO_KEY);
        golden_record_line(path, &t, "text.x", JSONL_NOT_OBJECT);
    }
}

typedef struct case_ {
    const char *line;
    const char *key;
    int status;        /* expected simdbpe__jsonl_extract status */
    const char *value; /* expected value (JSONL_OK), NULL = don't check */
} case_;

static const case_ cases[] = {
    {"{\"text\": \"plain\"}", "text", JSONL_OK, "plain"},
    {"  {\"a\":1,\"text\":\"x\",\"b\":[1,2,{\"text\":\"no\"}]}  \r", "text", JSONL_OK, "x"},
    {"{\"text\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "text", JSONL_OK, "\"\\/\b\f\n\r\t"},
    {"{\"text\":\"\\u0041\\u00e9\\u4e2d\\ud83d\\ude00\"}", "text", JSONL_OK,
     "A\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"},
    {"{\"text\":\"a\\u0000b\"}", "text", JSONL_OK, NULL}, /* NUL allowed in values */
    {"{\"te\\u0078t\":\"escaped key\"}", "text", JSONL_OK, "escaped key"},
    {"{\"text\":\"first\",\"text\":\"last\"}", "text", JSONL_OK, "last"},
    {"{\"a\":{\"b\":\"deep\"}}", "a.b", JSONL_OK, "deep"},
    {"{\"a\":{\"b\":\"x\"},\"a\":{\"c\":1}}", "a.b", JSONL_NO_KEY, NULL},
    {"{\"a\":{\"c\":1},\"a\":{\"b\":\"y\"}}", "a.b", JSONL_OK, "y"},
    {"{\"a\":5}", "a.b", JSONL_NOT_OBJECT, NULL},
    {"{\"text\":null}", "text", JSONL_NOT_STRING, NULL},
    {"{\"text\":[\"a\"]}", "text", JSONL_NOT_STRING, NULL},
    {"{\"x\":1}", "text", JSONL_NO_KEY, NULL},
    {"[\"text\"]", "text", JSONL_NOT_OBJECT, NULL},
    {"{\"n\":-0.5e-3,\"m\":1E+2,\"k\":0,\"text\":\"num\"}", "text", JSONL_OK, "num"},
    /* Valid JSON that jansson refuses (RFC 8259 sets no range on numbers,
     * and allows \u0000 in a key): read all the same. */
    {"{\"n\":123456789012345678901234567890,\"text\":\"big\"}", "text", JSONL_OK, "big"},
    {"{\"id\":18446744073709551615,\"text\":\"hello\"}", "text", JSONL_OK, "hello"},
    {"{\"n\":1e400,\"text\":\"inf\"}", "text", JSONL_OK, "inf"},
    {"{\"n\":-1.5e-400,\"text\":\"tiny\"}", "text", JSONL_OK, "tiny"},
    {"{\"k\\u0000ey\":1,\"text\":\"nul key\"}", "text", JSONL_OK, "nul key"},
    {"{\"n\":true,\"m\":false,\"k\":null,\"text\":\"lit\"}", "text", JSONL_OK, "lit"},
    /* Malformed records. */
    {"{\"text\":\"a\",}", "text", JSONL_MALFORMED, NULL},
    {"{\"text\" \"a\"}", "text", JSONL_MALFORMED, NULL},
    {"{\"text\":\"a\"", "text", JSONL_MALFORMED, NULL},
    {"{\"text\":\"a\"} x", "text", JSONL_MALFORMED, NULL},
    {"{\"text\":\"a\tb\"}", "text", JSONL_MALFORMED, NULL}, /* raw control character */
    {"{\"text\":\"a\\x\"}", "text", JSONL_MALFORMED, NULL},
    {"{\"text\":\"a\\u12\"}", "text", JSONL_MALFORMED, NULL},
    {"{\"other\":\"\\ud800\",\"text\":\"a\"}", "text", JSONL_MALFORMED, NULL},
    {"{\"other\":\"\xFF\",\"text\":\"a\"}", "text", JSONL_MALFORMED, NULL},
    /* A value that a later duplicate overrides must be UTF-8 too (jansson). */
    {"{\"text\":\"\xFF\",\"text\":\"a\"}", "text", JSONL_MALFORMED, NULL},
    {"{\"n\":01,\"text\":\"a\"}", "text", JSONL_MALFORMED, NULL},
    {"{\"n\":1.,\"text\":\"a\"}", "text", JSONL_MALFORMED, NULL},
    {"{\"n\":tru,\"text\":\"a\"}", "text", JSONL_MALFORMED, NULL},
    {"\xEF\xBB\xBF{\"text\":\"bom\"}", "text", JSONL_MALFORMED, NULL},
    {"", "text", JSONL_MALFORMED, NULL},
    /* Lone surrogates in the value: an error unless replace mode. */
    {"{\"text\":\"a\\ud800b\"}", "text", JSONL_SURROGATE, NULL},
    {"{\"text\":\"\\udc00\"}", "text", JSONL_SURROGATE, NULL},
    {"{\"text\":\"\\ud800\\u0041\"}", "text", JSONL_SURROGATE, NULL},
};

Test(jsonl, hand_written_cases)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const case_ *c = &cases[i];
        jsonl_key key;
        cr_assert_eq(simdbpe__jsonl_key_parse(&key, c->key), 0);
        jsonl_buf b = {0};
        const char *text = NULL;
        size_t n = 0;
        char msg[400];
        jsonl_status st = simdbpe__jsonl_extract(c->line, strlen(c->line), &key, 0, &b, &text, &n,
                                                 msg, sizeof msg, NULL);
        cr_assert_eq(st, c->status, "case %zu (%s): status %d, want %d (%s)", i, c->line, st,
                     c->status, msg);
        if (c->value)
            cr_assert(n == strlen(c->value) && memcmp(text, c->value, n) == 0,
                      "case %zu: value \"%.*s\"", i, (int)n, text);
        tally t = {0, 0};
        compare(c->line, strlen(c->line), c->key, 0, &t);
        simdbpe__jsonl_buf_free(&b);
        simdbpe__jsonl_key_free(&key);
    }
}

Test(jsonl, replace_mode_turns_lone_surrogates_into_fffd)
{
    jsonl_key key;
    simdbpe__jsonl_key_parse(&key, "text");
    jsonl_buf b = {0};
    const char *text;
    size_t n;
    char msg[400];
    const char *line = "{\"text\":\"a\\ud800b\\udc00\\ud83d\\ude00\"}";
    jsonl_status st =
        simdbpe__jsonl_extract(line, strlen(line), &key, 1, &b, &text, &n, msg, sizeof msg, NULL);
    cr_assert_eq(st, JSONL_OK, "%s", msg);
    const char *want = "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xF0\x9F\x98\x80";
    cr_assert(n == strlen(want) && memcmp(text, want, n) == 0);
    simdbpe__jsonl_buf_free(&b);
    simdbpe__jsonl_key_free(&key);
}

Test(jsonl, deep_nesting_goes_to_jansson)
{
    char line[2000];
    size_t o = (size_t)snprintf(line, sizeof line, "{\"x\":");
    for (int i = 0; i < 100; i++)
        line[o++] = '[';
    for (int i = 0; i < 100; i++)
        line[o++] = ']';
    o += (size_t)snprintf(line + o, sizeof line - o, ",\"text\":\"deep\"}");
    tally t = {0, 0};
    cr_assert_eq(compare(line, o, "text", 0, &t), JSONL_OK);
    cr_assert_eq(t.delegated, 1);
}

/* Random damage to valid records: the fast path and jansson must agree. */
Test(jsonl, mutations_agree_with_jansson)
{
    static const char *const seeds[] = {
        "{\"text\": \"Hello, world\", \"id\": 12, \"meta\": {\"a\": [1, 2.5, true, null]}}",
        "{\"id\":\"x\",\"text\":\"\\u00e9\\n\\\"q\\\" \\ud83d\\ude00 tail\"}",
        "{\"a\":{\"text\":\"nested\"},\"text\":\"top\",\"z\":-1e-5}",
    };
    static const char alphabet[] = "{}[]:,\"\\ u0dDe.-+1aftn\t\r";
    unsigned seed = 2024;
    tally t = {0, 0};
    for (int iter = 0; iter < 20000; iter++) {
        const char *src = seeds[iter % 3];
        char line[256];
        size_t n = strlen(src);
        memcpy(line, src, n);
        int edits = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
        for (int e = 0; e < edits && n > 1 && n < sizeof line - 1; e++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % n;
            char c = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            switch ((seed >> 28) % 3) {
            case 0: /* replace */
                line[at] = c;
                break;
            case 1: /* insert */
                memmove(line + at + 1, line + at, n - at);
                line[at] = c;
                n++;
                break;
            default: /* delete */
                memmove(line + at, line + at + 1, n - at - 1);
                n--;
            }
        }
        compare(line, n, "text", (int)(iter & 1), &t);
        compare(line, n, "a.text", 0, &t);
    }
    /* Malformed records always go to jansson (for its message); what
     * matters is that the fast path never accepts one jansson refuses. */
    cr_log_info("fast path decided %zu records, jansson %zu", t.fast, t.delegated);
    cr_assert_gt(t.fast, 5000, "the fast path decided only %zu times", t.fast);
}
