/*
 * wordtab.c - word -> count hash tables for counting pre-tokens.
 *
 * Open addressing with linear probing on a power-of-two table, kept at most
 * half full. A slot holds the word's count (0 = empty), 32 bits of its hash
 * (to skip most byte comparisons) and where its bytes sit in the table's
 * arena. Words are never removed, so the arena only grows.
 *
 * Each counting thread owns one table; nothing here is shared or locked.
 */
#include <stdlib.h>

#include "train.h"

int simdbpe__wordtab_init(simdbpe__wordtab *t, size_t capacity)
{
    size_t cap = 1024;
    while (cap < capacity)
        cap *= 2;
    memset(t, 0, sizeof *t);
    t->slots = calloc(cap, sizeof *t->slots);
    if (!t->slots)
        return -1;
    t->mask = cap - 1;
    return 0;
}

void simdbpe__wordtab_free(simdbpe__wordtab *t)
{
    if (!t)
        return;
    free(t->slots);
    free(t->arena);
    memset(t, 0, sizeof *t);
}

/* Doubles the table; the hash of each word is recomputed from its bytes
 * because slots keep only 32 bits of it. */
static int grow_table(simdbpe__wordtab *t)
{
    size_t cap = (t->mask + 1) * 2;
    simdbpe__word_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    size_t mask = cap - 1;
    for (size_t i = 0; i <= t->mask; i++) {
        const simdbpe__word_slot *s = &t->slots[i];
        if (!s->count)
            continue;
        uint64_t h = simdbpe__hash_bytes(t->arena + s->off, s->len);
        size_t j = (size_t)h & mask;
        while (slots[j].count)
            j = (j + 1) & mask;
        slots[j] = *s;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

int simdbpe__wordtab_add(simdbpe__wordtab *t, const uint8_t *s, size_t len, uint64_t hash,
                         uint64_t count)
{
    uint32_t h32 = (uint32_t)(hash >> 32);
    size_t i = (size_t)hash & t->mask;
    for (;;) {
        simdbpe__word_slot *w = &t->slots[i];
        if (!w->count)
            break;
        if (w->hash32 == h32 && w->len == len && memcmp(t->arena + w->off, s, len) == 0) {
            w->count += count;
            return 0;
        }
        i = (i + 1) & t->mask;
    }
    if (len > UINT32_MAX)
        return -1;
    if (simdbpe__grow((void **)&t->arena, &t->arena_cap, t->arena_len + len, 1))
        return -1;
    memcpy(t->arena + t->arena_len, s, len);
    simdbpe__word_slot *w = &t->slots[i];
    w->count = count;
    w->off = t->arena_len;
    w->len = (uint32_t)len;
    w->hash32 = h32;
    t->arena_len += len;
    t->n++;
    if (t->n * 2 > t->mask + 1)
        return grow_table(t);
    return 0;
}

int simdbpe__wordtab_merge(simdbpe__wordtab *dst, const simdbpe__wordtab *src)
{
    for (size_t i = 0; i <= src->mask; i++) {
        const simdbpe__word_slot *s = &src->slots[i];
        if (!s->count)
            continue;
        const uint8_t *p = src->arena + s->off;
        if (simdbpe__wordtab_add(dst, p, s->len, simdbpe__hash_bytes(p, s->len), s->count))
            return -1;
    }
    return 0;
}
