/*
 * avx2.c - the AVX2 kernel set (32-byte vectors), built with -mavx2.
 *
 * Only this file is compiled for AVX2; the dispatcher calls it only on a
 * CPU that has it.
 */
#include "vec_avx2.h"

#include "body.inc.h"

/* Byte -> id with plain loads, eight bytes per step. AVX2's vpgatherdd
 * was measured slower than these loads on Zen (bench/README.md), so the
 * AVX2 set does not use it; the explicit shifts also keep the compiler
 * from vectorising into gathers. */
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

/* Bit i: byte i of the 64-byte block (v0, v1) is at least `min`. */
static uint64_t at_least(vec v0, vec v1, uint8_t min)
{
    vec m = v_splat(min);
    return v_movemask(v_eq(simde_mm256_max_epu8(v0, m), v0)) |
           (uint64_t)v_movemask(v_eq(simde_mm256_max_epu8(v1, m), v1)) << 32;
}

/* The classes of the 8 bytes at p as lead bytes of 2- or 3-byte
 * characters (whatever they are), as masks of `class` bits: the code
 * points in 32-bit lanes, their words of bmp2 by one gather. */
static void classes8(const uint8_t *p, const uint32_t *bmp2, unsigned *letter, unsigned *digit,
                     unsigned *ws)
{
    simde__m256i c0 = simde_mm256_cvtepu8_epi32(simde_mm_loadl_epi64((const void *)p));
    simde__m256i c1 = simde_mm256_cvtepu8_epi32(simde_mm_loadl_epi64((const void *)(p + 1)));
    simde__m256i c2 = simde_mm256_cvtepu8_epi32(simde_mm_loadl_epi64((const void *)(p + 2)));
    simde__m256i x3f = simde_mm256_set1_epi32(0x3F);
    simde__m256i low1 = simde_mm256_and_si256(c1, x3f);
    simde__m256i cp2 = simde_mm256_or_si256(
        simde_mm256_slli_epi32(simde_mm256_and_si256(c0, simde_mm256_set1_epi32(0x1F)), 6), low1);
    simde__m256i cp3 = simde_mm256_or_si256(
        simde_mm256_or_si256(
            simde_mm256_slli_epi32(simde_mm256_and_si256(c0, simde_mm256_set1_epi32(0x0F)), 12),
            simde_mm256_slli_epi32(low1, 6)),
        simde_mm256_and_si256(c2, x3f));
    simde__m256i three = simde_mm256_cmpgt_epi32(c0, simde_mm256_set1_epi32(0xDF));
    simde__m256i cp = simde_mm256_blendv_epi8(cp2, cp3, three);
    simde__m256i word = simde_mm256_i32gather_epi32((const int32_t *)(const void *)bmp2,
                                                    simde_mm256_srli_epi32(cp, 4), 4);
    simde__m256i shift =
        simde_mm256_slli_epi32(simde_mm256_and_si256(cp, simde_mm256_set1_epi32(15)), 1);
    simde__m256i cls =
        simde_mm256_and_si256(simde_mm256_srlv_epi32(word, shift), simde_mm256_set1_epi32(3));
    *letter = (unsigned)simde_mm256_movemask_ps(
        simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(cls, simde_mm256_set1_epi32(1))));
    *digit = (unsigned)simde_mm256_movemask_ps(
        simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(cls, simde_mm256_set1_epi32(2))));
    *ws = (unsigned)simde_mm256_movemask_ps(
        simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(cls, simde_mm256_set1_epi32(3))));
}

/* Eight positions at a time, each looked up as if it were a lead (the
 * gather is one instruction for eight table words, where the scalar loop
 * pays a dependent load and a poorly predicted branch per character:
 * multilingual text alternates letters and marks); groups without a lead
 * are skipped (bench/README.md has the gain). */
static int lead_classes_avx2(const uint8_t *s, uint64_t leads, const uint32_t *bmp2,
                             simdbpe__lead_classes *out)
{
    vec v0 = v_load(s), v1 = v_load(s + 32);
    if (at_least(v0, v1, 0xF0) & leads)
        return 0;
    simdbpe__lead_classes r = {0, 0, 0, at_least(v0, v1, 0xE0) & leads};
    for (unsigned g = 0; g < 8; g++) {
        unsigned here = (unsigned)(leads >> (8 * g)) & 0xFF, letter, digit, ws;
        if (!here)
            continue;
        classes8(s + 8 * g, bmp2, &letter, &digit, &ws);
        r.letter |= (uint64_t)(letter & here) << (8 * g);
        r.digit |= (uint64_t)(digit & here) << (8 * g);
        r.ws |= (uint64_t)(ws & here) << (8 * g);
    }
    *out = r;
    return 1;
}

const simdbpe__kernels simdbpe__kernels_avx2 = {
    "avx2",
    validate_utf8_simd,
    classify_simd,
    classify_ext_simd,
    map_bytes_avx2,
    lead_classes_avx2,
};
