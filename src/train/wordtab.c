/*
 * wordtab.c - word -> count hash tables for counting pre-tokens, and the
 * hot cache in front of them.
 *
 * Open addressing with linear probing on a power-of-two table, kept at most
 * half full. A slot holds the word's count (0 = empty), 32 bits of its hash
 * (to skip most comparisons) and the word: inline when it has at most 16
 * bytes (nearly all pre-tokens), else an offset into the table's arena.
 * Short words hash with a multiply-xorshift mix of their two 64-bit halves,
 * long ones with XXH3. Words are never removed, so the arena only grows.
 *
 * Each counting thread owns one table and one hot cache; nothing here is
 * shared or locked.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "train.h"

/* ------------------------------------------------------------ big tables */

#define HUGE_PAGE ((size_t)2 << 20)

void *simdbpe__big_calloc(size_t bytes)
{
    if (bytes < HUGE_PAGE)
        return calloc(1, bytes ? bytes : 1);
    size_t size = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (size > SIZE_MAX - HUGE_PAGE)
        return NULL;
    /* Map one huge page more, then trim both ends to a 2 MiB boundary. */
    uint8_t *p = mmap(NULL, size + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    size_t head = (HUGE_PAGE - ((uintptr_t)p & (HUGE_PAGE - 1))) & (HUGE_PAGE - 1);
    if (head)
        munmap(p, head);
    if (HUGE_PAGE - head)
        munmap(p + head + size, HUGE_PAGE - head);
    p += head;
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

void simdbpe__big_free(void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes < HUGE_PAGE) {
        free(p);
        return;
    }
    munmap(p, (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
}

/* ------------------------------------------------------------ word table */

int simdbpe__wordtab_init(simdbpe__wordtab *t, size_t capacity)
{
    size_t cap = 256;
    while (cap < capacity)
        cap *= 2;
    memset(t, 0, sizeof *t);
    t->slots = simdbpe__big_calloc(cap * sizeof *t->slots);
    if (!t->slots)
        return -1;
    t->mask = cap - 1;
    return 0;
}

void simdbpe__wordtab_free(simdbpe__wordtab *t)
{
    if (!t)
        return;
    if (t->slots)
        simdbpe__big_free(t->slots, (t->mask + 1) * sizeof *t->slots);
    free(t->arena);
    memset(t, 0, sizeof *t);
}

static uint64_t slot_hash(const simdbpe__wordtab *t, const simdbpe__word_slot *s)
{
    if (s->len <= SIMDBPE__SHORT_WORD)
        return simdbpe__short_hash(s->k0, s->k1, s->len);
    return simdbpe__hash_bytes(t->arena + s->k0, s->len);
}

/* Doubles the table; hashes are recomputed because slots keep only 32 bits
 * of them. */
static int grow_table(simdbpe__wordtab *t)
{
    size_t cap = (t->mask + 1) * 2;
    simdbpe__word_slot *slots = simdbpe__big_calloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    size_t mask = cap - 1;
    for (size_t i = 0; i <= t->mask; i++) {
        const simdbpe__word_slot *s = &t->slots[i];
        if (!s->count)
            continue;
        size_t j = (size_t)slot_hash(t, s) & mask;
        while (slots[j].count)
            j = (j + 1) & mask;
        slots[j] = *s;
    }
    simdbpe__big_free(t->slots, (t->mask + 1) * sizeof *t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* Fills empty slot w with a new word and grows the table if it is half
 * full. */
static int take_slot(simdbpe__wordtab *t, simdbpe__word_slot *w, uint64_t k0, uint64_t k1,
                     uint32_t len, uint32_t h32, uint64_t count)
{
    w->k0 = k0;
    w->k1 = k1;
    w->len = len;
    w->hash32 = h32;
    w->count = count;
    t->n++;
    if (t->n * 2 > t->mask + 1)
        return grow_table(t);
    return 0;
}

int simdbpe__wordtab_add_short(simdbpe__wordtab *t, uint64_t k0, uint64_t k1, uint32_t len,
                               uint64_t count)
{
    uint64_t h = simdbpe__short_hash(k0, k1, len);
    uint32_t h32 = (uint32_t)(h >> 32);
    size_t i = (size_t)h & t->mask;
    for (;;) {
        simdbpe__word_slot *w = &t->slots[i];
        if (!w->count)
            return take_slot(t, w, k0, k1, len, h32, count);
        if (w->k0 == k0 && w->k1 == k1 && w->len == len) {
            w->count += count;
            return 0;
        }
        i = (i + 1) & t->mask;
    }
}

int simdbpe__wordtab_add(simdbpe__wordtab *t, const uint8_t *s, size_t len, uint64_t count)
{
    if (len <= SIMDBPE__SHORT_WORD) {
        uint64_t k[2];
        simdbpe__load_short(s, len, len, k);
        return simdbpe__wordtab_add_short(t, k[0], k[1], (uint32_t)len, count);
    }
    if (len > UINT32_MAX)
        return -1;
    uint64_t h = simdbpe__hash_bytes(s, len);
    uint32_t h32 = (uint32_t)(h >> 32);
    size_t i = (size_t)h & t->mask;
    for (;;) {
        simdbpe__word_slot *w = &t->slots[i];
        if (!w->count)
            break;
        if (w->hash32 == h32 && w->len == len && memcmp(t->arena + w->k0, s, len) == 0) {
            w->count += count;
            return 0;
        }
        i = (i + 1) & t->mask;
    }
    if (simdbpe__grow((void **)&t->arena, &t->arena_cap, t->arena_len + len, 1))
        return -1;
    memcpy(t->arena + t->arena_len, s, len);
    uint64_t off = t->arena_len;
    t->arena_len += len;
    return take_slot(t, &t->slots[i], off, 0, (uint32_t)len, h32, count);
}

int simdbpe__wordtab_merge(simdbpe__wordtab *dst, const simdbpe__wordtab *src)
{
    for (size_t i = 0; i <= src->mask; i++) {
        const simdbpe__word_slot *s = &src->slots[i];
        if (!s->count)
            continue;
        int rc = s->len <= SIMDBPE__SHORT_WORD
                     ? simdbpe__wordtab_add_short(dst, s->k0, s->k1, s->len, s->count)
                     : simdbpe__wordtab_add(dst, src->arena + s->k0, s->len, s->count);
        if (rc)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- hot cache */

int simdbpe__hot_replace(simdbpe__hot_slot *h, simdbpe__wordtab *t, uint64_t k0, uint64_t k1,
                         uint32_t len)
{
    if (h->len && simdbpe__wordtab_add_short(t, h->k0, h->k1, h->len, h->count))
        return -1;
    h->k0 = k0;
    h->k1 = k1;
    h->len = len;
    h->count = 1;
    return 0;
}

int simdbpe__hot_flush(simdbpe__hot_slot *hot, size_t slots, simdbpe__wordtab *t)
{
    for (size_t i = 0; i < slots; i++) {
        simdbpe__hot_slot *h = &hot[i];
        if (h->len && simdbpe__wordtab_add_short(t, h->k0, h->k1, h->len, h->count))
            return -1;
        memset(h, 0, sizeof *h);
    }
    return 0;
}
