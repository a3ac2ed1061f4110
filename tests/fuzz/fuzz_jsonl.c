/*
 * fuzz_jsonl.c - property: the JSON Lines record reader (tools/
 * reader_jsonl.c) never crashes on any bytes and never contradicts
 * jansson, its arbiter, beyond the differences reader_jsonl.h documents
 * (the extracted value's raw bytes may be invalid UTF-8, left to the
 * encoder; an escaped lone surrogate is JSONL_SURROGATE, or U+FFFD in
 * replace mode, where jansson says malformed; valid JSON that jansson
 * refuses for its own limits, numbers beyond int64/double and a NUL in a
 * key, is read).
 *
 * Input: byte 0 picks the key path and replace mode, the rest is one
 * record (without its newline), in an exact-size buffer. Checked:
 *   - where the fast path decides (does not return -1), it gives jansson's
 *     value, or jansson's kind of failure, except as documented;
 *   - simdbpe__jsonl_extract() (fast path, then jansson) calls a record malformed
 *     only if jansson does, and its OK value is the fast path's or
 *     jansson's.
 */
#include "fuzz.h"

#include "reader_jsonl.h"

static const char *const keys[] = {"text", "a.b", "text.x", "t", "content"};

/* Whether jansson refused valid JSON for a limit of its own (numbers
 * beyond int64/double, a NUL in a key), which the fast path reads. */
static int jansson_limit(const char *msg)
{
    return strstr(msg, "overflow") || strstr(msg, "too big") || strstr(msg, "NUL");
}

static void check(const char *line, size_t len, const char *spec, int replace)
{
    jsonl_key key;
    FUZZ_CHECK(simdbpe__jsonl_key_parse(&key, spec) == 0, "key %s", spec);
    jsonl_buf b1 = {0}, b2 = {0}, b3 = {0};
    const char *t1 = NULL, *t2 = NULL, *t3 = NULL;
    size_t n1 = 0, n2 = 0, n3 = 0;
    char m1[400], m2[400], m3[400];
    int fast = simdbpe__jsonl_fast(line, len, &key, replace, &b1, &t1, &n1, m1, sizeof m1);
    jsonl_status ref = simdbpe__jsonl_jansson(line, len, &key, &b2, &t2, &n2, m2, sizeof m2);
    if (fast == JSONL_OK && ref == JSONL_OK) {
        FUZZ_CHECK(n1 == n2 && memcmp(t1, t2, n1) == 0, "key %s: values differ (%zu, %zu bytes)",
                   spec, n1, n2);
    } else if (fast == JSONL_OK && ref == JSONL_MALFORMED) {
        /* Only a replaced lone surrogate or invalid UTF-8 in the value. */
        int strict = simdbpe__jsonl_fast(line, len, &key, 0, &b3, &t3, &n3, m3, sizeof m3);
        int bad_utf8 = strict == JSONL_OK && fuzz_utf8_first_invalid((const uint8_t *)t3, n3) != n3;
        FUZZ_CHECK(strict == JSONL_SURROGATE || bad_utf8 || jansson_limit(m2),
                   "key %s: fast path accepted what jansson rejects: %s", spec, m2);
    } else if (fast == JSONL_SURROGATE) {
        FUZZ_CHECK(ref == JSONL_MALFORMED, "key %s: surrogate, jansson %d", spec, (int)ref);
    } else if (fast >= 0) {
        FUZZ_CHECK(fast == (int)ref || (ref == JSONL_MALFORMED && jansson_limit(m2)),
                   "key %s: fast %d (%s), jansson %d (%s)", spec, fast, m1, (int)ref, m2);
    }
    jsonl_buf b4 = {0};
    const char *t4 = NULL;
    size_t n4 = 0;
    char m4[400];
    jsonl_status all =
        simdbpe__jsonl_extract(line, len, &key, replace, &b4, &t4, &n4, m4, sizeof m4, NULL);
    if (all == JSONL_MALFORMED)
        FUZZ_CHECK(ref == JSONL_MALFORMED, "key %s: extract says malformed (%s), jansson %d",
                   spec, m4, (int)ref);
    if (all == JSONL_OK)
        FUZZ_CHECK((fast == JSONL_OK && n4 == n1 && memcmp(t4, t1, n1) == 0) ||
                       (ref == JSONL_OK && n4 == n2 && memcmp(t4, t2, n2) == 0),
                   "key %s: extract gave a value neither path gave", spec);
    simdbpe__jsonl_buf_free(&b1);
    simdbpe__jsonl_buf_free(&b2);
    simdbpe__jsonl_buf_free(&b3);
    simdbpe__jsonl_buf_free(&b4);
    simdbpe__jsonl_key_free(&key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *spec = keys[(data[0] & 0x7F) % (sizeof keys / sizeof keys[0])];
    int replace = data[0] >> 7;
    char *line = malloc(size - 1 ? size - 1 : 1);
    FUZZ_CHECK(line != NULL, "out of memory");
    memcpy(line, data + 1, size - 1);
    check(line, size - 1, spec, replace);
    free(line);
    return 0;
}
