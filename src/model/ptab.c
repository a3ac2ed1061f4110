/*
 * ptab.c - the piece table's shared parts and a model's prefilled table
 * (see ptab.h).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "ptab.h"

const uint64_t simdbpe__keep_lo[17] = {
    0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL,
    0xFFFFFFFFFFFFFFULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL};
const uint64_t simdbpe__keep_hi[17] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFULL,
    0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL, ~0ULL};

void simdbpe__ptab_rehash(simdbpe__ptab *to, const simdbpe__ptab *from)
{
    size_t n = (size_t)1 << from->bits;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < 4; j += 2) {
            const uint64_t *p = &from->b[i].key[j];
            if (p[0] != 0) {
                simdbpe__pslot_set(simdbpe__ptab_free_slot(to, simdbpe__pkey_hash(p[0], p[1])),
                                   p[0], p[1], p[4], p[5]);
                to->n++;
            }
        }
}

/* A model's table and byte pairs, with the memory they live in. */
struct simdbpe__model_ptab {
    simdbpe__ptab tab;
    simdbpe__byte_pair *byte_pairs;
    void *base, *pairs_base;
    size_t mapped, pairs_mapped;
};

/* Buckets for n tokens: half full at most, and an encoder's copy has
 * room for as many pieces again before it grows. */
static unsigned bits_for(size_t n)
{
    unsigned bits = 9;
    while (((size_t)1 << bits) < n)
        bits++;
    return bits;
}

/* Whether whole token w goes in the table: up to 16 bytes, and no 0xFF
 * byte (such a token is never a piece of valid UTF-8, and ~0xFF = 0 would
 * make its key look like a shorter one's, or like an empty slot's). */
static bool in_table(const simdbpe__whole_slot *w)
{
    if (w->len > SIMDBPE__SHORT_PIECE)
        return false;
    /* A byte of x is 0xFF <=> that byte of ~x is 0; bytes past the token
     * are made 0xFF in ~x so that only its own count. */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t a = ~w->lo | ~simdbpe__keep_lo[w->len], b = ~w->hi | ~simdbpe__keep_hi[w->len];
    return (((a - ones) & ~a) | ((b - ones) & ~b)) & highs ? false : true;
}

static void release(struct simdbpe__model_ptab *p);

/* Tokens go in by id, which is by rank for byte-level models (the byte
 * tokens, then merges in the order they were learned, roughly the order
 * of how common they are): an insert takes the first empty slot from its
 * home pair on, so the earlier ones are in their home pair, found without
 * the slow path. They are keyed and their home lines prefetched BATCH at
 * a time: the table is megabytes, and one insert at a time waited for
 * each line in turn. */
#define BATCH 32

static struct simdbpe__model_ptab *build(const simdbpe_model *m)
{
    uint32_t *slot_of = malloc((m->vocab_size ? m->vocab_size : 1) * sizeof *slot_of);
    struct simdbpe__model_ptab *p = calloc(1, sizeof *p);
    if (!slot_of || !p) {
        free(slot_of);
        free(p);
        return NULL;
    }
    memset(slot_of, 0xFF, m->vocab_size * sizeof *slot_of);
    size_t n = 0;
    for (uint32_t i = 0; i < m->n_whole; i++)
        if (in_table(&m->whole[i])) {
            slot_of[m->whole[i].id] = i;
            n++;
        }
    p->tab.bits = bits_for(n);
    p->tab.b = simdbpe__huge_map(sizeof(simdbpe__pbucket) << p->tab.bits, &p->base, &p->mapped);
    if (!p->tab.b) {
        free(slot_of);
        free(p);
        return NULL;
    }
    p->byte_pairs = simdbpe__huge_map(65536 * sizeof *p->byte_pairs, &p->pairs_base,
                                      &p->pairs_mapped);
    if (!p->byte_pairs) {
        free(slot_of);
        release(p);
        return NULL;
    }
    simdbpe__byte_pairs_fill(m, p->byte_pairs);
    uint64_t batch[BATCH][3], hash[BATCH];
    size_t k = 0;
    for (uint32_t id = 0; id <= m->vocab_size; id++) {
        if (k == BATCH || (id == m->vocab_size && k > 0)) {
            for (size_t j = 0; j < k; j++)
                simdbpe__pslot_set(simdbpe__ptab_free_slot(&p->tab, hash[j]), batch[j][0],
                                   batch[j][1], batch[j][2], 0);
            p->tab.n += k;
            k = 0;
        }
        if (id == m->vocab_size || slot_of[id] == UINT32_MAX)
            continue;
        const simdbpe__whole_slot *w = &m->whole[slot_of[id]];
        uint64_t lo = ~w->lo & simdbpe__keep_lo[w->len], hi = ~w->hi & simdbpe__keep_hi[w->len];
        batch[k][0] = lo;
        batch[k][1] = hi;
        batch[k][2] = w->id | (uint64_t)1 << SIMDBPE__PV_N_SHIFT;
        hash[k] = simdbpe__pkey_hash(lo, hi);
        __builtin_prefetch(&p->tab.b[simdbpe__ptab_home(hash[k], p->tab.bits)], 1);
        k++;
    }
    free(slot_of);
    return p;
}

static void release(struct simdbpe__model_ptab *p)
{
    if (p) {
        simdbpe__huge_unmap(p->base, p->mapped);
        simdbpe__huge_unmap(p->pairs_base, p->pairs_mapped);
        free(p);
    }
}

static const struct simdbpe__model_ptab *tables(const simdbpe_model *m)
{
    /* The model is immutable to its users; this is a cache of what it
     * holds, set once. */
    struct simdbpe__model_ptab **at = (struct simdbpe__model_ptab **)&m->ptab;
    struct simdbpe__model_ptab *p = __atomic_load_n(at, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    struct simdbpe__model_ptab *mine = build(m), *none = NULL;
    if (!mine)
        return NULL;
    if (__atomic_compare_exchange_n(at, &none, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mine;
    release(mine);
    return none; /* another thread's, set meanwhile */
}

const simdbpe__ptab *simdbpe__model_ptab(const simdbpe_model *m)
{
    const struct simdbpe__model_ptab *p = tables(m);
    return p ? &p->tab : NULL;
}

const simdbpe__byte_pair *simdbpe__model_byte_pairs(const simdbpe_model *m)
{
    const struct simdbpe__model_ptab *p = tables(m);
    return p ? p->byte_pairs : NULL;
}

void simdbpe__model_ptab_free(simdbpe_model *m)
{
    release(m->ptab);
    m->ptab = NULL;
}
