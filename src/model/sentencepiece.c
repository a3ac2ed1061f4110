/*
 * sentencepiece.c - BPE over characters with byte fallback: the
 * SentencePiece-style models of tokenizer.json (Llama-2, Mistral, Gemma),
 * as HF tokenizers' BPE model encodes a pre-token (models/bpe/model.rs
 * merge_word, word.rs merge_all).
 *
 * The initial symbols are the pre-token's characters: a character that is
 * a token is that token; one that is not becomes the <0xNN> tokens of its
 * UTF-8 bytes (byte_fallback), else the unknown token, a run of unknown
 * characters one unknown token with fuse_unk. Then the adjacent pair of
 * lowest rank is merged, the leftmost among equal ranks, until no pair is
 * a merge: a linked list of symbols and a binary min-heap of (rank,
 * position), entries checked when popped (a neighbour may have changed),
 * so a pre-token of n characters costs O(n log n) whatever its length.
 *
 * The characters' tokens are looked up in a table built when the model is
 * opened from its tokens of one character (ASCII directly, the rest by
 * open addressing on the code point).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/utf8_valid.h"
#include "model.h"

#define NONE UINT32_MAX

typedef struct char_slot {
    uint32_t cp; /* NONE: empty */
    uint32_t id;
} char_slot;

/* The code point of s[0..len) if it is one UTF-8 character (of a
 * well-formed shape: a model image may hold any bytes), else NONE. */
static uint32_t one_char(const uint8_t *s, size_t len)
{
    size_t want = s[0] < 0x80 ? 1 : s[0] < 0xC2 ? 0 : s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3
                : s[0] < 0xF5 ? 4 : 0;
    if (want != len)
        return NONE;
    for (size_t k = 1; k < len; k++)
        if ((s[k] & 0xC0) != 0x80)
            return NONE;
    size_t l;
    return simdbpe__utf8_decode(s, 0, &l);
}

/* A character's entry: its token id, and BLOCKS if some merge joins a
 * token ending with it to one starting with the word marker (no cut
 * before a marker after it, see simdbpe__sp_cut_before). */
#define BLOCKS 0x80000000u

struct simdbpe__sp_chars {
    uint32_t ascii[128];
    char_slot *slots;
    uint32_t mask;
    int cuts;          /* the marker is a token: pieces may be cut before it */
    /* With byte fallback, the bytes without a <0xNN> token (byte_id holds
     * the unknown token): a character not in the vocabulary that has one
     * of them is unknown, as in HF. */
    uint64_t no_byte[4];
    int any_no_byte;
    int unknown_block; /* a merge joins a byte or unknown token to a marker one */
    /* The added tokens matched by other bytes than their token's (a
     * normalized one in the vocabulary), by id: decoding gives that text. */
    const simdbpe__special **respelled;
    size_t n_respelled;
};

static inline uint32_t cp_slot(uint32_t cp, uint32_t mask)
{
    return (uint32_t)(((uint64_t)cp * 0x9E3779B97F4A7C15ULL) >> 40) & mask;
}

static void mark_blocks(const simdbpe_model *m, struct simdbpe__sp_chars *t);

static int by_id(const void *a, const void *b)
{
    uint32_t x = (*(const simdbpe__special *const *)a)->id;
    uint32_t y = (*(const simdbpe__special *const *)b)->id;
    return (x > y) - (x < y);
}

/* t->respelled from the model's added tokens (0, or -1: out of memory). */
static int find_respelled(const simdbpe_model *m, struct simdbpe__sp_chars *t)
{
    for (int pass = 0; pass < 2; pass++) {
        t->n_respelled = 0;
        for (size_t i = 0; i < m->n_specials; i++) {
            const simdbpe__special *a = &m->specials[i];
            uint32_t off = m->tok_off[a->id], len = m->tok_off[a->id + 1] - off;
            if (a->len == len && memcmp(a->text, m->blob + off, len) == 0)
                continue;
            if (pass)
                t->respelled[t->n_respelled] = a;
            t->n_respelled++;
        }
        if (pass || t->n_respelled == 0)
            break;
        t->respelled = malloc(t->n_respelled * sizeof *t->respelled);
        if (!t->respelled)
            return -1;
    }
    if (t->n_respelled)
        qsort(t->respelled, t->n_respelled, sizeof *t->respelled, by_id);
    return 0;
}

