/*
 * merge.c - the BPE merge loop: from unique words with counts to merges.
 *
 * Data (sized for cache misses, which are what the loop waits on):
 *
 *   words   one uint32 array; a word is [len, stamp, count lo, count hi,
 *           sym...] at some offset, named by that offset. Only words of two
 *           or more bytes are kept (others hold no pair). Symbols are token
 *           ids, rewritten in place as pairs merge, so words only shrink;
 *           `stamp` is the last step that visited the word.
 *   pairs   open-addressing table of pair records keyed by
 *           left << 32 | right: exact count (int64, never negative) and the
 *           words that may hold the pair -- every word that holds it is on
 *           the list; one that no longer does is skipped when visited.
 *   heap    4-ary max-heap of (count, key): highest count first, then the
 *           smallest key = smallest (left id, right id). Entries may be
 *           stale and are checked when popped: a higher count is pushed
 *           again with the true one, a lower one dropped (every rise of a
 *           count pushes a fresh entry).
 *   agg     a small table that sums one step's count changes per pair, so
 *           the big pair table is touched once per distinct pair and step
 *           rather than once per occurrence.
 *   tokens  id -> bytes, and bytes -> id to find merges whose result already
 *           exists (they reuse that id).
 *
 * One step: pop the best pair P = (a, b); if its count is below the minimum,
 * stop; otherwise name the new token X, and in every word on P's list
 * replace each occurrence of a b (left to right, not overlapping) by X:
 *
 *      ... L  a  b  R ...   ->   ... L  X  R ...
 *      (L,a) -= c  (a,b) -= c  (b,R) -= c   (L,X) += c  (X,R) += c
 *
 * where L is the symbol already written on the left (possibly an X made a
 * moment ago) and R the next unread one; c is the word's count. Then the
 * summed changes go to the pair table, words go onto the lists of the pairs
 * they gained, and pairs whose count rose are pushed on the heap. Nothing
 * ever rescans the whole word table.
 */
#include <stdlib.h>

#include "train.h"

#define PROGRESS_EVERY 0.2 /* seconds */
#define EMPTY_KEY UINT64_MAX
#define WORD_HEADER 4 /* len, stamp, count lo, count hi */

/* ----------------------------------------------------------------- state */

typedef struct pair_rec {
    uint64_t key; /* EMPTY_KEY when the slot is free */
    int64_t count;
    uint32_t *words; /* offsets of words that may hold the pair */
    uint32_t n_words, cap_words;
} pair_rec;

typedef struct heap_ent {
    uint64_t count;
    uint64_t key;
} heap_ent;

/* One pair's summed change within the current step. */
typedef struct agg_ent {
    uint64_t key;
    int64_t delta;
    uint32_t step;   /* the entry is live only if step == current step */
    uint32_t last_w; /* last word noted as gaining the pair */
    pair_rec *rec;   /* filled when the step's changes are applied */
} agg_ent;

/* A word that gained a pair in this step: agg entry index, word offset. */
typedef struct gain {
    uint32_t agg, w;
} gain;

typedef struct tok_slot {
    uint32_t id; /* UINT32_MAX when empty */
    uint32_t hash32;
} tok_slot;

typedef struct state {
    uint32_t *wa; /* the words */
    size_t wa_len, wa_cap;
    size_t n_words;

    pair_rec *pairs;
    size_t pairs_mask, n_pairs;

    heap_ent *heap;
    size_t n_heap, cap_heap;

    agg_ent *agg;
    size_t agg_mask, n_agg;
    uint32_t *agg_live; /* indices of this step's live entries */
    size_t cap_live;
    gain *gains;
    size_t n_gains, cap_gains;
    uint32_t step;
    int nomem;

    uint8_t *blob;
    size_t blob_len, blob_cap;
    uint64_t *tok_off;
    size_t n_tok, cap_tok;
    tok_slot *tmap;
    size_t tmap_mask;

    simdbpe__merge_rec *merges;
    size_t n_merges, cap_merges;
} state;

static inline uint64_t pair_key(uint32_t l, uint32_t r)
{
    return (uint64_t)l << 32 | r;
}

static inline uint64_t word_count(const uint32_t *w)
{
    return (uint64_t)w[2] | (uint64_t)w[3] << 32;
}

