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

/* The code points of the 8 bytes at p as lead bytes of 2- or 3-byte
 * characters (whatever they are), in 32-bit lanes: below U+10000. */
static simde__m256i cps8(const uint8_t *p)
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
    return simde_mm256_blendv_epi8(cp2, cp3, three);
}

/* The classes of the 8 bytes at p as lead bytes, as masks of `class`
 * bits: their words of bmp2 by one gather. */
static void classes8(const uint8_t *p, const uint32_t *bmp2, unsigned *letter, unsigned *digit,
                     unsigned *ws)
{
    simde__m256i cp = cps8(p);
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

/* The codes of the 8 bytes at p as lead bytes, each in the low four bits
 * of its 32-bit lane: their words of `codes` by one gather. */
static simde__m256i codes8(const uint8_t *p, const uint32_t *codes)
{
    simde__m256i cp = cps8(p);
    simde__m256i word = simde_mm256_i32gather_epi32((const int32_t *)(const void *)codes,
                                                    simde_mm256_srli_epi32(cp, 3), 4);
    simde__m256i shift =
        simde_mm256_slli_epi32(simde_mm256_and_si256(cp, simde_mm256_set1_epi32(7)), 2);
    return simde_mm256_and_si256(simde_mm256_srlv_epi32(word, shift), simde_mm256_set1_epi32(15));
}

/* Bit b of each of the 32 bytes of x (each below 16) as a mask. */
static uint32_t plane_of(simde__m256i x, int b)
{
    switch (b) { /* the shift count must be a constant: bit b to bit 7 */
    case 0:
        return (uint32_t)v_movemask(simde_mm256_slli_epi16(x, 7));
    case 1:
        return (uint32_t)v_movemask(simde_mm256_slli_epi16(x, 6));
    case 2:
        return (uint32_t)v_movemask(simde_mm256_slli_epi16(x, 5));
    default:
        return (uint32_t)v_movemask(simde_mm256_slli_epi16(x, 4));
    }
}

/* lead_codes as lead_classes, a gather for each eight positions with a
 * lead; the 64 codes packed into bytes (32 -> 16 -> 8 bits; vpackus works
 * within 128-bit lanes, so a permute puts the groups back in order) and
 * each bit-plane read by one movemask a half. Against moving each group's
 * four bits out by four movemasks: 45 -> 33 ns a call on the multilingual
 * corpus's blocks with leads; the family scanners gain 0-5% (CJK or
 * 2-byte text), the rest of a call overlapping their work. */
static void lead_codes_avx2(const uint8_t *s, uint64_t leads, const uint32_t *codes,
                            simdbpe__lead_codes *out)
{
    vec v0 = v_load(s), v1 = v_load(s + 32);
    uint64_t four = at_least(v0, v1, 0xF0) & leads;
    simdbpe__lead_codes r = {{0, 0, 0, 0}, at_least(v0, v1, 0xE0) & leads & ~four, four};
    leads &= ~four;
    simde__m256i g[8];
    for (unsigned i = 0; i < 8; i++)
        g[i] = (leads >> (8 * i)) & 0xFF ? codes8(s + 8 * i, codes) : simde_mm256_setzero_si256();
    /* packed, the 32-bit lanes of lo hold g0[0..3] g1[0..3] g2[0..3]
     * g3[0..3] g0[4..7] g1[4..7] g2[4..7] g3[4..7] */
    const simde__m256i order = simde_mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    simde__m256i lo = simde_mm256_permutevar8x32_epi32(
        simde_mm256_packus_epi16(simde_mm256_packus_epi32(g[0], g[1]),
                                 simde_mm256_packus_epi32(g[2], g[3])),
        order);
    simde__m256i hi = simde_mm256_permutevar8x32_epi32(
        simde_mm256_packus_epi16(simde_mm256_packus_epi32(g[4], g[5]),
                                 simde_mm256_packus_epi32(g[6], g[7])),
        order);
    for (int b = 0; b < 4; b++)
        r.bit[b] = (plane_of(lo, b) | (uint64_t)plane_of(hi, b) << 32) & leads;
    *out = r;
}

const simdbpe__kernels simdbpe__kernels_avx2 = {
    "avx2",
    validate_utf8_simd,
    classify_simd,
    classify_ext_simd,
    map_bytes_avx2,
    lead_classes_avx2,
    lead_codes_avx2,
};
