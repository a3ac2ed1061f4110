/*
 * bpe.c - applying a model's merges to one word (pre-token).
 *
 * BPE semantics: start from one symbol per byte; repeatedly merge the
 * adjacent pair with the lowest rank, the leftmost one among equal ranks
 * (HF word.rs and tiktoken agree), until no adjacent pair has a merge.
 *
 * Two implementations of that one rule, chosen by word length:
 *
 *   short words (<= SHORT_WORD bytes, nearly every cache miss in text):
 *     arrays of symbols and of the rank of each adjacent pair on the stack;
 *     each step scans for the lowest rank and closes the gap with memmove.
 *     O(n^2) but n is small and everything is in L1.
 *
 *   long words (a 5 MB run of digits, letters, spaces, one emoji...):
 *     symbols in a doubly linked list over byte positions; candidate pairs
 *     in a bucket queue keyed by rank: one min-heap of positions per rank
 *     (leftmost first) and a two-level bitmap of the non-empty ranks (the
 *     lowest is found with two count-trailing-zeros). Entries go stale when
 *     a neighbour changes; a popped entry is applied only if its pair is
 *     still the rank's pair (model->rules[rank]). Each merge pushes at most
 *     two entries, so a word of n bytes costs O(n log n), and positions
 *     arrive mostly in increasing order, which a heap absorbs in O(1).
 *
 * A merge never creates a pair of its own rank (the new symbol's bytes are
 * longer than either input's), which is what makes per-rank queues exact.
 */
#include <stdlib.h>

#include "../../kernels/kernels.h"
#include "model.h"

#define NONE UINT32_MAX
#define SHORT_WORD 64

typedef struct simdbpe__bpe_bucket {
    uint32_t *pos; /* a min-heap of left positions */
    uint32_t n, cap;
} bucket;

void simdbpe__bpe_scratch_free(simdbpe__bpe_scratch *s)
{
    free(s->id);
    free(s->prev);
    free(s->next);
    if (s->buckets)
        for (uint32_t r = 0; r < s->n_buckets; r++)
            free(s->buckets[r].pos);
    free(s->buckets);
    free(s->bits);
    free(s->summary);
    const struct simdbpe__kernels *k = s->k;
    memset(s, 0, sizeof *s);
    s->k = k;
}

/* ------------------------------------------------------------ short words */

static simdbpe_status bpe_short(const simdbpe_model *m, const uint8_t *s, size_t len,
                                uint32_t *out, size_t *n_out)
{
    uint32_t id[SHORT_WORD], rank[SHORT_WORD], made[SHORT_WORD];
    size_t n = len;
    for (size_t i = 0; i < n; i++)
        id[i] = m->byte_id[s[i]];
    for (size_t i = 0; i + 1 < n; i++) {
        const simdbpe__merge_slot *slot = simdbpe__merge_find(m, id[i], id[i + 1]);
        rank[i] = slot ? slot->rank : NONE;
        made[i] = slot ? slot->id : NONE;
    }
    for (;;) {
        uint32_t best = NONE;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            if (rank[i] < best) {
                best = rank[i];
                at = i;
            }
        }
        if (best == NONE)
            break;
        /* Symbol at+1 joins symbol at; pairs after it move down one. */
        id[at] = made[at];
        n--;
        memmove(id + at + 1, id + at + 2, (n - at - 1) * sizeof *id);
        memmove(rank + at + 1, rank + at + 2, (n > at + 2 ? n - at - 2 : 0) * sizeof *rank);
        memmove(made + at + 1, made + at + 2, (n > at + 2 ? n - at - 2 : 0) * sizeof *made);
        for (size_t i = at ? at - 1 : 0; i <= at && i + 1 < n; i++) {
            const simdbpe__merge_slot *slot = simdbpe__merge_find(m, id[i], id[i + 1]);
            rank[i] = slot ? slot->rank : NONE;
            made[i] = slot ? slot->id : NONE;
        }
    }
    memcpy(out + *n_out, id, n * sizeof *id);
    *n_out += n;
    return SIMDBPE_OK;
}

/* ------------------------------------------------------------- long words */

static int reserve_long(const simdbpe_model *m, simdbpe__bpe_scratch *s, size_t n)
{
    if (n > s->cap) {
        size_t cap = n;
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
    if (s->n_buckets != m->n_merges || !s->buckets) {
        free(s->buckets);
        free(s->bits);
        free(s->summary);
        s->n_buckets = m->n_merges;
        size_t words = ((size_t)m->n_merges + 63) / 64;
        s->buckets = calloc(m->n_merges ? m->n_merges : 1, sizeof *s->buckets);
        s->bits = calloc(words ? words : 1, sizeof *s->bits);
        s->summary = calloc((words + 63) / 64 + 1, sizeof *s->summary);
        if (!s->buckets || !s->bits || !s->summary) {
            free(s->buckets);
            free(s->bits);
            free(s->summary);
            s->buckets = NULL;
            s->bits = s->summary = NULL;
            s->n_buckets = 0;
            return -1;
        }
    }
    return 0;
}

/* Adds position `pos` to rank r's heap and marks r non-empty. */
static int bucket_push(simdbpe__bpe_scratch *s, uint32_t r, uint32_t pos)
{
    bucket *b = &s->buckets[r];
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 16;
        uint32_t *p = realloc(b->pos, cap * sizeof *p);
        if (!p)
            return -1;
        b->pos = p;
        b->cap = cap;
    }
    uint32_t i = b->n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (b->pos[parent] <= pos)
            break;
        b->pos[i] = b->pos[parent];
        i = parent;
    }
    b->pos[i] = pos;
    s->bits[r / 64] |= 1ULL << (r % 64);
    s->summary[r / 4096] |= 1ULL << (r / 64 % 64);
    return 0;
}

