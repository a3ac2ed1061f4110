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
    for (size_t i = 0; i < n; i++) {
        const simdbpe__pslot *p = &from->slots[i];
        if (p->lo != 0) {
            *simdbpe__ptab_free_slot(to, simdbpe__pkey_hash(p->lo, p->hi)) = *p;
            to->n++;
        }
    }
}

/* A model's table with the memory it lives in. */
struct simdbpe__model_ptab {
    simdbpe__ptab tab;
    void *base;
    size_t mapped;
};

/* Half full at most: an encoder's copy has room for as many pieces
 * again before it grows. */
static unsigned bits_for(size_t n)
{
    unsigned bits = 10;
    while (((size_t)1 << bits) < 2 * n)
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
    for (unsigned i = 0; i < w->len; i++)
        if ((i < 8 ? w->lo >> (8 * i) : w->hi >> (8 * (i - 8))) % 256 == 0xFF)
            return false;
    return true;
}

static void release(struct simdbpe__model_ptab *p);

static struct simdbpe__model_ptab *build(const simdbpe_model *m)
{
    size_t n = 0;
    for (uint32_t i = 0; i < m->n_whole; i++)
        n += in_table(&m->whole[i]);
    struct simdbpe__model_ptab *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->tab.bits = bits_for(n);
    p->tab.slots = simdbpe__huge_map(sizeof(simdbpe__pslot) << p->tab.bits, &p->base, &p->mapped);
    if (!p->tab.slots) {
        free(p);
        return NULL;
    }
    /* Tokens go in by id, which is by rank for byte-level models (the
     * byte tokens, then merges in the order they were learned, roughly
     * the order of how common they are): an insert takes the first empty
     * slot from its home pair on, so the earlier ones are in their home
     * pair, found without the slow path. */
    uint32_t *slot_of = malloc((m->vocab_size ? m->vocab_size : 1) * sizeof *slot_of);
    if (!slot_of) {
        release(p);
        return NULL;
    }
    memset(slot_of, 0xFF, m->vocab_size * sizeof *slot_of);
    for (uint32_t i = 0; i < m->n_whole; i++)
        slot_of[m->whole[i].id] = i;
    for (uint32_t id = 0; id < m->vocab_size; id++) {
        if (slot_of[id] == UINT32_MAX || !in_table(&m->whole[slot_of[id]]))
            continue;
        const simdbpe__whole_slot *w = &m->whole[slot_of[id]];
        uint64_t lo = ~w->lo & simdbpe__keep_lo[w->len], hi = ~w->hi & simdbpe__keep_hi[w->len];
        simdbpe__pslot *s = simdbpe__ptab_free_slot(&p->tab, simdbpe__pkey_hash(lo, hi));
        s->lo = lo;
        s->hi = hi;
        s->val = w->id | (uint64_t)1 << SIMDBPE__PV_N_SHIFT;
        s->ext = 0;
        p->tab.n++;
    }
    free(slot_of);
    return p;
}

static void release(struct simdbpe__model_ptab *p)
{
    if (p) {
        simdbpe__huge_unmap(p->base, p->mapped);
        free(p);
    }
}

const simdbpe__ptab *simdbpe__model_ptab(const simdbpe_model *m)
{
    /* The model is immutable to its users; this is a cache of what it
     * holds, set once. */
    struct simdbpe__model_ptab **at = (struct simdbpe__model_ptab **)&m->ptab;
    struct simdbpe__model_ptab *p = __atomic_load_n(at, __ATOMIC_ACQUIRE);
    if (p)
        return &p->tab;
    struct simdbpe__model_ptab *mine = build(m), *none = NULL;
    if (!mine)
        return NULL;
    if (__atomic_compare_exchange_n(at, &none, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return &mine->tab;
    release(mine);
    return &none->tab; /* another thread's, set meanwhile */
}

void simdbpe__model_ptab_free(simdbpe_model *m)
{
    release(m->ptab);
    m->ptab = NULL;
}