/* ----------------------------------------------------------------- pairs */

static int pairs_resize(state *s, size_t cap)
{
    pair_rec *t = simdbpe__big_calloc(cap * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < cap; i++)
        t[i].key = EMPTY_KEY;
    size_t mask = cap - 1;
    if (s->pairs)
        for (size_t i = 0; i <= s->pairs_mask; i++) {
            if (s->pairs[i].key == EMPTY_KEY)
                continue;
            size_t j = simdbpe__hash_u64(s->pairs[i].key) & mask;
            while (t[j].key != EMPTY_KEY)
                j = (j + 1) & mask;
            t[j] = s->pairs[i];
        }
    if (s->pairs)
        simdbpe__big_free(s->pairs, (s->pairs_mask + 1) * sizeof *s->pairs);
    s->pairs = t;
    s->pairs_mask = mask;
    return 0;
}

/* Makes room for `more` new pairs without a resize in between, so record
 * pointers stay valid while they are inserted. */
static int pairs_reserve(state *s, size_t more)
{
    size_t cap = s->pairs_mask + 1;
    if ((s->n_pairs + more) * 2 <= cap)
        return 0;
    while ((s->n_pairs + more) * 2 > cap)
        cap *= 2;
    return pairs_resize(s, cap);
}

/* The record of pair `key`, created with count 0 if new (the caller has
 * reserved room). */
static pair_rec *pair_get(state *s, uint64_t key)
{
    size_t i = simdbpe__hash_u64(key) & s->pairs_mask;
    for (;;) {
        pair_rec *p = &s->pairs[i];
        if (p->key == key)
            return p;
        if (p->key == EMPTY_KEY) {
            memset(p, 0, sizeof *p);
            p->key = key;
            s->n_pairs++;
            return p;
        }
        i = (i + 1) & s->pairs_mask;
    }
}

/* Puts word w on p's list unless it is the last one there already. */
static void pair_add_word(state *s, pair_rec *p, uint32_t w)
{
    if (p->n_words && p->words[p->n_words - 1] == w)
        return;
    if (p->n_words == p->cap_words) {
        uint32_t cap = p->cap_words ? p->cap_words * 2 : 4;
        uint32_t *n = realloc(p->words, (size_t)cap * sizeof *n);
        if (!n) {
            s->nomem = 1;
            return;
        }
        p->words = n;
        p->cap_words = cap;
    }
    p->words[p->n_words++] = w;
}

/* ------------------------------------------------------------------ heap */

static inline int heap_above(const heap_ent *x, const heap_ent *y)
{
    return x->count > y->count || (x->count == y->count && x->key < y->key);
}

/* A 4-ary heap: half the levels of a binary one, and the four children of
 * a node share one cache line. */
static void sift_down(heap_ent *h, size_t n, size_t i)
{
    heap_ent e = h[i];
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (heap_above(&h[k], &h[best]))
                best = k;
        if (!heap_above(&h[best], &e))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = e;
}

static void heap_push(state *s, uint64_t count, uint64_t key)
{
    if (simdbpe__grow((void **)&s->heap, &s->cap_heap, s->n_heap + 1, sizeof *s->heap)) {
        s->nomem = 1;
        return;
    }
    heap_ent e = {count, key};
    size_t i = s->n_heap++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!heap_above(&e, &s->heap[parent]))
            break;
        s->heap[i] = s->heap[parent];
        i = parent;
    }
    s->heap[i] = e;
}

static heap_ent heap_pop(state *s)
{
    heap_ent top = s->heap[0];
    s->heap[0] = s->heap[--s->n_heap];
    if (s->n_heap)
        sift_down(s->heap, s->n_heap, 0);
    return top;
}

/* ---------------------------------------------------------------- tokens */

static const uint8_t *tok_bytes(const state *s, uint32_t id, size_t *len)
{
    *len = (size_t)(s->tok_off[id + 1] - s->tok_off[id]);
    return s->blob + s->tok_off[id];
}

