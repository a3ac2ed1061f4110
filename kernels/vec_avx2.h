/*
 * vec_avx2.h - the vector layer for the AVX2 kernels (32-byte vectors).
 *
 * Same helper names as vec_sse42.h. Byte shuffles work within each 128-bit
 * lane, so 16-entry tables are repeated in both lanes; v_prev crosses the
 * lane boundary with a permute first. Built only in avx2.c with -mavx2.
 */
#ifndef SIMDBPE_VEC_AVX2_H
#define SIMDBPE_VEC_AVX2_H

#include <simde/x86/avx2.h>

typedef simde__m256i vec;
#define VBYTES 32

static inline vec v_load(const uint8_t *p)
{
    return simde_mm256_loadu_si256((const void *)p);
}
static inline vec v_splat(uint8_t x)
{
    return simde_mm256_set1_epi8((char)x);
}
static inline vec v_table(const uint8_t t[16])
{
    return simde_mm256_broadcastsi128_si256(simde_mm_loadu_si128((const void *)t));
}
static inline vec v_and(vec a, vec b)
{
    return simde_mm256_and_si256(a, b);
}
static inline vec v_or(vec a, vec b)
{
    return simde_mm256_or_si256(a, b);
}
static inline vec v_xor(vec a, vec b)
{
    return simde_mm256_xor_si256(a, b);
}
static inline vec v_shr4(vec x)
{
    return simde_mm256_and_si256(simde_mm256_srli_epi16(x, 4), v_splat(0x0F));
}
/* Each 16-bit lane shifted left by the constant k (0..7): bit 7 of a byte
 * then holds its bit 7 - k. */
#define v_shl16(x, k) simde_mm256_slli_epi16((x), (k))
static inline vec v_adds_u8(vec a, vec b)
{
    return simde_mm256_adds_epu8(a, b);
}
static inline vec v_lookup(vec table, vec idx)
{
    return simde_mm256_shuffle_epi8(table, idx);
}
static inline vec v_subs_u8(vec a, vec b)
{
    return simde_mm256_subs_epu8(a, b);
}
static inline vec v_eq(vec a, vec b)
{
    return simde_mm256_cmpeq_epi8(a, b);
}
static inline vec v_gt_s8(vec a, vec b)
{
    return simde_mm256_cmpgt_epi8(a, b);
}
static inline uint32_t v_movemask(vec x)
{
    return (uint32_t)simde_mm256_movemask_epi8(x);
}
static inline int v_any(vec x)
{
    return !simde_mm256_testz_si256(x, x);
}
/* cur[-N..32-N): the permute gives (high lane of prev, low lane of cur),
 * from which alignr takes the N bytes that precede each lane of cur. */
#define v_prev(cur, prev, N)                                                                       \
    simde_mm256_alignr_epi8((cur), simde_mm256_permute2x128_si256((prev), (cur), 0x21), 16 - (N))

#endif
