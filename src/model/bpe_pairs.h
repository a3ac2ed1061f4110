/*
 * bpe_pairs.h - BPE's lookup of a pair of adjacent symbols (internal to
 * bpe.c and the small-word BPE, bpe_small.inc.h).
 */
#ifndef SIMDBPE_BPE_PAIRS_H
#define SIMDBPE_BPE_PAIRS_H

#include <stdlib.h>

#include "model.h"

#define NONE UINT32_MAX

/*
 * A small direct-mapped cache of merge lookups, (left, right) -> (rank,
 * new id) or "no merge", in front of the model's perfect hash. Words repeat
 * pairs a lot (a 5 MB run of digits has 100 distinct pairs), and one probe
 * here is a multiply and one L1/L2 load where the perfect hash costs two
 * mixes and two dependent loads.
 */
#define PAIR_BITS 14

typedef struct simdbpe__pair_entry {
    uint64_t key; /* left << 32 | right, or UINT64_MAX when empty */
    uint32_t rank, id; /* rank NONE: not a merge */
} pair_entry;

static inline size_t pair_index(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - PAIR_BITS));
}

/* The merge of the pair (left, right) = key in the model's perfect hash. */
static inline pair_entry merge_entry(const simdbpe_model *m, uint64_t key, uint32_t left,
                                     uint32_t right)
{
    const simdbpe__merge_slot *slot = simdbpe__merge_find(m, left, right);
    return (pair_entry){key, slot ? slot->rank : NONE, slot ? slot->id : NONE};
}

/* The merge (rank, id) of the pair; rank NONE if it is not one. The pair
 * filter answers most pairs that are not (model.h), the cache most that
 * are; one branch asks whether either did, since which one answers is
 * as good as random. Without a cache (out of memory) the filter and the
 * perfect hash answer alone. */
static inline pair_entry pair_find(const simdbpe_model *m, simdbpe__bpe_scratch *s,
                                   uint32_t left, uint32_t right)
{
    uint64_t key = (uint64_t)left << 32 | right;
    int may = simdbpe__pair_may_merge(m, key);
    if (SIMDBPE_UNLIKELY(!s->pairs)) {
        s->pairs = malloc(sizeof(pair_entry) << PAIR_BITS);
        if (!s->pairs)
            return may ? merge_entry(m, key, left, right) : (pair_entry){key, NONE, NONE};
        memset(s->pairs, 0xFF, sizeof(pair_entry) << PAIR_BITS);
    }
    pair_entry *e = &s->pairs[pair_index(key)];
    pair_entry c = *e;
    if (SIMDBPE_LIKELY(!may | (c.key == key))) {
        c.rank = may ? c.rank : NONE;
        c.id = may ? c.id : NONE;
        return c;
    }
    return *e = merge_entry(m, key, left, right);
}

#endif
