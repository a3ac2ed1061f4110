/*
 * merge.c - the BPE merge loop: from unique words with counts to merges.
 *
 * Data (all indices, so tables can grow):
 *
 *   words   each unique word of 2+ bytes: its symbols (token ids) in `sym`,
 *           its count, and a stamp (the last step that merged in it);
 *           words are rewritten in place as pairs merge, so they only shrink
 *   pairs   every pair ever seen: exact count (int64, never negative) and the
 *           list of words that may hold it -- every word that holds it is on
 *           the list; a word that no longer does is skipped when visited
 *   map     pair key (left << 32 | right) -> index in pairs, open addressing
 *   heap    max-heap of (count, key): highest count first, then the smallest
 *           key, which is the smallest (left id, right id); an entry may hold
 *           a stale count and is checked against the pair's count when popped
 *           (higher: pushed again with the true count; lower: dropped,
 *           because every increase of a count pushes a fresh entry)
 *   tokens  id -> bytes, and bytes -> id to find merges whose result already
 *           exists (they reuse that id)
 *
 * One step: pop the best pair P = (a, b); if its count is below the minimum,
 * stop; otherwise name the new token X, and in every word on P's list
 * replace each occurrence of a b (left to right, not overlapping) by X while
 * adjusting the counts of the neighbouring pairs:
 *
 *      ... L  a  b  R ...   ->   ... L  X  R ...
 *      (L,a) -= c  (a,b) -= c  (b,R) -= c   (L,X) += c  (X,R) += c
 *
 * where L is the symbol already written to the left (possibly an X made a
 * moment ago) and R the next unread symbol; c is the word's count. Pairs
 * whose count rose are pushed on the heap after the step. Nothing ever
 * rescans the whole word table.
 */
#include <stdlib.h>

#include "train.h"

#define PROGRESS_EVERY 0.2 /* seconds */

/* ------------------------------------------------------------ byte order */

static uint32_t byte_id_tab[256];
static uint8_t id_byte_tab[256];
static pthread_once_t byte_order_once = PTHREAD_ONCE_INIT;

/* GPT-2 orders the 256 byte tokens by the code point that spells each byte;
 * the printable bytes spell themselves and come first in byte order. */
static void init_byte_order(void)
{
    uint32_t next = 0;
    for (unsigned pass = 0; pass < 2; pass++)
        for (unsigned b = 0; b < 256; b++) {
            int own = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            if (own == (pass == 0)) {
                byte_id_tab[b] = next;
                id_byte_tab[next] = (uint8_t)b;
                next++;
            }
        }
}

uint32_t simdbpe__train_byte_id(uint8_t b)
{
    pthread_once(&byte_order_once, init_byte_order);
    return byte_id_tab[b];
}

uint8_t simdbpe__train_id_byte(uint32_t id)
{
    pthread_once(&byte_order_once, init_byte_order);
    return id_byte_tab[id & 0xFF];
}

/* ----------------------------------------------------------------- state */

typedef struct word {
    size_t start; /* first symbol in sym */
    uint64_t count;
    uint32_t len;
    uint32_t stamp;
} word;

typedef struct pair_rec {
    uint64_t key;
    int64_t count;
    uint32_t *words;
    uint32_t n_words, cap_words;
    uint32_t stamp; /* step that last put it on the touched list */
} pair_rec;

typedef struct pair_slot {
    uint64_t key; /* SIMDBPE__EMPTY_KEY-like: UINT64_MAX when empty */
    uint32_t idx;
} pair_slot;

typedef struct heap_ent {
    uint64_t count;
    uint64_t key;
} heap_ent;

typedef struct tok_slot {
    uint32_t id; /* UINT32_MAX when empty */
    uint32_t hash32;
} tok_slot;

