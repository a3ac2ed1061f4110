/*
 * fuzz.h - helpers shared by the fuzz targets in tests/fuzz/.
 *
 * Each target is one file fuzz_<name>.c that defines
 * LLVMFuzzerTestOneInput() and checks one property. It is built twice:
 * with clang -fsanitize=fuzzer (SIMDBPE_FUZZ=ON) for fuzzing, and with the
 * ordinary compiler linked to replay_main.c for replaying the committed
 * corpus under ctest. So targets are plain C11 and use nothing from
 * libFuzzer beyond the entry point.
 *
 * The UTF-8 helpers here are a second, independent implementation written
 * from the definition (Unicode Table 3-7 as code point ranges), not from
 * the library's kernels, so that a bug shared by both is unlikely.
 *
 * Invariants: every check that fails prints what and where on stderr and
 * calls abort(), which libFuzzer and the replay driver both report as a
 * crash with the input that caused it.
 */
#ifndef SIMDBPE_FUZZ_H
#define SIMDBPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbpe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Marks harness code that computes what a property compares with (the
 * definitions below, a target's references and comparison loops): clang
 * leaves it without coverage instrumentation, as tests/fuzz.cmake does for
 * the reference files, so that libFuzzer is steered by the library's
 * branches and not by the harness's loops, which instrumented took a
 * large part of each input's time. The checks themselves are unchanged.
 * noinline: clang 14 inlines such a function into an instrumented caller,
 * whose instrumentation then covers it after all.
 */
#if defined(__clang__)
#define FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#else
#define FUZZ_NO_COVERAGE
#endif

#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,  \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* Makes a folder of the target's own for the files it runs the library
 * on, on /dev/shm (memory) when there is one: a disk's file system took a
 * large part of an input's time. `dir` (64 bytes) gets its path. */
static inline void fuzz_make_dir(char dir[64], const char *target)
{
    snprintf(dir, 64, "%s/simdbpe-fuzz-%s-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", target);
    FUZZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
}

/* The embedded GPT-2 model, loaded once and kept for the process: loading
 * it takes tens of milliseconds, far longer than one fuzz input. */
static inline const simdbpe_model *fuzz_gpt2(void)
{
    static simdbpe_model *model;
    if (!model) {
        simdbpe_error err;
        simdbpe_status st = simdbpe_model_load_gpt2(&model, &err);
        FUZZ_CHECK(st == SIMDBPE_OK, "cannot load GPT-2: %s", err.message);
    }
    return model;
}

/*
 * One GPT-2 encoder for the whole process. Creating one per input would
 * cost more than the input (it zeroes a cache of megabytes), so inputs
 * share it and its cache; each target encodes every input twice to check
 * that a warm cache repeats the cold result, and the replay driver runs
 * files in name order so a replay is repeatable.
 */
static inline simdbpe_encoder *fuzz_encoder(void)
{
    static simdbpe_encoder *enc;
    if (!enc)
        FUZZ_CHECK(simdbpe_encoder_new(fuzz_gpt2(), &enc, NULL) == SIMDBPE_OK, "encoder_new");
    return enc;
}

/*
 * Decodes the bits of the k bytes b[0..k) as the start of an n-byte
 * sequence whose missing bytes are all `fill` (0x80 gives the smallest
 * code point with this prefix, 0xBF the largest).
 */
