/*
 * sse42.c - the SSE4.2 kernel set (16-byte vectors), built with -msse4.2.
 *
 * Only this file is compiled for SSE4.2; the dispatcher calls it only on a
 * CPU that has it. Byte-to-id mapping has no gather before AVX2, so it is
 * the scalar loop.
 */
#include "vec_sse42.h"

#include "body.inc.h"

static void map_bytes_sse42(const uint8_t *s, size_t len, const uint32_t table[256],
                            uint32_t *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = table[s[i]];
}

const simdbpe__kernels simdbpe__kernels_sse42 = {
    "sse42",
    validate_utf8_simd,
    classify_simd,
    classify_ext_simd,
    map_bytes_sse42,
    simdbpe__lead_classes_scalar,
    simdbpe__lead_codes_scalar,
};