void simdbpe__sp_token_string(const simdbpe_model *m, uint32_t id, const uint8_t **s,
                              size_t *len)
{
    const struct simdbpe__sp_chars *t = m->sp_chars;
    size_t lo = 0, hi = t->n_respelled;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->respelled[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->n_respelled && t->respelled[lo]->id == id) {
        *s = t->respelled[lo]->text;
        *len = t->respelled[lo]->len;
        return;
    }
    *s = m->blob + m->tok_off[id];
    *len = m->tok_off[id + 1] - m->tok_off[id];
}

simdbpe_status simdbpe__sp_chars_build(simdbpe_model *m)
{
    struct simdbpe__sp_chars *t = calloc(1, sizeof *t);
    if (!t)
        return SIMDBPE_ERR_NOMEM;
    for (int c = 0; c < 128; c++)
        t->ascii[c] = NONE;
    uint32_t n = 0;
    for (uint32_t id = 0; id < m->vocab_size; id++) {
        uint32_t len = m->tok_off[id + 1] - m->tok_off[id];
        n += m->tok_has[id] && len >= 2 && len <= 4;
    }
    uint32_t size = 16;
    while (size < 2 * n)
        size *= 2;
    t->mask = size - 1;
    t->slots = malloc(size * sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return SIMDBPE_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < size; i++)
        t->slots[i].cp = NONE;
    /* HF's BPE looks characters up in model.vocab: not in the added
     * tokens that are only their text. */
    uint8_t *added_only = calloc(m->vocab_size, 1);
    if (!added_only) {
        free(t->slots);
        free(t);
        return SIMDBPE_ERR_NOMEM;
    }
    for (size_t i = 0; i < m->n_specials; i++)
        if (!(m->specials[i].flags & SIMDBPE__ADDED_IN_VOCAB))
            added_only[m->specials[i].id] = 1;
    /* Lower ids first: a character listed twice (impossible in a JSON
     * vocabulary, possible in a hand-made image) keeps the lower id. */
    for (uint32_t id = 0; id < m->vocab_size; id++) {
        size_t len = m->tok_off[id + 1] - m->tok_off[id];
        if (!m->tok_has[id] || len == 0 || len > 4)
            continue;
        uint32_t cp = one_char(m->blob + m->tok_off[id], len);
        if (cp == NONE || added_only[id])
            continue;
        if (cp < 128) {
            if (t->ascii[cp] == NONE)
                t->ascii[cp] = id;
            continue;
        }
        uint32_t k = cp_slot(cp, t->mask);
        while (t->slots[k].cp != NONE && t->slots[k].cp != cp)
            k = (k + 1) & t->mask;
        if (t->slots[k].cp == NONE)
            t->slots[k] = (char_slot){cp, id};
    }
    free(added_only);
    for (int b = 0; (m->sp & SIMDBPE__SP_BYTE_FALLBACK) && b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        uint32_t id = m->byte_id[b];
        if (m->tok_off[id + 1] - m->tok_off[id] != 6 ||
            memcmp(m->blob + m->tok_off[id], name, 6) != 0) {
            t->no_byte[b >> 6] |= 1ULL << (b & 63);
            t->any_no_byte = 1;
        }
    }
    mark_blocks(m, t);
    if (find_respelled(m, t) != 0) {
        simdbpe__sp_chars_free(t);
        return SIMDBPE_ERR_NOMEM;
    }
    m->sp_chars = t;
    return SIMDBPE_OK;
}

void simdbpe__sp_chars_free(struct simdbpe__sp_chars *t)
{
    if (!t)
        return;
    free(t->respelled);
    free(t->slots);
    free(t);
}