static int tmap_grow(state *s)
{
    size_t cap = s->tmap ? (s->tmap_mask + 1) * 2 : 1u << 9;
    tok_slot *m = malloc(cap * sizeof *m);
    if (!m)
        return -1;
    for (size_t i = 0; i < cap; i++)
        m[i].id = UINT32_MAX;
    size_t mask = cap - 1;
    for (size_t id = 0; id < s->n_tok; id++) {
        size_t len;
        const uint8_t *b = tok_bytes(s, (uint32_t)id, &len);
        uint64_t h = simdbpe__hash_bytes(b, len);
        size_t j = h & mask;
        while (m[j].id != UINT32_MAX)
            j = (j + 1) & mask;
        m[j].id = (uint32_t)id;
        m[j].hash32 = (uint32_t)(h >> 32);
    }
    free(s->tmap);
    s->tmap = m;
    s->tmap_mask = mask;
    return 0;
}

/* The id of the token with bytes b[0..len), or UINT32_MAX; *slot is where
 * a new one would go. */
static uint32_t tok_find(const state *s, const uint8_t *b, size_t len, uint64_t h, size_t *slot)
{
    size_t i = h & s->tmap_mask;
    for (;;) {
        const tok_slot *t = &s->tmap[i];
        if (t->id == UINT32_MAX)
            break;
        if (t->hash32 == (uint32_t)(h >> 32)) {
            size_t tl;
            const uint8_t *tb = tok_bytes(s, t->id, &tl);
            if (tl == len && memcmp(tb, b, len) == 0)
                return t->id;
        }
        i = (i + 1) & s->tmap_mask;
    }
    *slot = i;
    return UINT32_MAX;
}

/* Appends a token with bytes b[0..len) (not already present; b must not
 * point into the blob); returns its id or UINT32_MAX when out of memory. */
static uint32_t tok_add(state *s, const uint8_t *b, size_t len)
{
    if (simdbpe__grow((void **)&s->blob, &s->blob_cap, s->blob_len + len, 1) ||
        simdbpe__grow((void **)&s->tok_off, &s->cap_tok, s->n_tok + 2, sizeof *s->tok_off))
        return UINT32_MAX;
    if (s->n_tok == 0)
        s->tok_off[0] = 0;
    memcpy(s->blob + s->blob_len, b, len);
    s->blob_len += len;
    uint32_t id = (uint32_t)s->n_tok++;
    s->tok_off[s->n_tok] = s->blob_len;
    if (s->n_tok * 2 > s->tmap_mask + 1)
        return tmap_grow(s) ? UINT32_MAX : id;
    uint64_t h = simdbpe__hash_bytes(b, len);
    size_t slot = 0;
    tok_find(s, b, len, h, &slot);
    s->tmap[slot].id = id;
    s->tmap[slot].hash32 = (uint32_t)(h >> 32);
    return id;
}

/* ----------------------------------------------------------------- setup */

/* Lays out the words of 2+ bytes as symbol sequences. */
static simdbpe_status build_words(state *s, const simdbpe__wordtab *wt)
{
    size_t total = 0;
    for (size_t i = 0; i <= wt->mask; i++)
        if (wt->slots[i].count && wt->slots[i].len >= 2)
            total += WORD_HEADER + wt->slots[i].len;
    if (total >= UINT32_MAX)
        return SIMDBPE_ERR_TOO_LARGE;
    s->wa_cap = total ? total : 1;
    s->wa = simdbpe__big_calloc(s->wa_cap * sizeof *s->wa);
    if (!s->wa)
        return SIMDBPE_ERR_NOMEM;
    for (size_t i = 0; i <= wt->mask; i++) {
        const simdbpe__word_slot *ws = &wt->slots[i];
        if (!ws->count || ws->len < 2)
            continue;
        uint32_t *w = s->wa + s->wa_len;
        w[0] = ws->len;
        w[1] = UINT32_MAX;
        w[2] = (uint32_t)ws->count;
        w[3] = (uint32_t)(ws->count >> 32);
        const uint8_t *b = simdbpe__word_bytes(wt, ws);
        for (uint32_t k = 0; k < ws->len; k++)
            w[WORD_HEADER + k] = simdbpe__bytelevel_rank(b[k]);
        s->wa_len += WORD_HEADER + ws->len;
        s->n_words++;
    }
    return SIMDBPE_OK;
}

