/*
 * fuzz_exact.c - property: simdbpe's ids are the reference BPE's.
 *
 * For any valid UTF-8 input of up to 4 KB, the ids simdbpe_encode gives
 * (special tokens as text) are, in order, those of the test suite's
 * textbook BPE (ref_bpe.h: merges.txt and vocab.json parsed on its own, the
 * lowest-rank pair merged by a full rescan) on each pre-token that the
 * one-code-point-at-a-time scanner (simdbpe__pretok_piece_end, itself
 * checked against HF on the golden documents by test_pretok) finds. The
 * input is encoded twice, the second time through tables and caches that
 * the first filled. This reaches every path of the encoder - hot and warm
 * tables, whole-token map, caches, words cut where no merge joins two
 * bytes, short and long BPE, the pair filter - against code that shares
 * none of them. The reference (exact_ref.c) remembers its answers, as
 * most pre-tokens of a fuzzed input are ones an earlier input had.
 */
#include "fuzz.h"

#include "exact_ref.h"
#include "pretok/pretok.h"

#define MAX_INPUT 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT || fuzz_utf8_first_invalid(data, size) != size)
        return 0;
    uint32_t *want = malloc((size + 1) * sizeof *want);
    size_t n_want = 0;
    for (size_t i = 0; i < size;) {
        size_t end = simdbpe__pretok_piece_end(data, size, i);
        FUZZ_CHECK(end > i && end <= size, "pre-token at %zu ends at %zu", i, end);
        long k = exact_ref_encode(data + i, end - i, want + n_want);
        FUZZ_CHECK(k >= 1, "the reference cannot encode the pre-token at byte %zu", i);
        n_want += (size_t)k;
        i = end;
    }
    simdbpe_encoder *enc = fuzz_encoder();
    for (int pass = 0; pass < 2; pass++) {
        const uint32_t *ids;
        size_t n;
        simdbpe_error err;
        simdbpe_status st = simdbpe_encode(enc, (const char *)data, size, NULL, &ids, &n, &err);
        FUZZ_CHECK(st == SIMDBPE_OK, "encode (pass %d): %s", pass, err.message);
        size_t at = 0;
        while (at < n && at < n_want && ids[at] == want[at])
            at++;
        FUZZ_CHECK(at == n && at == n_want,
                   "pass %d: %zu ids, the reference %zu; first difference at id %zu", pass, n,
                   n_want, at);
    }
    free(want);
    return 0;
}