/* The entry of cp: id | BLOCKS, or NONE. */
static inline uint32_t char_entry(const struct simdbpe__sp_chars *t, uint32_t cp)
{
    if (cp < 128)
        return t->ascii[cp];
    for (uint32_t k = cp_slot(cp, t->mask);; k = (k + 1) & t->mask) {
        if (t->slots[k].cp == cp)
            return t->slots[k].id;
        if (t->slots[k].cp == NONE)
            return NONE;
    }
}

static inline uint32_t *char_entry_ptr(struct simdbpe__sp_chars *t, uint32_t cp)
{
    if (cp < 128)
        return &t->ascii[cp];
    for (uint32_t k = cp_slot(cp, t->mask);; k = (k + 1) & t->mask) {
        if (t->slots[k].cp == cp)
            return &t->slots[k].id;
        if (t->slots[k].cp == NONE)
            return NULL;
    }
}

static inline uint32_t char_id(const struct simdbpe__sp_chars *t, uint32_t cp)
{
    uint32_t e = char_entry(t, cp);
    return e == NONE ? NONE : e & ~BLOCKS;
}

int simdbpe__sp_meta_prepends(uint32_t sp, const uint8_t *s, size_t n, int first)
{
    return (sp & SIMDBPE__SP_META_PREPEND) && (first || !(sp & SIMDBPE__SP_META_FIRST)) &&
           n > 0 && s[0] != ' ' && !(n >= 3 && s[0] == 0xE2 && s[1] == 0x96 && s[2] == 0x81);
}


/* The last character of s[0..len) (valid UTF-8 in the models' tokens). */
static uint32_t last_char(const uint8_t *s, size_t len)
{
    size_t k = len - 1;
    while (k > 0 && (s[k] & 0xC0) == 0x80)
        k--;
    return one_char(s + k, len - k);
}

/*
 * Where pieces may be cut. BPE never merges across a place where no merge
 * joins the two sides: the first merge that would span it joins a symbol
 * ending there to one starting there. So before a word marker whose
 * preceding character c is no marker, a cut is exact unless some merge
 * joins a token ending with c (or, for a character that is no token, a
 * byte or unknown token) to one starting with the marker; those c are
 * marked here from the rules. (Initial symbols are per character, and the
 * marker, being a token, is never an unknown one fused with others.)
 */
static void mark_blocks(const simdbpe_model *m, struct simdbpe__sp_chars *t)
{
    static const uint8_t meta[3] = {0xE2, 0x96, 0x81};
    uint32_t marker = char_id(t, 0x2581);
    t->cuts = marker != NONE;
    for (uint32_t r = 0; t->cuts && r < m->n_merges; r++) {
        uint32_t a = m->rules[r].left, b = m->rules[r].right;
        const uint8_t *bs = m->blob + m->tok_off[b], *as = m->blob + m->tok_off[a];
        size_t bl = m->tok_off[b + 1] - m->tok_off[b], al = m->tok_off[a + 1] - m->tok_off[a];
        if (bl < 3 || memcmp(bs, meta, 3) != 0 || al == 0)
            continue;
        int byte_token = al == 6 && memcmp(as, "<0x", 3) == 0 && as[5] == '>';
        if (byte_token || a == m->unk_id) {
            t->unknown_block = 1;
            continue;
        }
        uint32_t c = last_char(as, al);
        uint32_t *e = c == NONE ? NULL : char_entry_ptr(t, c);
        if (e)
            *e |= BLOCKS;
        else if (c != NONE)
            t->unknown_block = 1; /* a character that is no token ends a token */
    }
}

size_t simdbpe__sp_cut_before(const simdbpe_model *m, const uint8_t *s, size_t len, size_t from)
{
    const struct simdbpe__sp_chars *t = m->sp_chars;
    int split = (m->sp & SIMDBPE__SP_META_SPLIT) != 0; /* a cut before every marker */
    if (!t->cuts && !split)
        return len;
    for (size_t i = from; i + 3 <= len;) {
        const uint8_t *p = memchr(s + i, 0xE2, len - 2 - i);
        if (!p)
            break;
        i = (size_t)(p - s);
        if (p[1] != 0x96 || p[2] != 0x81 || i == 0) {
            i++;
            continue;
        }
        if (split)
            return i;
        uint32_t c = last_char(s, i);
        uint32_t e = c == NONE ? NONE : char_entry(t, c);
        if (c != 0x2581 && c != NONE &&
            (e == NONE ? !t->unknown_block : !(e & BLOCKS)))
            return i;
        i += 3;
    }
    return len;
}