/* Makes room for the n initial pairs: the heap and the pair table. */
static simdbpe_status pairs_start(state *s, size_t n)
{
    s->heap = malloc((n ? n : 1) * sizeof *s->heap);
    s->cap_heap = n ? n : 1;
    /* Merges add roughly a pair or two per word: size the table for that
     * up front rather than doubling it through page faults. */
    size_t cap = 64;
    while (cap < 2 * (n + s->n_words + s->n_words / 2))
        cap *= 2;
    if (!s->heap || pairs_resize(s, cap) || pairs_reserve(s, n))
        return SIMDBPE_ERR_NOMEM;
    return SIMDBPE_OK;
}

/* Enters initial pair p (left << 8 | right, byte ids) with its count and
 * the list of words that hold it (taken over), and puts it on the heap. */
static void pair_enter(state *s, uint32_t p, uint64_t count, uint32_t *list, uint32_t n)
{
    pair_rec *r = pair_get(s, pair_key(p >> 8, p & 0xFF));
    r->count = (int64_t)count;
    r->words = list;
    r->n_words = r->cap_words = n;
    s->heap[s->n_heap++] = (heap_ent){count, r->key};
}

/* Below this many pair occurrences the initial pairs are counted by
 * sorting the occurrences: the dense arrays of build_pairs_dense are
 * 1.5 MB that a small corpus pays for in page faults and clearing more
 * than for everything else. Both give the pairs in (left, right) order,
 * each with its words in the order of the word array. */
#define SORT_PAIRS_BELOW ((size_t)1 << 13)

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The initial pairs of few occurrences: each as pair << 32 | word offset,
 * sorted, so one pair's occurrences are adjacent with its words ascending. */
static simdbpe_status build_pairs_sorted(state *s, size_t n_occ)
{
    uint64_t *occ = malloc((n_occ ? n_occ : 1) * sizeof *occ);
    if (!occ)
        return SIMDBPE_ERR_NOMEM;
    size_t n = 0;
    for (size_t o = 0; o < s->wa_len; o += WORD_HEADER + s->wa[o]) {
        const uint32_t *y = s->wa + o + WORD_HEADER;
        for (uint32_t k = 0; k + 1 < s->wa[o]; k++)
            occ[n++] = (uint64_t)(y[k] << 8 | y[k + 1]) << 32 | o;
    }
    qsort(occ, n, sizeof *occ, cmp_u64);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || occ[i] >> 32 != occ[i - 1] >> 32;
    simdbpe_status st = pairs_start(s, distinct);
    for (size_t i = 0, j; i < n && st == SIMDBPE_OK; i = j) {
        uint64_t count = 0;
        uint32_t words = 0;
        for (j = i; j < n && occ[j] >> 32 == occ[i] >> 32; j++) {
            count += word_count(s->wa + (uint32_t)occ[j]);
            words += j == i || occ[j] != occ[j - 1];
        }
        uint32_t *list = malloc(words * sizeof *list);
        if (!list) {
            st = SIMDBPE_ERR_NOMEM;
            break;
        }
        words = 0;
        for (size_t k = i; k < j; k++)
            if (k == i || occ[k] != occ[k - 1])
                list[words++] = (uint32_t)occ[k];
        pair_enter(s, (uint32_t)(occ[i] >> 32), count, list, words);
    }
    free(occ);
    return st;
}

/* The initial pairs of many occurrences, counted in dense 256 x 256
 * arrays (two passes: list sizes, then lists). */
