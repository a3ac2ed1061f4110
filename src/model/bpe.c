/*
 * bpe.c - applying a model's merges to one word (pre-token).
 *
 * The word starts as one symbol per byte, kept in a doubly linked list over
 * the byte positions. A min-heap holds candidate merges keyed by
 *
 *     rank << 32 | position of the left symbol
 *
 * so the lowest rank comes out first and, among equal ranks, the leftmost
 * pair (HF word.rs and tiktoken agree on this order). Merging keeps the left
 * symbol's position and unlinks the right one, so positions are never
 * reused. Entries go stale when a neighbour changes; an entry is applied
 * only if both of its symbols still have the ids it was pushed with and are
 * still adjacent. Each merge pushes at most two entries, so a word of n
 * bytes costs O(n log n) whatever its content.
 */
#include <stdlib.h>

#include "model.h"

#define NONE UINT32_MAX

typedef struct simdbpe__heap_entry {
    uint64_t key; /* rank << 32 | left position */
    uint32_t left_id, right_id;
} heap_entry;

void simdbpe__bpe_scratch_free(simdbpe__bpe_scratch *s)
{
    free(s->id);
    free(s->prev);
    free(s->next);
    free(s->heap);
    memset(s, 0, sizeof *s);
}

static int reserve(simdbpe__bpe_scratch *s, size_t n)
{
    if (n > s->cap) {
        size_t cap = n < 64 ? 64 : n;
        uint32_t *id = realloc(s->id, cap * sizeof *id);
        if (id)
            s->id = id;
        uint32_t *prev = realloc(s->prev, cap * sizeof *prev);
        if (prev)
            s->prev = prev;
        uint32_t *next = realloc(s->next, cap * sizeof *next);
        if (next)
            s->next = next;
        if (!id || !prev || !next)
            return -1;
        s->cap = cap;
    }
    /* At most n-1 initial entries plus 2 per merge (n-1 merges). */
    size_t hneed = 3 * n;
    if (hneed > s->heap_cap) {
        heap_entry *h = realloc(s->heap, hneed * sizeof *h);
        if (!h)
            return -1;
        s->heap = h;
        s->heap_cap = hneed;
    }
    return 0;
}

static void heap_push(heap_entry *h, size_t *n, heap_entry e)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h[parent].key <= e.key)
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

static heap_entry heap_pop(heap_entry *h, size_t *n)
{
    heap_entry top = h[0];
    heap_entry last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].key < h[c].key)
            c++;
        if (last.key <= h[c].key)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

static void push_pair(const simdbpe_model *m, heap_entry *h, size_t *n, uint32_t pos,
                      uint32_t left, uint32_t right)
{
    const simdbpe__merge_slot *s = simdbpe__merge_find(m, left, right);
    if (s)
        heap_push(h, n, (heap_entry){(uint64_t)s->rank << 32 | pos, left, right});
}

simdbpe_status simdbpe__bpe_word(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                 const uint8_t *s, size_t len, uint32_t *out, size_t *n_out)
{
    if (len == 1) {
        out[(*n_out)++] = m->byte_id[s[0]];
        return SIMDBPE_OK;
    }
    if (len >= NONE)
        return SIMDBPE_ERR_TOO_LARGE;
    if (reserve(scratch, len))
        return SIMDBPE_ERR_NOMEM;
    uint32_t *id = scratch->id, *prev = scratch->prev, *next = scratch->next;
    heap_entry *heap = scratch->heap;
    size_t nh = 0;
    for (uint32_t i = 0; i < len; i++) {
        id[i] = m->byte_id[s[i]];
        prev[i] = i ? i - 1 : NONE;
        next[i] = i + 1 < len ? i + 1 : NONE;
    }
    for (uint32_t i = 0; i + 1 < len; i++)
        push_pair(m, heap, &nh, i, id[i], id[i + 1]);

    while (nh > 0) {
        heap_entry e = heap_pop(heap, &nh);
        uint32_t pos = (uint32_t)e.key;
        uint32_t r = next[pos];
        /* Stale: the left symbol was merged away (its id is NONE) or changed,
         * or its right neighbour changed. */
        if (id[pos] != e.left_id || r == NONE || id[r] != e.right_id)
            continue;
        const simdbpe__merge_slot *slot = simdbpe__merge_find(m, e.left_id, e.right_id);
        id[pos] = slot->id;
        id[r] = NONE;
        next[pos] = next[r];
        if (next[r] != NONE)
            prev[next[r]] = pos;
        if (prev[pos] != NONE)
            push_pair(m, heap, &nh, prev[pos], id[prev[pos]], id[pos]);
        if (next[pos] != NONE)
            push_pair(m, heap, &nh, pos, id[pos], id[next[pos]]);
    }
    for (uint32_t i = 0; i != NONE; i = next[i])
        out[(*n_out)++] = id[i];
    return SIMDBPE_OK;
}