simdbpe_status simdbpe__sp_normalize_into(uint32_t sp, uint8_t **buf, size_t *cap,
                                         const uint8_t **text, size_t *len)
{
    static const uint8_t meta[3] = {0xE2, 0x96, 0x81};
    const uint8_t *s = *text;
    size_t n = *len, spaces = 0;
    int prepend = (sp & SIMDBPE__SP_PREPEND) && n > 0;
    if (sp & SIMDBPE__SP_REPLACE)
        for (const uint8_t *p = s; (p = memchr(p, ' ', (size_t)(s + n - p))); p++)
            spaces++;
    if (!prepend && spaces == 0)
        return SIMDBPE_OK;
    size_t need = n + 2 * spaces + 3 * (size_t)prepend;
    if (need > *cap) {
        size_t grow = need > 2 * *cap ? need : 2 * *cap;
        uint8_t *grown = realloc(*buf, grow);
        if (!grown)
            return SIMDBPE_ERR_NOMEM;
        *buf = grown;
        *cap = grow;
    }
    uint8_t *o = *buf;
    if (prepend) {
        memcpy(o, meta, 3);
        o += 3;
    }
    for (size_t i = 0; i < n;) {
        const uint8_t *space = spaces ? memchr(s + i, ' ', n - i) : NULL;
        size_t run = space ? (size_t)(space - (s + i)) : n - i;
        memcpy(o, s + i, run);
        o += run;
        i += run;
        if (space) {
            memcpy(o, meta, 3);
            o += 3;
            i++;
        }
    }
    *text = *buf;
    *len = need;
    return SIMDBPE_OK;
}

void simdbpe__sp_work_free(simdbpe__sp_work *w)
{
    free(w->id);
    free(w->prev);
    free(w->next);
    free(w->heap);
    memset(w, 0, sizeof *w);
}

static int reserve(simdbpe__sp_work *w, size_t n)
{
    if (n <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < n)
        cap *= 2;
    uint32_t *id = realloc(w->id, cap * sizeof *id);
    if (id)
        w->id = id;
    uint32_t *prev = realloc(w->prev, cap * sizeof *prev);
    if (prev)
        w->prev = prev;
    uint32_t *next = realloc(w->next, cap * sizeof *next);
    if (next)
        w->next = next;
    if (!id || !prev || !next)
        return -1;
    w->cap = cap;
    return 0;
}

/* ---- the heap of (rank << 32 | position) ---- */

static int heap_push(simdbpe__sp_work *w, size_t *n, uint64_t key)
{
    if (*n == w->heap_cap) {
        size_t cap = w->heap_cap ? 2 * w->heap_cap : 256;
        uint64_t *h = realloc(w->heap, cap * sizeof *h);
        if (!h)
            return -1;
        w->heap = h;
        w->heap_cap = cap;
    }
    uint64_t *h = w->heap;
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > key) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = key;
    return 0;
}

static uint64_t heap_pop(simdbpe__sp_work *w, size_t *n)
{
    uint64_t *h = w->heap, top = h[0], last = h[--*n];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && h[c + 1] < h[c])
            c++;
        if (h[c] >= last)
            break;
        h[i] = h[c];
        i = c;
    }
    if (m)
        h[i] = last;
    return top;
}

/* Whether one of the bytes s[0..l) has no byte token. */
static int no_byte(const struct simdbpe__sp_chars *t, const uint8_t *s, size_t l)
{
    for (size_t k = 0; k < l; k++)
        if (t->no_byte[s[k] >> 6] >> (s[k] & 63) & 1)
            return 1;
    return 0;
}