FUZZ_NO_COVERAGE
static inline uint32_t fuzz_utf8_bits(const uint8_t *b, size_t k, size_t n, uint8_t fill)
{
    static const uint8_t lead_mask[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t cp = b[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | ((i < k ? b[i] : fill) & 0x3F);
    return cp;
}

/* Whether some scalar value encoded in n bytes (shortest form, no
 * surrogates) lies in [lo, hi]. */
FUZZ_NO_COVERAGE
static inline int fuzz_utf8_range_ok(size_t n, uint32_t lo, uint32_t hi)
{
    switch (n) {
    case 1:
        return lo <= 0x7F;
    case 2:
        return hi >= 0x80 && lo <= 0x7FF;
    case 3:
        return (hi >= 0x800 && lo <= 0xD7FF) || (hi >= 0xE000 && lo <= 0xFFFF);
    default:
        return hi >= 0x10000 && lo <= 0x10FFFF;
    }
}

/*
 * At s[0] (len >= 1): returns how many bytes form the longest prefix of
 * some well-formed sequence (at least 1: a byte that starts nothing is
 * replaced on its own), and sets *complete when that prefix is a whole
 * sequence. This is Unicode's "maximal subpart" rule, which Python's
 * bytes.decode("utf-8", "replace") follows.
 */
FUZZ_NO_COVERAGE
static inline size_t fuzz_utf8_subpart(const uint8_t *s, size_t len, int *complete)
{
    size_t n;
    uint8_t c = s[0];
    if (c < 0x80)
        n = 1;
    else if ((c & 0xE0) == 0xC0)
        n = 2;
    else if ((c & 0xF0) == 0xE0)
        n = 3;
    else if ((c & 0xF8) == 0xF0)
        n = 4;
    else {
        *complete = 0;
        return 1;
    }
    size_t k = 0; /* longest valid prefix found so far */
    for (size_t i = 1; i <= n && i <= len; i++) {
        if (i > 1 && (s[i - 1] & 0xC0) != 0x80)
            break;
        uint32_t lo = fuzz_utf8_bits(s, i, n, 0x80), hi = fuzz_utf8_bits(s, i, n, 0xBF);
        if (!fuzz_utf8_range_ok(n, lo, hi))
            break;
        k = i;
    }
    *complete = k == n;
    return k ? k : 1;
}

/* The offset of the first byte of the first ill-formed sequence, or len. */
FUZZ_NO_COVERAGE
static inline size_t fuzz_utf8_first_invalid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        int complete;
        size_t k = fuzz_utf8_subpart(s + i, len - i, &complete);
        if (!complete)
            return i;
        i += k;
    }
    return len;
}

/*
 * Python's data.decode("utf-8", "replace").encode("utf-8"): every maximal
 * invalid subpart becomes U+FFFD. Returns a malloc'ed buffer (at most
 * 3 * len + 1 bytes) and its length in *out_len.
 */
FUZZ_NO_COVERAGE
static inline uint8_t *fuzz_utf8_replace(const uint8_t *s, size_t len, size_t *out_len)
{
    uint8_t *out = malloc(3 * len + 1);
    FUZZ_CHECK(out != NULL, "out of memory");
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        int complete;
        size_t k = fuzz_utf8_subpart(s + i, len - i, &complete);
        if (complete) {
            memcpy(out + o, s + i, k);
            o += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
        }
        i += k;
    }
    *out_len = o;
    return out;
}

/* Decodes ids with `model` into a malloc'ed buffer of exactly the size
 * needed (so an overrun is caught by AddressSanitizer). */
static inline uint8_t *fuzz_decode(const simdbpe_model *model, const uint32_t *ids, size_t n,
                                   size_t *out_len)
{
    simdbpe_error err;
    size_t need = 0;
    simdbpe_status st = simdbpe_decode(model, ids, n, NULL, 0, &need, &err);
    FUZZ_CHECK(st == SIMDBPE_OK || st == SIMDBPE_ERR_BUFFER_TOO_SMALL, "decode sizing: %s",
               err.message);
    uint8_t *out = malloc(need ? need : 1);
    FUZZ_CHECK(out != NULL, "out of memory");
    st = simdbpe_decode(model, ids, n, out, need, out_len, &err);
    FUZZ_CHECK(st == SIMDBPE_OK, "decode: %s", err.message);
    FUZZ_CHECK(*out_len == need, "decode wrote %zu bytes, sizing said %zu", *out_len, need);
    return out;
}

/*
 * Whether the bytes hold a run of digits whose value is in [10^6, 2^24):
 * an id the loaders accept but pay for in time and memory (their per-id
 * arrays are dense; larger ids they refuse at once). A vocabulary of
 * 20 bytes with the id 16777215 takes 1.5 s to load (15 s under ASan);
 * such ids are covered by tests/model/test_model.c and the seeds with sparse
 * ids, and the loader targets skip them so that fuzzing is not slowed a
 * hundredfold.
 */
static inline int fuzz_has_huge_number(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    size_t run = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] >= '0' && p[i] <= '9') {
            v = run < 12 ? v * 10 + (uint64_t)(p[i] - '0') : v;
            run++;
            continue;
        }
        if (run >= 7 && run < 12 && v >= 1000000 && v < (1u << 24))
            return 1;
        v = 0;
        run = 0;
    }
    return 0;
}