typedef struct state {
    word *words;
    size_t n_words;
    uint32_t *sym;

    pair_rec *pairs;
    size_t n_pairs, cap_pairs;
    pair_slot *map;
    size_t map_mask;

    heap_ent *heap;
    size_t n_heap, cap_heap;

    uint32_t *touched;
    size_t n_touched, cap_touched;
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

#define EMPTY_PAIR UINT64_MAX

static inline uint64_t pair_key(uint32_t l, uint32_t r)
{
    return (uint64_t)l << 32 | r;
}

/* ----------------------------------------------------------------- pairs */

static int map_grow(state *s)
{
    size_t cap = s->map ? (s->map_mask + 1) * 2 : 1u << 16;
    pair_slot *m = malloc(cap * sizeof *m);
    if (!m)
        return -1;
    for (size_t i = 0; i < cap; i++)
        m[i].key = EMPTY_PAIR;
    size_t mask = cap - 1;
    for (size_t i = 0; i < s->n_pairs; i++) {
        size_t j = simdbpe__hash_u64(s->pairs[i].key) & mask;
        while (m[j].key != EMPTY_PAIR)
            j = (j + 1) & mask;
        m[j].key = s->pairs[i].key;
        m[j].idx = (uint32_t)i;
    }
    free(s->map);
    s->map = m;
    s->map_mask = mask;
    return 0;
}

/* The index of pair `key`, created with count 0 if new; UINT32_MAX when out
 * of memory. */
static uint32_t pair_get(state *s, uint64_t key)
{
    size_t i = simdbpe__hash_u64(key) & s->map_mask;
    for (;;) {
        pair_slot *p = &s->map[i];
        if (p->key == key)
            return p->idx;
        if (p->key == EMPTY_PAIR)
            break;
        i = (i + 1) & s->map_mask;
    }
    if (s->n_pairs >= UINT32_MAX - 1 ||
        simdbpe__grow((void **)&s->pairs, &s->cap_pairs, s->n_pairs + 1, sizeof *s->pairs)) {
        s->nomem = 1;
        return UINT32_MAX;
    }
    uint32_t idx = (uint32_t)s->n_pairs++;
    memset(&s->pairs[idx], 0, sizeof s->pairs[idx]);
    s->pairs[idx].key = key;
    s->pairs[idx].stamp = UINT32_MAX;
    s->map[i].key = key;
    s->map[i].idx = idx;
    if (s->n_pairs * 2 > s->map_mask + 1 && map_grow(s)) {
        s->nomem = 1;
        return UINT32_MAX;
    }
    return idx;
}

/* Puts word w on pair p's list unless it is already the last one there
 * (words are visited one at a time, so that catches repeats). */
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

static void sift_down(heap_ent *h, size_t n, size_t i)
{
    heap_ent e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_above(&h[c + 1], &h[c]))
            c++;
        if (!heap_above(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
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
        size_t parent = (i - 1) / 2;
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
    size_t cap = s->tmap ? (s->tmap_mask + 1) * 2 : 1u << 12;
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

/* Appends a token with bytes b[0..len) (not already present); returns its
 * id or UINT32_MAX when out of memory. */
static uint32_t tok_add(state *s, const uint8_t *b, size_t len)
{
    if (simdbpe__grow((void **)&s->blob, &s->blob_cap, s->blob_len + len, 1) ||
        simdbpe__grow((void **)&s->tok_off, &s->cap_tok, s->n_tok + 2, sizeof *s->tok_off))
        return UINT32_MAX;
    memcpy(s->blob + s->blob_len, b, len);
    s->blob_len += len;
    uint32_t id = (uint32_t)s->n_tok++;
    s->tok_off[s->n_tok] = s->blob_len;
    if (s->n_tok * 2 > s->tmap_mask + 1) {
        if (tmap_grow(s))
            return UINT32_MAX;
    } else {
        const uint8_t *nb = s->blob + s->tok_off[id];
        uint64_t h = simdbpe__hash_bytes(nb, len);
        size_t slot = 0;
        tok_find(s, nb, len, h, &slot);
        s->tmap[slot].id = id;
        s->tmap[slot].hash32 = (uint32_t)(h >> 32);
    }
    return id;
}

/* ----------------------------------------------------------------- setup */

/* Words of two or more bytes become symbol sequences; one-byte words hold no
 * pair and are dropped. Counts every adjacent pair and lists each word
 * under every pair it holds. */
static simdbpe_status build(state *s, simdbpe__wordtab *wt)
{
    size_t n = 0, total = 0;
    for (size_t i = 0; i <= wt->mask; i++)
        if (wt->slots[i].count && wt->slots[i].len >= 2) {
            n++;
            total += wt->slots[i].len;
        }
    if (n >= UINT32_MAX)
        return SIMDBPE_ERR_TOO_LARGE;
    s->words = malloc((n ? n : 1) * sizeof *s->words);
    s->sym = malloc((total ? total : 1) * sizeof *s->sym);
    s->cap_tok = 512;
    s->tok_off = malloc(s->cap_tok * sizeof *s->tok_off);
    if (!s->words || !s->sym || !s->tok_off || map_grow(s))
        return SIMDBPE_ERR_NOMEM;
    s->tok_off[0] = 0;
    size_t at = 0;
    for (size_t i = 0; i <= wt->mask; i++) {
        const simdbpe__word_slot *ws = &wt->slots[i];
        if (!ws->count || ws->len < 2)
            continue;
        uint32_t w = (uint32_t)s->n_words++;
        word *wd = &s->words[w];
        wd->start = at;
        wd->len = ws->len;
        wd->count = ws->count;
        wd->stamp = UINT32_MAX;
        const uint8_t *b = wt->arena + ws->off;
        for (uint32_t k = 0; k < ws->len; k++)
            s->sym[at + k] = simdbpe__train_byte_id(b[k]);
        for (uint32_t k = 0; k + 1 < ws->len; k++) {
            uint32_t idx = pair_get(s, pair_key(s->sym[at + k], s->sym[at + k + 1]));
            if (idx == UINT32_MAX)
                return SIMDBPE_ERR_NOMEM;
            s->pairs[idx].count += (int64_t)ws->count;
            pair_add_word(s, &s->pairs[idx], w);
        }
        if (s->nomem)
            return SIMDBPE_ERR_NOMEM;
        at += ws->len;
    }
    /* All pairs on the heap at once, then heapify. */
    s->heap = malloc((s->n_pairs ? s->n_pairs : 1) * sizeof *s->heap);
    if (!s->heap)
        return SIMDBPE_ERR_NOMEM;
    s->cap_heap = s->n_pairs ? s->n_pairs : 1;
    for (size_t i = 0; i < s->n_pairs; i++)
        s->heap[s->n_heap++] = (heap_ent){(uint64_t)s->pairs[i].count, s->pairs[i].key};
    for (size_t i = s->n_heap / 2; i-- > 0;)
        sift_down(s->heap, s->n_heap, i);
    /* The 256 byte tokens. */
    if (tmap_grow(s))
        return SIMDBPE_ERR_NOMEM;
    for (uint32_t id = 0; id < 256; id++) {
        uint8_t b = simdbpe__train_id_byte(id);
        if (tok_add(s, &b, 1) == UINT32_MAX)
            return SIMDBPE_ERR_NOMEM;
    }
    return SIMDBPE_OK;
}

/* ------------------------------------------------------------------ step */

/* Changes the count of pair (l, r) by d for word w. */
static inline void delta(state *s, uint32_t l, uint32_t r, int64_t d, uint32_t w)
{
    uint32_t idx = pair_get(s, pair_key(l, r));
    if (idx == UINT32_MAX)
        return;
    pair_rec *p = &s->pairs[idx];
    p->count += d;
    if (d > 0) {
        pair_add_word(s, p, w);
        if (p->stamp != s->step) {
            p->stamp = s->step;
            if (simdbpe__grow((void **)&s->touched, &s->cap_touched, s->n_touched + 1,
                              sizeof *s->touched)) {
                s->nomem = 1;
                return;
            }
            s->touched[s->n_touched++] = idx;
        }
    }
}

/* Replaces every (a, b) in word w by x, left to right, updating counts.
 * Returns how many occurrences there were. */
static uint64_t merge_word(state *s, uint32_t w, uint32_t a, uint32_t b, uint32_t x)
{
    word *wd = &s->words[w];
    uint32_t *y = s->sym + wd->start;
    uint32_t n = wd->len, i = 0, o = 0, hits = 0;
    int64_t c = (int64_t)wd->count;
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
    wd->len = o;
    return hits;
}

/* ------------------------------------------------------------ the loop */

static void report(const simdbpe__merge_config *cfg, const state *s, uint64_t target,
                   uint64_t last_count)
{
    simdbpe_train_progress p;
    memset(&p, 0, sizeof p);
    p.stage = SIMDBPE_TRAIN_MERGING;
    p.bytes = cfg->bytes_fed;
    p.unique_words = s->n_words;
    p.merges_done = s->n_merges;
    p.merges_target = target;
    p.last_count = last_count;
    cfg->progress(&p, cfg->progress_user);
}

/* Marks a special as already being a token when its byte-level spelling is
 * the bytes of a token; returns 1 if it newly became one. */
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

static simdbpe_status run(state *s, const simdbpe__merge_config *cfg, uint8_t *taken,
                          uint64_t *vocab)
{
    uint64_t min_count = cfg->min_frequency > 1 ? cfg->min_frequency : 1;
    uint64_t target = cfg->vocab_size > *vocab ? cfg->vocab_size - *vocab : 0;
    uint8_t *tmp = NULL;
    size_t tmp_cap = 0;
    double last = simdbpe__train_now();
    uint64_t last_count = 0;
    while (*vocab < cfg->vocab_size && s->n_heap > 0) {
        heap_ent top = heap_pop(s);
        uint32_t pidx = pair_get(s, top.key);
        if (pidx == UINT32_MAX)
            break;
        uint64_t cur = (uint64_t)s->pairs[pidx].count;
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
        if (simdbpe__grow((void **)&tmp, &tmp_cap, la + lb, 1)) {
            s->nomem = 1;
            break;
        }
        /* Copy first: tok_add may move the blob. */
        memcpy(tmp, tok_bytes(s, a, &la), la);
        memcpy(tmp + la, tok_bytes(s, b, &lb), lb);
        size_t slot;
        uint32_t x = tok_find(s, tmp, la + lb, simdbpe__hash_bytes(tmp, la + lb), &slot);
        if (x == UINT32_MAX) {
            x = tok_add(s, tmp, la + lb);
            if (x == UINT32_MAX) {
                s->nomem = 1;
                break;
            }
            if (!special_taken(cfg, taken, tmp, la + lb))
                (*vocab)++;
        }
        if (simdbpe__grow((void **)&s->merges, &s->cap_merges, s->n_merges + 1,
                          sizeof *s->merges)) {
            s->nomem = 1;
            break;
        }
        s->merges[s->n_merges++] = (simdbpe__merge_rec){a, b, x, cur};
        last_count = cur;

        /* Merge in every word that may hold the pair. The list is not
         * appended to during the step: new pairs all contain x, which is
         * neither a nor b. */
        s->step++;
        s->n_touched = 0;
        uint32_t *list = s->pairs[pidx].words;
        uint32_t n_list = s->pairs[pidx].n_words;
        for (uint32_t k = 0; k < n_list; k++) {
            uint32_t w = list[k];
            if (s->words[w].stamp == s->step)
                continue;
            s->words[w].stamp = s->step;
            uint64_t hits = merge_word(s, w, a, b, x);
            s->pairs[pidx].count -= (int64_t)(hits * s->words[w].count);
        }
        free(s->pairs[pidx].words);
        s->pairs[pidx].words = NULL;
        s->pairs[pidx].n_words = s->pairs[pidx].cap_words = 0;
        for (size_t k = 0; k < s->n_touched; k++) {
            const pair_rec *p = &s->pairs[s->touched[k]];
            if (p->count > 0)
                heap_push(s, (uint64_t)p->count, p->key);
        }
        if (s->nomem)
            break;
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
    free(s->words);
    free(s->sym);
    for (size_t i = 0; i < s->n_pairs; i++)
        free(s->pairs[i].words);
    free(s->pairs);
    free(s->map);
    free(s->heap);
    free(s->touched);
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
    /* The word table's bytes now live on as symbols; free them early. */
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
