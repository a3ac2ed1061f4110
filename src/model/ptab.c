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

/* A lazily built table of a model's, with the memory it lives in. */
struct simdbpe__lazy {
    const void *table;
    void *base; /* the mapping */
    size_t mapped;
    void *owned; /* malloc'd with it, or NULL */
};

static void release(struct simdbpe__lazy *p)
{
    if (p) {
        simdbpe__huge_unmap(p->base, p->mapped);
        free(p->owned);
        free(p);
    }
}

/* *at, or one built by make(m) and set there if no other thread set one
 * meanwhile (a thread that loses the race frees its own). The model is
 * immutable to its users; these are caches of what it holds, set once. */
static const void *lazy(const simdbpe_model *m, struct simdbpe__lazy *const *at_,
                        struct simdbpe__lazy *(*make)(const simdbpe_model *))
{
    struct simdbpe__lazy **at = (struct simdbpe__lazy **)at_;
    struct simdbpe__lazy *p = __atomic_load_n(at, __ATOMIC_ACQUIRE);
    if (p)
        return p->table;
    struct simdbpe__lazy *mine = make(m), *none = NULL;
    if (!mine)
        return NULL;
    if (__atomic_compare_exchange_n(at, &none, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mine->table;
    release(mine);
    return none->table;
}

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

/* Tokens go in by id, which is by rank for byte-level models (the byte
 * tokens, then merges in the order they were learned, roughly the order
 * of how common they are): an insert takes the first empty slot from its
 * home bucket on, so the earlier ones are in their home bucket, found
 * without the slow path. They are keyed and their home lines prefetched
 * BATCH at a time: the table is megabytes, and one insert at a time
 * waited for each line in turn. */
#define BATCH 32

static struct simdbpe__lazy *build_ptab(const simdbpe_model *m)
{
    struct simdbpe__lazy *p = calloc(1, sizeof *p);
    simdbpe__ptab *t = calloc(1, sizeof *t);
    uint32_t *slot_of = malloc((m->vocab_size ? m->vocab_size : 1) * sizeof *slot_of);
    if (!p || !t || !slot_of)
        goto fail;
    p->owned = t;
    memset(slot_of, 0xFF, m->vocab_size * sizeof *slot_of);
    size_t n = 0;
    for (uint32_t i = 0; i < m->n_whole; i++)
        if (in_table(&m->whole[i])) {
            slot_of[m->whole[i].id] = i;
            n++;
        }
    t->bits = bits_for(n);
    if (!(t->b = simdbpe__huge_map(sizeof(simdbpe__pbucket) << t->bits, &p->base, &p->mapped)))
        goto fail;
    uint64_t batch[BATCH][3], hash[BATCH];
    size_t k = 0;
    for (uint32_t id = 0; id <= m->vocab_size; id++) {
        if (k == BATCH || (id == m->vocab_size && k > 0)) {
            for (size_t j = 0; j < k; j++)
                simdbpe__pslot_set(simdbpe__ptab_free_slot(t, hash[j]), batch[j][0], batch[j][1],
                                   batch[j][2], 0);
            t->n += k;
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
        __builtin_prefetch(&t->b[simdbpe__ptab_home(hash[k], t->bits)], 1);
        k++;
    }
    free(slot_of);
    p->table = t;
    return p;
fail:
    free(slot_of);
    if (!p)
        free(t);
    release(p);
    return NULL;
}

static struct simdbpe__lazy *build_byte_pairs(const simdbpe_model *m)
{
    struct simdbpe__lazy *p = calloc(1, sizeof *p);
    simdbpe__byte_pair *t = p ? simdbpe__huge_map(65536 * sizeof *t, &p->base, &p->mapped) : NULL;
    if (!t) {
        free(p);
        return NULL;
    }
    simdbpe__byte_pairs_fill(m, t);
    p->table = t;
    return p;
}

const simdbpe__ptab *simdbpe__model_ptab(const simdbpe_model *m)
{
    return lazy(m, &m->ptab, build_ptab);
}

const simdbpe__ptab *simdbpe__model_ptab_if_built(const simdbpe_model *m)
{
    const struct simdbpe__lazy *p = __atomic_load_n(&m->ptab, __ATOMIC_ACQUIRE);
    return p ? p->table : NULL;
}

const simdbpe__byte_pair *simdbpe__model_byte_pairs(const simdbpe_model *m)
{
    return lazy(m, &m->byte_pairs, build_byte_pairs);
}

void simdbpe__model_ptab_free(simdbpe_model *m)
{
    release(m->ptab);
    release(m->byte_pairs);
    m->ptab = m->byte_pairs = NULL;
}