/* A failed load: a status other than OK that the error repeats, no model,
 * and a terminated, non-empty message. */
static inline void fuzz_check_load_failed(simdbpe_status st, const simdbpe_model *m,
                                          const simdbpe_error *err)
{
    FUZZ_CHECK(m == NULL, "a failed load returned a model");
    FUZZ_CHECK(memchr(err->message, '\0', sizeof err->message) != NULL,
               "error message not terminated");
    FUZZ_CHECK(err->status == st && err->message[0] != '\0',
               "failed load (%s) without a message", simdbpe_status_name(st));
}

/*
 * A loaded model works: `text` (valid UTF-8, unchanged by NFC) encodes
 * with specials as text and allowed, with and without the post-processor's
 * ids, and decodes back to itself. Every loader refuses a vocabulary
 * without a token for each of the 256 bytes, so any text must encode. The
 * post-processor's ids come around exactly the ids of the plain encoding.
 * `enc` is an encoder of `m`.
 */
static inline void fuzz_check_roundtrip(const simdbpe_model *m, simdbpe_encoder *enc,
                                        const char *text, size_t len)
{
    FUZZ_CHECK(simdbpe_model_vocab_size(m) >= 256, "vocab size %u", simdbpe_model_vocab_size(m));
    for (int policy = SIMDBPE_SPECIAL_AS_TEXT; policy <= SIMDBPE_SPECIAL_ALLOW; policy++) {
        simdbpe_encode_options opts = {.special = (simdbpe_special_policy)policy,
                                       .errors = SIMDBPE_UTF8_STRICT};
        const uint32_t *ids;
        size_t n, out_len;
        simdbpe_error err;
        simdbpe_status st = simdbpe_encode(enc, text, len, &opts, &ids, &n, &err);
        FUZZ_CHECK(st == SIMDBPE_OK, "encode with a loaded model: %s", err.message);
        uint8_t *out = fuzz_decode(m, ids, n, &out_len);
        FUZZ_CHECK(out_len == len && memcmp(out, text, len) == 0,
                   "policy %d: round trip with a loaded model gave %zu bytes of %zu", policy,
                   out_len, len);
        free(out);
        uint32_t *plain = malloc((n ? n : 1) * sizeof *plain);
        FUZZ_CHECK(plain != NULL, "out of memory");
        memcpy(plain, ids, n * sizeof *plain);
        size_t n_plain = n;
        opts.add_special_tokens = 1;
        st = simdbpe_encode(enc, text, len, &opts, &ids, &n, &err);
        FUZZ_CHECK(st == SIMDBPE_OK, "encode with add_special_tokens: %s", err.message);
        size_t pre = 0;
        while (pre + n_plain <= n && memcmp(ids + pre, plain, n_plain * sizeof *plain) != 0)
            pre++;
        FUZZ_CHECK(pre + n_plain <= n, "add_special_tokens: the plain ids are not inside");
        out = fuzz_decode(m, ids, n, &out_len); /* the added ids are tokens */
        free(out);
        free(plain);
    }
}

/* A model a loader returned: it round-trips `text` (fuzz_check_roundtrip)
 * with an encoder of its own, and finds each special token by its text. */
static inline void fuzz_check_loaded(const simdbpe_model *m, const char *text, size_t len)
{
    simdbpe_encoder_options eo = {.cache_mb = 1}; /* the smallest: one per input */
    simdbpe_encoder *enc;
    FUZZ_CHECK(simdbpe_encoder_new_with(m, &eo, &enc, NULL) == SIMDBPE_OK, "encoder_new");
    fuzz_check_roundtrip(m, enc, text, len);
    for (size_t i = 0; i < simdbpe_model_special_count(m); i++) {
        uint32_t id, again;
        const char *sp;
        size_t sp_len;
        FUZZ_CHECK(simdbpe_model_special_at(m, i, &id, &sp, &sp_len) == SIMDBPE_OK, "special_at");
        FUZZ_CHECK(simdbpe_model_special_id(m, sp, sp_len, &again) == SIMDBPE_OK && again == id,
                   "special %zu (id %u) not found by its text", i, id);
    }
    simdbpe_encoder_free(enc);
}

#endif