static simdbpe_status build_pairs_dense(state *s)
{
    uint64_t *cnt = calloc(65536, sizeof *cnt);
    uint32_t *len = calloc(65536, sizeof *len);
    uint32_t *last = malloc(65536 * sizeof *last);
    uint32_t **lists = calloc(65536, sizeof *lists);
    simdbpe_status st = SIMDBPE_OK;
    if (!cnt || !len || !last || !lists) {
        st = SIMDBPE_ERR_NOMEM;
        goto out;
    }
    for (int pass = 0; pass < 2 && st == SIMDBPE_OK; pass++) {
        memset(last, 0xFF, 65536 * sizeof *last);
        for (size_t o = 0; o < s->wa_len; o += WORD_HEADER + s->wa[o]) {
            const uint32_t *w = s->wa + o;
            const uint32_t *y = w + WORD_HEADER;
            uint64_t c = word_count(w);
            for (uint32_t k = 0; k + 1 < w[0]; k++) {
                uint32_t p = y[k] << 8 | y[k + 1];
                if (pass == 0)
                    cnt[p] += c;
                if (last[p] == o)
                    continue;
                last[p] = (uint32_t)o;
                if (pass == 0)
                    len[p]++;
                else
                    lists[p][len[p]++] = (uint32_t)o;
            }
        }
        if (pass == 0) {
            for (size_t p = 0; p < 65536; p++) {
                if (len[p] && !(lists[p] = malloc(len[p] * sizeof **lists))) {
                    st = SIMDBPE_ERR_NOMEM;
                    break;
                }
                len[p] = 0;
            }
        }
    }
    size_t n = 0;
    for (size_t p = 0; p < 65536; p++)
        n += len[p] > 0;
    if (st == SIMDBPE_OK)
        st = pairs_start(s, n);
    for (size_t p = 0; p < 65536 && st == SIMDBPE_OK; p++) {
        if (!len[p])
            continue;
        pair_enter(s, (uint32_t)p, cnt[p], lists[p], len[p]);
        lists[p] = NULL;
    }
out:
    if (lists)
        for (size_t p = 0; p < 65536; p++)
            free(lists[p]);
    free(lists);
    free(cnt);
    free(len);
    free(last);
    return st;
}

/* Counts the initial pairs, all of two byte ids, moves them into the pair
 * table and heapifies them. */
static simdbpe_status build_pairs(state *s)
{
    size_t n_occ = s->wa_len - WORD_HEADER * s->n_words; /* symbols */
    n_occ -= s->n_words;                                 /* pairs */
    simdbpe_status st =
        n_occ < SORT_PAIRS_BELOW ? build_pairs_sorted(s, n_occ) : build_pairs_dense(s);
    if (st != SIMDBPE_OK)
        return st;
    for (size_t i = s->n_heap; i-- > 0;)
        sift_down(s->heap, s->n_heap, i);
    return SIMDBPE_OK;
}

static simdbpe_status build(state *s, const simdbpe__wordtab *wt)
{
    simdbpe_status st = build_words(s, wt);
    if (st == SIMDBPE_OK)
        st = build_pairs(s);
    if (st == SIMDBPE_OK && tmap_grow(s))
        st = SIMDBPE_ERR_NOMEM;
    for (uint32_t id = 0; id < 256 && st == SIMDBPE_OK; id++) {
        uint8_t b = simdbpe__bytelevel_at_rank(id);
        if (tok_add(s, &b, 1) == UINT32_MAX)
            st = SIMDBPE_ERR_NOMEM;
    }
    return st;
}

/* ------------------------------------------------------------------ step */

static int agg_resize(state *s, size_t cap)
{
    agg_ent *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    size_t mask = cap - 1;
    /* Only this step's live entries move; their indices change, so the
     * live list and the gains are renumbered. */
    uint32_t *remap = s->n_agg ? malloc(s->n_agg * sizeof *remap) : NULL;
    if (s->n_agg && !remap) {
        free(t);
        return -1;
    }
    for (size_t k = 0; k < s->n_agg; k++) {
        const agg_ent *e = &s->agg[s->agg_live[k]];
        size_t j = simdbpe__hash_u64(e->key) & mask;
        while (t[j].step == s->step && t[j].key != e->key)
            j = (j + 1) & mask;
        t[j] = *e;
        remap[k] = (uint32_t)j;
    }
    for (size_t g = 0; g < s->n_gains; g++) {
        /* gains refer to the old index; find its position in the live list */
        uint64_t key = s->agg[s->gains[g].agg].key;
        size_t j = simdbpe__hash_u64(key) & mask;
        while (t[j].key != key)
            j = (j + 1) & mask;
        s->gains[g].agg = (uint32_t)j;
    }
    for (size_t k = 0; k < s->n_agg; k++)
        s->agg_live[k] = remap[k];
    free(remap);
    free(s->agg);
    s->agg = t;
    s->agg_mask = mask;
    return 0;
}

/* The step's entry for pair (l, r), created with delta 0; UINT32_MAX when
 * out of memory. */
