/*
 * common.h - helpers shared by every stage of the library (internal).
 *
 * Internal names shared between files are prefixed `simdbpe__`; file-local
 * helpers are `static` and unprefixed.
 */
#ifndef SIMDBPE_COMMON_H
#define SIMDBPE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simdbpe.h"

#if defined(__GNUC__) || defined(__clang__)
#define SIMDBPE_LIKELY(x) __builtin_expect(!!(x), 1)
#define SIMDBPE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SIMDBPE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SIMDBPE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define SIMDBPE_LIKELY(x) (x)
#define SIMDBPE_UNLIKELY(x) (x)
#define SIMDBPE_PRINTF(f, a)
#define SIMDBPE_ALWAYS_INLINE inline
#endif

/*
 * Fills `err` (if not NULL) with `status`, a position and a formatted
 * message, and returns `status` so callers can write
 * `return simdbpe__fail(err, SIMDBPE_ERR_VOCAB, ...);`.
 */
simdbpe_status simdbpe__fail(simdbpe_error *err, simdbpe_status status, uint64_t byte_offset,
                             uint64_t line, const char *fmt, ...) SIMDBPE_PRINTF(5, 6);

/* Resets `err` (if not NULL) to "no error". */
void simdbpe__error_clear(simdbpe_error *err);

/* Writes `len` bytes of `s` into `out` (size `cap`) as a printable, quoted
 * C-style string, truncated with "..." if needed; used in error messages. */
void simdbpe__quote(char *out, size_t cap, const uint8_t *s, size_t len);

/* Growable arrays: returns 0 on success, -1 when out of memory.
 * `*cap` is in elements. */
int simdbpe__grow(void **buf, size_t *cap, size_t need, size_t elem_size);

/* `bytes` of zeroed memory aligned to 64 bytes (to 2 MB, in transparent
 * huge pages, on Linux); *base and *mapped are what simdbpe__huge_unmap
 * takes. NULL if out of memory. huge.c. */
void *simdbpe__huge_map(size_t bytes, void **base, size_t *mapped);
void simdbpe__huge_unmap(void *base, size_t mapped);
/* A larger simdbpe__huge_map region (`bytes`) holding the first `keep`
 * bytes of `at`, a region of the mapping old_base, old_mapped, which is
 * released: on Linux its pages are moved by mremap, not copied and
 * faulted in again. NULL if out of memory (the old region untouched). */
void *simdbpe__huge_grow(void *old_base, size_t old_mapped, void *at, size_t keep, size_t bytes,
                         void **base, size_t *mapped);

/* Little helpers for hashing short byte strings. */
uint64_t simdbpe__hash_bytes(const void *data, size_t len);

static inline uint64_t simdbpe__hash_u64(uint64_t x)
{
    /* A multiply-xorshift finalizer (Murmur3 fmix64 constants): full
     * avalanche so that open addressing with a power-of-two mask works. */
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The longest token, in bytes, a model may have: the loader refuses a
 * merge that makes a longer one, and the trainer makes none (a pair whose
 * merge would be longer is never chosen), so every trained model loads. */
#define SIMDBPE__MAX_TOKEN_BYTES 1024

#endif
