/*
 * fuzz_roundtrip.c - property: strict encoding never loses data.
 *
 * For any bytes, under each special-token policy, with the GPT-2 model:
 *   - valid UTF-8 encodes, and decoding the ids gives back exactly the
 *     input (AS_TEXT and ALLOW); with ERROR the only allowed failure is
 *     ERR_SPECIAL_TOKEN at the first "<|endoftext|>" of the input;
 *   - invalid UTF-8 is ERR_INVALID_UTF8 naming the offset of the first
 *     ill-formed sequence (found by the independent checker in fuzz.h);
 *   - encoding the same input again with the same encoder (now with a warm
 *     pre-token cache) gives the same ids.
 */
#include "fuzz.h"

static const char eot[] = "<|endoftext|>";

/* Offset of the first "<|endoftext|>" in data, or size. */
static size_t first_eot(const uint8_t *data, size_t size)
{
    size_t n = sizeof eot - 1;
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(data + i, eot, n) == 0)
            return i;
    return size;
}

/* Encodes twice and checks the second run (warm cache) repeats the first.
 * Returns the status; on success *ids_out is a malloc'ed copy. */
static simdbpe_status encode_twice(simdbpe_encoder *enc, const uint8_t *data, size_t size,
                                   simdbpe_special_policy policy, uint32_t **ids_out,
                                   size_t *n_out, simdbpe_error *err)
{
    simdbpe_encode_options opts = {.special = policy, .errors = SIMDBPE_UTF8_STRICT};
    const uint32_t *ids;
    size_t n;
    simdbpe_status st = simdbpe_encode(enc, (const char *)data, size, &opts, &ids, &n, err);
    if (st != SIMDBPE_OK)
        return st;
    uint32_t *copy = malloc((n ? n : 1) * sizeof *copy);
    FUZZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, ids, n * sizeof *copy);
    simdbpe_error err2;
    st = simdbpe_encode(enc, (const char *)data, size, &opts, &ids, n_out, &err2);
    FUZZ_CHECK(st == SIMDBPE_OK, "second encode failed: %s", err2.message);
    FUZZ_CHECK(*n_out == n && memcmp(ids, copy, n * sizeof *copy) == 0,
               "second encode gave %zu ids, first %zu (or different ids)", *n_out, n);
    *ids_out = copy;
    return SIMDBPE_OK;
}

static void check_policy(simdbpe_encoder *enc, const uint8_t *data, size_t size,
                         simdbpe_special_policy policy, size_t bad)
{
    simdbpe_error err;
    uint32_t *ids = NULL;
    size_t n = 0;
    simdbpe_status st = encode_twice(enc, data, size, policy, &ids, &n, &err);
    if (bad < size) {
        FUZZ_CHECK(st == SIMDBPE_ERR_INVALID_UTF8 && err.byte_offset == bad,
                   "policy %d: invalid UTF-8 at %zu gave %s at %llu", (int)policy, bad,
                   simdbpe_status_name(st), (unsigned long long)err.byte_offset);
        return;
    }
    if (policy == SIMDBPE_SPECIAL_ERROR) {
        size_t at = first_eot(data, size);
        if (at < size) {
            FUZZ_CHECK(st == SIMDBPE_ERR_SPECIAL_TOKEN && err.byte_offset == at,
                       "special at %zu gave %s at %llu", at, simdbpe_status_name(st),
                       (unsigned long long)err.byte_offset);
            return;
        }
    }
    FUZZ_CHECK(st == SIMDBPE_OK, "policy %d: valid UTF-8 gave %s: %s", (int)policy,
               simdbpe_status_name(st), err.message);
    size_t out_len;
    uint8_t *out = fuzz_decode(fuzz_gpt2(), ids, n, &out_len);
    FUZZ_CHECK(out_len == size && memcmp(out, data, size) == 0,
               "policy %d: round trip gave %zu bytes for %zu (or different bytes)", (int)policy,
               out_len, size);
    free(out);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    simdbpe_encoder *enc = fuzz_encoder();
    size_t bad = fuzz_utf8_first_invalid(data, size);
    check_policy(enc, data, size, SIMDBPE_SPECIAL_AS_TEXT, bad);
    check_policy(enc, data, size, SIMDBPE_SPECIAL_ALLOW, bad);
    check_policy(enc, data, size, SIMDBPE_SPECIAL_ERROR, bad);
    return 0;
}