int simdbpe__sp_char_unknown(const simdbpe_model *m, const uint8_t *s, size_t l)
{
    size_t n;
    uint32_t cp = s[0] < 0x80 ? s[0] : simdbpe__utf8_decode(s, 0, &n);
    return char_id(m->sp_chars, cp) == NONE &&
           (!(m->sp & SIMDBPE__SP_BYTE_FALLBACK) ||
            (m->sp_chars->any_no_byte && no_byte(m->sp_chars, s, l)));
}

/* Queues the pair of symbols a and next[a] if it is a merge. */
static int queue(const simdbpe_model *m, simdbpe__sp_work *w, size_t *n, uint32_t a)
{
    uint32_t b = w->next[a];
    if (b == NONE)
        return 0;
    const simdbpe__merge_slot *s = simdbpe__merge_find(m, w->id[a], w->id[b]);
    return s ? heap_push(w, n, (uint64_t)s->rank << 32 | a) : 0;
}

simdbpe_status simdbpe__sp_word(const simdbpe_model *m, simdbpe__sp_work *w, const uint8_t *s,
                                size_t len, uint32_t *out, size_t *n_out)
{
    if (len >= NONE)
        return SIMDBPE_ERR_TOO_LARGE;
    if (reserve(w, len) != 0)
        return SIMDBPE_ERR_NOMEM;
    /* The initial symbols (merge_word): at most one a byte. A pending run
     * of unknown characters is written before the next known character;
     * byte-fallback tokens do not write it first, as in HF (with byte
     * fallback, a character is unknown only if one of its bytes has no
     * token). */
    uint32_t *id = w->id, n = 0;
    int unk = 0;
    const int fuse = (m->sp & SIMDBPE__SP_FUSE_UNK) != 0;
    const int bytes = (m->sp & SIMDBPE__SP_BYTE_FALLBACK) != 0;
    for (size_t i = 0; i < len;) {
        size_t l = 1;
        uint32_t cp = s[i] < 0x80 ? s[i] : simdbpe__utf8_decode(s, i, &l);
        uint32_t t = char_id(m->sp_chars, cp);
        if (t != NONE) {
            if (unk)
                id[n++] = m->unk_id;
            unk = 0;
            id[n++] = t;
        } else if (bytes && !(m->sp_chars->any_no_byte && no_byte(m->sp_chars, s + i, l))) {
            for (size_t k = 0; k < l; k++)
                id[n++] = m->byte_id[s[i + k]];
        } else {
            if (unk && !fuse)
                id[n++] = m->unk_id;
            unk = 1;
        }
        i += l;
    }
    if (unk)
        id[n++] = m->unk_id;
    /* merge_all */
    size_t heap_n = 0;
    for (uint32_t i = 0; i < n; i++) {
        w->prev[i] = i ? i - 1 : NONE;
        w->next[i] = i + 1 < n ? i + 1 : NONE;
    }
    for (uint32_t i = 0; i + 1 < n; i++)
        if (queue(m, w, &heap_n, i) != 0)
            return SIMDBPE_ERR_NOMEM;
    while (heap_n) {
        uint64_t key = heap_pop(w, &heap_n);
        uint32_t a = (uint32_t)key, rank = (uint32_t)(key >> 32), b = w->next[a];
        if (id[a] == NONE || b == NONE)
            continue;
        const simdbpe__merge_slot *slot = simdbpe__merge_find(m, id[a], id[b]);
        if (!slot || slot->rank != rank)
            continue; /* a neighbour changed since it was queued */
        id[a] = slot->id;
        id[b] = NONE;
        w->next[a] = w->next[b];
        if (w->next[b] != NONE)
            w->prev[w->next[b]] = a;
        if ((w->prev[a] != NONE && queue(m, w, &heap_n, w->prev[a]) != 0) ||
            queue(m, w, &heap_n, a) != 0)
            return SIMDBPE_ERR_NOMEM;
    }
    size_t k = *n_out;
    for (uint32_t i = 0; i < n; i = w->next[i]) {
        out[k++] = id[i];
        if (w->next[i] == NONE)
            break;
    }
    *n_out = k;
    return SIMDBPE_OK;
}