static uint32_t agg_get(state *s, uint64_t key)
{
    size_t i = simdbpe__hash_u64(key) & s->agg_mask;
    for (;;) {
        agg_ent *e = &s->agg[i];
        if (e->step != s->step)
            break;
        if (e->key == key)
            return (uint32_t)i;
        i = (i + 1) & s->agg_mask;
    }
    if (simdbpe__grow((void **)&s->agg_live, &s->cap_live, s->n_agg + 1, sizeof *s->agg_live)) {
        s->nomem = 1;
        return UINT32_MAX;
    }
    agg_ent *e = &s->agg[i];
    e->key = key;
    e->delta = 0;
    e->step = s->step;
    e->last_w = UINT32_MAX;
    e->rec = NULL;
    s->agg_live[s->n_agg++] = (uint32_t)i;
    if (s->n_agg * 2 > s->agg_mask + 1) {
        if (agg_resize(s, (s->agg_mask + 1) * 2)) {
            s->nomem = 1;
            return UINT32_MAX;
        }
        return agg_get(s, key);
    }
    return (uint32_t)i;
}

/* Adds d to pair (l, r)'s change in this step; a gain also notes word w. */
static inline void delta(state *s, uint32_t l, uint32_t r, int64_t d, uint32_t w)
{
    uint32_t i = agg_get(s, pair_key(l, r));
    if (i == UINT32_MAX)
        return;
    agg_ent *e = &s->agg[i];
    e->delta += d;
    if (d > 0 && e->last_w != w) {
        e->last_w = w;
        if (simdbpe__grow((void **)&s->gains, &s->cap_gains, s->n_gains + 1, sizeof *s->gains)) {
            s->nomem = 1;
            return;
        }
        s->gains[s->n_gains++] = (gain){i, w};
    }
}

/* Replaces every (a, b) in word w by x, left to right, noting the count
 * changes of the neighbouring pairs. Returns the number of occurrences. */
static uint32_t merge_word(state *s, uint32_t w, uint32_t a, uint32_t b, uint32_t x)
{
    uint32_t *hdr = s->wa + w;
    uint32_t *y = hdr + WORD_HEADER;
    uint32_t n = hdr[0], i = 0, o = 0, hits = 0;
    int64_t c = (int64_t)word_count(hdr);
    while (i < n) {
        if (y[i] == a && i + 1 < n && y[i + 1] == b) {
            hits++;
            if (o > 0) {
                delta(s, y[o - 1], a, -c, w);
                delta(s, y[o - 1], x, c, w);
            }
            if (i + 2 < n) {
                delta(s, b, y[i + 2], -c, w);
                delta(s, x, y[i + 2], c, w);
            }
            y[o++] = x;
            i += 2;
        } else {
            y[o++] = y[i++];
        }
    }
    hdr[0] = o;
    return hits;
}

/* Moves the step's summed changes into the pair table, lists the words
 * that gained pairs, and pushes every pair whose count rose. */
static void apply_step(state *s)
{
    if (pairs_reserve(s, s->n_agg)) {
        s->nomem = 1;
        return;
    }
    for (size_t k = 0; k < s->n_agg; k++) {
        agg_ent *e = &s->agg[s->agg_live[k]];
        if (e->delta == 0 && e->last_w == UINT32_MAX)
            continue;
        e->rec = pair_get(s, e->key);
        e->rec->count += e->delta;
    }
    for (size_t g = 0; g < s->n_gains; g++) {
        agg_ent *e = &s->agg[s->gains[g].agg];
        pair_add_word(s, e->rec, s->gains[g].w);
    }
    for (size_t k = 0; k < s->n_agg; k++) {
        const agg_ent *e = &s->agg[s->agg_live[k]];
        if (e->delta > 0 && e->rec->count > 0)
            heap_push(s, (uint64_t)e->rec->count, e->key);
    }
}

/* Merges pair `key` = (a, b) into x in every word on its list. */
static void merge_pair(state *s, uint64_t key, uint32_t x)
{
    uint32_t a = (uint32_t)(key >> 32), b = (uint32_t)key;
    pair_rec *p = pair_get(s, key);
    uint32_t *list = p->words;
    uint32_t n_list = p->n_words;
    /* The list is not appended to in this step (new pairs all contain x,
     * which is neither a nor b) and the table does not move before
     * apply_step. */
    p->words = NULL;
    p->n_words = p->cap_words = 0;
    s->step++;
    s->n_agg = 0;
    s->n_gains = 0;
    int64_t gone = 0;
    for (uint32_t k = 0; k < n_list; k++) {
        uint32_t w = list[k];
        if (s->wa[w + 1] == s->step)
            continue;
        s->wa[w + 1] = s->step;
        gone += (int64_t)merge_word(s, w, a, b, x) * (int64_t)word_count(s->wa + w);
    }
    free(list);
    p->count -= gone;
    apply_step(s);
}

