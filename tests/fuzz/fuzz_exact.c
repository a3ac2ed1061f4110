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
 * none of them.
 */
#include "fuzz.h"

#include "pretok/pretok.h"
#include "ref_bpe.h"

#define MAX_INPUT 4096

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    FUZZ_CHECK(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    FUZZ_CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The reference, loaded once for the process (the model files are the
 * ones the embedded GPT-2 model is built from). */
static const ref_model *reference(void)
{
    static ref_model rm;
    static int loaded;
    if (!loaded) {
        size_t vlen, mlen;
        char *v = read_all(SIMDBPE_GPT2_DIR "/vocab.json", &vlen);
        char *m = read_all(SIMDBPE_GPT2_DIR "/merges.txt", &mlen);
        FUZZ_CHECK(ref_model_load(&rm, v, vlen, m, mlen) == 0, "reference load");
        free(v);
        free(m);
        loaded = 1;
    }
    return &rm;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT || fuzz_utf8_first_invalid(data, size) != size)
        return 0;
    const ref_model *rm = reference();
    uint32_t *want = malloc((size + 1) * sizeof *want);
    size_t n_want = 0;
    for (size_t i = 0; i < size;) {
        size_t end = simdbpe__pretok_piece_end(data, size, i);
        FUZZ_CHECK(end > i && end <= size, "pre-token at %zu ends at %zu", i, end);
        long k = ref_encode(rm, data + i, end - i, want + n_want);
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
