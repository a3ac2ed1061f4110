/*
 * avx2.c - the AVX2 kernel set (32-byte vectors), built with -mavx2.
 *
 * Only this file is compiled for AVX2; the dispatcher calls it only on a
 * CPU that has it.
 */
#include "vec_avx2.h"

#include "body.inc.h"

/* Eight bytes widened to 32-bit indices, then one gather of their ids. */
static void map_bytes_avx2(const uint8_t *s, size_t len, const uint32_t table[256],
                           uint32_t *out)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        simde__m128i b = simde_mm_loadl_epi64((const void *)(s + i));
        simde__m256i idx = simde_mm256_cvtepu8_epi32(b);
        simde__m256i ids = simde_mm256_i32gather_epi32((const int32_t *)table, idx, 4);
        simde_mm256_storeu_si256((void *)(out + i), ids);
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