/* ------------------------------------------------------------ the loop */

static void report(const simdbpe__merge_config *cfg, const state *s, uint64_t target,
                   uint64_t last_count)
{
    simdbpe_train_progress p;
    memset(&p, 0, sizeof p);
    p.stage = SIMDBPE_TRAIN_MERGING;
    p.bytes = cfg->bytes_fed;
    p.unique_words = cfg->unique_words;
    p.merges_done = s->n_merges;
    p.merges_target = target;
    p.last_count = last_count;
    cfg->progress(&p, cfg->progress_user);
}

/* Marks a special as already being a token when its byte-level spelling is
 * the bytes of a token; returns 1 if one newly became one. */
static int special_taken(const simdbpe__merge_config *cfg, uint8_t *taken, const uint8_t *b,
                         size_t len)
{
    int newly = 0;
    for (size_t i = 0; i < cfg->n_specials; i++) {
        const simdbpe__train_special *sp = &cfg->specials[i];
        if (!taken[i] && sp->bl && sp->bl_len == len && memcmp(sp->bl, b, len) == 0) {
            taken[i] = 1;
            newly = 1;
        }
    }
    return newly;
}

/* The id of the token a + b: an existing one, or a new one. */
static uint32_t name_token(state *s, const simdbpe__merge_config *cfg, uint8_t *taken,
                           uint32_t a, uint32_t b, uint64_t *vocab, uint8_t **tmp,
                           size_t *tmp_cap)
{
    size_t la, lb;
    const uint8_t *pa = tok_bytes(s, a, &la);
    const uint8_t *pb = tok_bytes(s, b, &lb);
    if (simdbpe__grow((void **)tmp, tmp_cap, la + lb, 1))
        return UINT32_MAX;
    memcpy(*tmp, pa, la);
    memcpy(*tmp + la, pb, lb);
    size_t slot;
    uint32_t x = tok_find(s, *tmp, la + lb, simdbpe__hash_bytes(*tmp, la + lb), &slot);
    if (x != UINT32_MAX)
        return x;
    x = tok_add(s, *tmp, la + lb);
    if (x != UINT32_MAX && !special_taken(cfg, taken, *tmp, la + lb))
        (*vocab)++;
    return x;
}

static simdbpe_status run(state *s, const simdbpe__merge_config *cfg, uint8_t *taken,
                          uint64_t *vocab)
{
    uint64_t min_count = cfg->min_frequency > 1 ? cfg->min_frequency : 1;
    uint64_t target = cfg->vocab_size > *vocab ? cfg->vocab_size - *vocab : 0;
    uint8_t *tmp = NULL;
    size_t tmp_cap = 0;
    double last = simdbpe__train_now();
    uint64_t last_count = 0;
    if (agg_resize(s, 1u << 8))
        s->nomem = 1;
    while (!s->nomem && *vocab < cfg->vocab_size && s->n_heap > 0) {
        heap_ent top = heap_pop(s);
        uint64_t cur = (uint64_t)pair_get(s, top.key)->count;
        if (top.count != cur) {
            if (cur > 0 && cur < top.count)
                heap_push(s, cur, top.key);
            continue;
        }
        if (cur < min_count)
            break;
        uint32_t a = (uint32_t)(top.key >> 32), b = (uint32_t)top.key;
        size_t la, lb;
        tok_bytes(s, a, &la);
        tok_bytes(s, b, &lb);
        if (la + lb > SIMDBPE__MAX_TOKEN_BYTES)
            continue; /* a token no model may hold: never chosen */
        uint32_t x = name_token(s, cfg, taken, a, b, vocab, &tmp, &tmp_cap);
        if (x == UINT32_MAX ||
            simdbpe__grow((void **)&s->merges, &s->cap_merges, s->n_merges + 1,
                          sizeof *s->merges)) {
            s->nomem = 1;
            break;
        }
        s->merges[s->n_merges++] = (simdbpe__merge_rec){a, b, x, cur};
        last_count = cur;
        merge_pair(s, top.key, x);
        if (cfg->progress && (s->n_merges & 63) == 0) {
            double now = simdbpe__train_now();
            if (now - last >= PROGRESS_EVERY) {
                last = now;
                report(cfg, s, target, last_count);
            }
        }
    }
    free(tmp);
    if (cfg->progress)
        report(cfg, s, target, last_count);
    return s->nomem ? SIMDBPE_ERR_NOMEM : SIMDBPE_OK;
}