static uint32_t bucket_pop(simdbpe__bpe_scratch *s, uint32_t r)
{
    bucket *b = &s->buckets[r];
    uint32_t top = b->pos[0];
    uint32_t last = b->pos[--b->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= b->n)
            break;
        if (c + 1 < b->n && b->pos[c + 1] < b->pos[c])
            c++;
        if (last <= b->pos[c])
            break;
        b->pos[i] = b->pos[c];
        i = c;
    }
    if (b->n > 0)
        b->pos[i] = last;
    else {
        s->bits[r / 64] &= ~(1ULL << (r % 64));
        if (!s->bits[r / 64])
            s->summary[r / 4096] &= ~(1ULL << (r / 64 % 64));
    }
    return top;
}

/* The lowest non-empty rank, or NONE. */
static uint32_t lowest_rank(const simdbpe__bpe_scratch *s)
{
    size_t groups = ((size_t)s->n_buckets + 4095) / 4096;
    for (size_t g = 0; g < groups; g++) {
        if (s->summary[g]) {
            size_t w = g * 64 + (size_t)__builtin_ctzll(s->summary[g]);
            return (uint32_t)(w * 64 + (size_t)__builtin_ctzll(s->bits[w]));
        }
    }
    return NONE;
}

static int push_pair(const simdbpe_model *m, simdbpe__bpe_scratch *s, uint32_t pos,
                     uint32_t left, uint32_t right)
{
    const simdbpe__merge_slot *slot = simdbpe__merge_find(m, left, right);
    return slot ? bucket_push(s, slot->rank, pos) : 0;
}

/* Empties every queue after a failure, so the scratch stays reusable. */
static void drain(simdbpe__bpe_scratch *s)
{
    uint32_t r;
    while ((r = lowest_rank(s)) != NONE)
        bucket_pop(s, r);
}

static simdbpe_status bpe_long(const simdbpe_model *m, simdbpe__bpe_scratch *s,
                               const uint8_t *bytes, size_t len, uint32_t *out, size_t *n_out)
{
    if (len >= NONE)
        return SIMDBPE_ERR_TOO_LARGE;
    if (reserve_long(m, s, len))
        return SIMDBPE_ERR_NOMEM;
    uint32_t *id = s->id, *prev = s->prev, *next = s->next;
    if (s->k)
        s->k->map_bytes(bytes, len, m->byte_id, id);
    else
        simdbpe__kernels_scalar.map_bytes(bytes, len, m->byte_id, id);
    uint32_t n = (uint32_t)len;
    for (uint32_t i = 0; i < n; i++) {
        prev[i] = i - 1; /* NONE for i = 0 */
        next[i] = i + 1 < n ? i + 1 : NONE;
    }
    for (uint32_t i = 0; i + 1 < n; i++)
        if (push_pair(m, s, i, id[i], id[i + 1])) {
            drain(s);
            return SIMDBPE_ERR_NOMEM;
        }
    uint32_t r;
    while ((r = lowest_rank(s)) != NONE) {
        uint32_t pos = bucket_pop(s, r);
        const simdbpe__merge_rule *rule = &m->rules[r];
        uint32_t nx = next[pos];
        /* Stale: the left symbol was merged away or changed, or its right
         * neighbour changed. */
        if (id[pos] != rule->left || nx == NONE || id[nx] != rule->right)
            continue;
        id[pos] = rule->id;
        id[nx] = NONE;
        next[pos] = next[nx];
        if (next[nx] != NONE)
            prev[next[nx]] = pos;
        int fail = 0;
        if (prev[pos] != NONE)
            fail |= push_pair(m, s, prev[pos], id[prev[pos]], id[pos]);
        if (next[pos] != NONE)
            fail |= push_pair(m, s, pos, id[pos], id[next[pos]]);
        if (fail) {
            drain(s);
            return SIMDBPE_ERR_NOMEM;
        }
    }
    for (uint32_t i = 0; i != NONE; i = next[i])
        out[(*n_out)++] = id[i];
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__bpe_word(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                 const uint8_t *s, size_t len, uint32_t *out, size_t *n_out)
{
    if (len == 1) {
        out[(*n_out)++] = m->byte_id[s[0]];
        return SIMDBPE_OK;
    }
    if (len <= SHORT_WORD)
        return bpe_short(m, s, len, out, n_out);
    return bpe_long(m, scratch, s, len, out, n_out);
}
