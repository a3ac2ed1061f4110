/*
 * vec_sse42.h - the vector layer for the SSE4.2 kernels (16-byte vectors).
 *
 * The kernel bodies (*.inc.h) are written once against these helpers; the
 * AVX2 file provides the same names for 32-byte vectors. Built only in
 * sse42.c with -msse4.2, so SIMDe maps every helper to one instruction.
 */
#ifndef SIMDBPE_VEC_SSE42_H
#define SIMDBPE_VEC_SSE42_H

#include <simde/x86/sse4.2.h>

typedef simde__m128i vec;
#define VBYTES 16

static inline vec v_load(const uint8_t *p)
{
    return simde_mm_loadu_si128((const void *)p);
}
static inline vec v_splat(uint8_t x)
{
    return simde_mm_set1_epi8((char)x);
}
/* A 16-entry table for v_lookup. */
static inline vec v_table(const uint8_t t[16])
{
    return simde_mm_loadu_si128((const void *)t);
}
static inline vec v_and(vec a, vec b)
{
    return simde_mm_and_si128(a, b);
}
static inline vec v_or(vec a, vec b)
{
    return simde_mm_or_si128(a, b);
}
static inline vec v_xor(vec a, vec b)
{
    return simde_mm_xor_si128(a, b);
}
/* Each byte shifted right by 4: its high nibble. */
static inline vec v_shr4(vec x)
{
    return simde_mm_and_si128(simde_mm_srli_epi16(x, 4), v_splat(0x0F));
}
/* Each 16-bit lane shifted left by the constant k (0..7): bit 7 of a byte
 * then holds its bit 7 - k. */
#define v_shl16(x, k) simde_mm_slli_epi16((x), (k))
static inline vec v_adds_u8(vec a, vec b)
{
    return simde_mm_adds_epu8(a, b);
}
/* table[idx] per byte, for idx in 0..15. */
static inline vec v_lookup(vec table, vec idx)
{
    return simde_mm_shuffle_epi8(table, idx);
}
static inline vec v_subs_u8(vec a, vec b)
{
    return simde_mm_subs_epu8(a, b);
}
static inline vec v_eq(vec a, vec b)
{
    return simde_mm_cmpeq_epi8(a, b);
}
static inline vec v_gt_s8(vec a, vec b)
{
    return simde_mm_cmpgt_epi8(a, b);
}
static inline uint32_t v_movemask(vec x)
{
    return (uint32_t)simde_mm_movemask_epi8(x) & 0xFFFFu;
}
static inline int v_any(vec x)
{
    return !simde_mm_testz_si128(x, x);
}
/* The vector of bytes cur[-N..VBYTES-N), taking the first N from the end
 * of `prev`. */
#define v_prev(cur, prev, N) simde_mm_alignr_epi8((cur), (prev), 16 - (N))

#endif