static void state_free(state *s)
{
    if (s->pairs)
        for (size_t i = 0; i <= s->pairs_mask; i++)
            if (s->pairs[i].key != EMPTY_KEY)
                free(s->pairs[i].words);
    if (s->pairs)
        simdbpe__big_free(s->pairs, (s->pairs_mask + 1) * sizeof *s->pairs);
    simdbpe__big_free(s->wa, s->wa_cap * sizeof *s->wa);
    free(s->heap);
    free(s->agg);
    free(s->agg_live);
    free(s->gains);
    free(s->tmap);
    free(s->blob);
    free(s->tok_off);
    free(s->merges);
}

/* Moves tokens and merges into `res` and appends the specials that are not
 * already tokens. */
static simdbpe_status finish(state *s, const simdbpe__merge_config *cfg, const uint8_t *taken,
                             simdbpe__train_result *res)
{
    res->special_ids = malloc((cfg->n_specials ? cfg->n_specials : 1) * sizeof *res->special_ids);
    if (!res->special_ids)
        return SIMDBPE_ERR_NOMEM;
    res->n_regular = (uint32_t)s->n_tok;
    for (size_t i = 0; i < cfg->n_specials; i++) {
        const simdbpe__train_special *sp = &cfg->specials[i];
        if (taken[i]) {
            size_t slot;
            res->special_ids[i] =
                tok_find(s, sp->bl, sp->bl_len, simdbpe__hash_bytes(sp->bl, sp->bl_len), &slot);
            continue;
        }
        if (simdbpe__grow((void **)&s->blob, &s->blob_cap, s->blob_len + sp->len, 1) ||
            simdbpe__grow((void **)&s->tok_off, &s->cap_tok, s->n_tok + 2, sizeof *s->tok_off))
            return SIMDBPE_ERR_NOMEM;
        memcpy(s->blob + s->blob_len, sp->text, sp->len);
        s->blob_len += sp->len;
        res->special_ids[i] = (uint32_t)s->n_tok++;
        s->tok_off[s->n_tok] = s->blob_len;
    }
    res->blob = s->blob;
    res->tok_off = s->tok_off;
    res->n_tokens = (uint32_t)s->n_tok;
    res->merges = s->merges;
    res->n_merges = s->n_merges;
    s->blob = NULL;
    s->tok_off = NULL;
    s->merges = NULL;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__train_merge(simdbpe__wordtab *words, const simdbpe__merge_config *cfg,
                                    simdbpe__train_result *res, simdbpe_error *err)
{
    state s;
    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    uint8_t *taken = calloc(cfg->n_specials ? cfg->n_specials : 1, 1);
    simdbpe_status st = taken ? build(&s, words) : SIMDBPE_ERR_NOMEM;
    /* The words now live on as symbols; free the table early. */
    simdbpe__wordtab_free(words);
    uint64_t vocab = 256;
    if (st == SIMDBPE_OK) {
        for (uint32_t b = 0; b < 256; b++) {
            uint8_t byte = (uint8_t)b;
            special_taken(cfg, taken, &byte, 1);
        }
        for (size_t i = 0; i < cfg->n_specials; i++)
            vocab += !taken[i];
        st = run(&s, cfg, taken, &vocab);
    }
    if (st == SIMDBPE_OK)
        st = finish(&s, cfg, taken, res);
    state_free(&s);
    free(taken);
    if (st != SIMDBPE_OK) {
        simdbpe__train_result_free(res);
        return simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "%s while computing merges",
                             simdbpe_strerror(st));
    }
    return SIMDBPE_OK;
}

void simdbpe__train_result_free(simdbpe__train_result *res)
{
    free(res->blob);
    free(res->tok_off);
    free(res->merges);
    free(res->special_ids);
    memset(res, 0, sizeof *res);
}
