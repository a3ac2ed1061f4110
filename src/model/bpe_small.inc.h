/*
 * bpe_small.inc.h - BPE of a small word (up to SMALL_WORD bytes: nearly
 * every word the encoder meets for the first time), on arrays packed to
 * the left.
 *
 * Symbol i of the k left has id[i], and its pair with symbol i + 1 the
 * merge rank[i] (NONE if none) making made[i]; rank[k - 1] and the
 * padding after it are NONE. Each step finds the lowest rank, leftmost on
 * ties (the first position of the minimum), writes the merged id at i and
 * moves everything after i + 1 one place to the left, then looks up the
 * two pairs the merge changed. With AVX2 the minimum and its first
 * position take a few vector instructions over eight ranks at a time,
 * and the moves a load and a store per eight; without, plain loops.
 *
 * Included by bpe.c (the baseline build) and bpe_small_avx2.c (AVX2),
 * which name the function SIMDBPE__BPE_SMALL_FN.
 */
#include <string.h>

#include "bpe_pairs.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

/* Room for the words and a vector's reach past them. */
#define SMALL_PAD (SMALL_WORD + 8)

#if defined(__AVX2__)
static inline __m256i load8(const uint32_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

static inline void store8(uint32_t *p, __m256i x)
{
    _mm256_storeu_si256((__m256i *)(void *)p, x);
}

/* The lowest of rank[0..k) (k <= SMALL_WORD, the rest up to a multiple
 * of 8 NONE) in *best, and its first position. */
static inline size_t lowest(const uint32_t *rank, size_t k, uint32_t *best)
{
    __m256i mn = load8(rank);
    for (size_t j = 8; j < k; j += 8)
        mn = _mm256_min_epu32(mn, load8(rank + j));
    mn = _mm256_min_epu32(mn, _mm256_permute2x128_si256(mn, mn, 1));
    mn = _mm256_min_epu32(mn, _mm256_shuffle_epi32(mn, 0x4E));
    mn = _mm256_min_epu32(mn, _mm256_shuffle_epi32(mn, 0xB1));
    *best = (uint32_t)_mm256_cvtsi256_si32(mn);
    for (size_t j = 0;; j += 8) {
        unsigned eq = (unsigned)_mm256_movemask_ps(
            _mm256_castsi256_ps(_mm256_cmpeq_epi32(load8(rank + j), mn)));
        if (eq)
            return j + (size_t)__builtin_ctz(eq);
    }
}

/* a[i + 1 .. k) = a[i + 2 .. k + 1): every vector loaded before any is
 * stored (they overlap). */
static inline void drop_at(uint32_t *a, size_t i, size_t k)
{
    if (k <= i + 9) {
        store8(a + i + 1, load8(a + i + 2));
    } else if (k <= i + 17) {
        __m256i x = load8(a + i + 2), y = load8(a + i + 10);
        store8(a + i + 1, x);
        store8(a + i + 9, y);
    } else {
        memmove(a + i + 1, a + i + 2, (k - i - 1) * sizeof *a);
    }
}
#else
static inline size_t lowest(const uint32_t *rank, size_t k, uint32_t *best)
{
    size_t at = 0;
    for (size_t j = 1; j < k; j++)
        at = rank[j] < rank[at] ? j : at;
    *best = rank[at];
    return at;
}

static inline void drop_at(uint32_t *a, size_t i, size_t k)
{
    memmove(a + i + 1, a + i + 2, (k - i - 1) * sizeof *a);
}
#endif

simdbpe_status SIMDBPE__BPE_SMALL_FN(const simdbpe_model *m, simdbpe__bpe_scratch *sc,
                                     const uint8_t *s, size_t n, uint32_t *out, size_t *n_out)
{
    uint32_t id[SMALL_PAD], rank[SMALL_PAD], made[SMALL_PAD];
    for (size_t i = 0; i < n; i++)
        id[i] = m->byte_id[s[i]];
    /* The first pairs are byte pairs (model.h: rank + 1, 0 for none). */
    for (size_t i = 0; i + 1 < n; i++) {
        simdbpe__byte_pair bp = sc->byte_pairs[s[i] << 8 | s[i + 1]];
        rank[i] = bp.rank1 - 1;
        made[i] = bp.id;
    }
    for (size_t i = n - 1; i < SMALL_PAD; i++)
        rank[i] = NONE;
    size_t k = n; /* symbols */
    for (;;) {
        uint32_t best;
        size_t i = lowest(rank, k - 1, &best);
        if (best == NONE)
            break;
        id[i] = made[i];
        drop_at(id, i, k);
        drop_at(rank, i, k);
        drop_at(made, i, k);
        k--;
        rank[k - 1] = NONE; /* what moved into the last pair's place */
        if (i + 1 < k) {
            pair_entry p = pair_find(m, sc, id[i], id[i + 1]);
            rank[i] = p.rank;
            made[i] = p.id;
        } else {
            rank[i] = NONE;
        }
        if (i > 0) {
            pair_entry p = pair_find(m, sc, id[i - 1], id[i]);
            rank[i - 1] = p.rank;
            made[i - 1] = p.id;
        }
    }
    memcpy(out + *n_out, id, k * sizeof *out);
    *n_out += k;
    return SIMDBPE_OK;
}
