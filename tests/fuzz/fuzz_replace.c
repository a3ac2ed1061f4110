/*
 * fuzz_replace.c - property: replace mode is Python's errors="replace".
 *
 * For any bytes, encoding with SIMDBPE_UTF8_REPLACE succeeds, and decoding
 * the ids gives exactly bytes.decode("utf-8", "replace").encode("utf-8"),
 * computed by the independent fuzz_utf8_replace() in fuzz.h: valid UTF-8
 * whatever the input, every maximal invalid subpart one U+FFFD. Checked
 * with specials as text and with specials allowed.
 */
#include "fuzz.h"

static void check(simdbpe_encoder *enc, const uint8_t *data, size_t size,
                  const uint8_t *want, size_t want_len, simdbpe_special_policy policy)
{
    simdbpe_encode_options opts = {.special = policy, .errors = SIMDBPE_UTF8_REPLACE};
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(enc, (const char *)data, size, &opts, &ids, &n, &err);
    FUZZ_CHECK(st == SIMDBPE_OK, "replace-mode encode failed: %s", err.message);
    size_t out_len;
    uint8_t *out = fuzz_decode(fuzz_gpt2(), ids, n, &out_len);
    FUZZ_CHECK(out_len == want_len && memcmp(out, want, want_len) == 0,
               "policy %d: decoded %zu bytes, Python-style replacement has %zu (or they differ)",
               (int)policy, out_len, want_len);
    FUZZ_CHECK(fuzz_utf8_first_invalid(out, out_len) == out_len, "decoded text is not UTF-8");
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    simdbpe_encoder *enc = fuzz_encoder();
    size_t want_len;
    uint8_t *want = fuzz_utf8_replace(data, size, &want_len);
    check(enc, data, size, want, want_len, SIMDBPE_SPECIAL_AS_TEXT);
    check(enc, data, size, want, want_len, SIMDBPE_SPECIAL_ALLOW);
    free(want);
    return 0;
}
