/*
 * avx2.c - the AVX2 kernel set (32-byte vectors), built with -mavx2.
 *
 * Only this file is compiled for AVX2; the dispatcher calls it only on a
 * CPU that has it.
 */
#include "vec_avx2.h"

#include "body.inc.h"

/* Byte -> id with plain loads, eight bytes per step. AVX2's vpgatherdd
 * was measured slower than scalar loads on this AMD EPYC (Zen) machine
 * (1.0-1.3 GB/s against 1.6-3.3), so the AVX2 set does not use it; the
 * explicit shifts also keep the compiler from vectorising into gathers. */
static void map_bytes_avx2(const uint8_t *s, size_t len, const uint32_t table[256],
                           uint32_t *out)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        for (int k = 0; k < 8; k++)
            out[i + (size_t)k] = table[(w >> (8 * k)) & 0xFF];
    }
    for (; i < len; i++)
        out[i] = table[s[i]];
}

const simdbpe__kernels simdbpe__kernels_avx2 = {
    "avx2",
    validate_utf8_simd,
    classify_simd,
    map_bytes_avx2,
};
