/*
 * encode_sp.c - the encoder's side of SentencePiece-style models
 * (model/sentencepiece.c): their normalizer's or Metaspace pre-tokenizer's
 * word markers, and their pre-tokens to BPE.
 *
 * HF applies the normalizer to each stretch of text between added tokens
 * (encode_stretch in encoder.c): Prepend("\u2581") puts a marker before a
 * stretch that is not empty, Replace(" ", "\u2581") turns every space into
 * one. A Metaspace pre-tokenizer does the same to each pre-token (the
 * stretches left once the normalized added tokens are cut out too), its
 * "first" scheme only to the one at the text's start, and with `split`
 * cuts before every marker. Otherwise these files have no pre-tokenizer
 * (or one that splits nothing after the normalizer), so each normalized
 * stretch is one pre-token. It is BPE'd in parts cut before word markers where the model
 * allows (simdbpe__sp_cut_before: no merge spans such a place, so the
 * parts give the ids of the whole), and the parts, mostly words that
 * recur, are remembered: a table from a part's bytes to its ids, emptied
 * when it is full. A stretch that cannot be cut is one BPE, O(n log n).
 */
#include <stdlib.h>

#include "encoder.h"

#define META "\xE2\x96\x81" /* U+2581 */

simdbpe_status simdbpe__sp_normalize(simdbpe_encoder *e, const uint8_t **text, size_t *len)
{
    const simdbpe_model *m = e->m;
    const uint8_t *s = *text;
    size_t n = *len, spaces = 0;
    int prepend = (m->sp & SIMDBPE__SP_PREPEND) && n > 0;
    if (m->sp & SIMDBPE__SP_REPLACE)
        for (const uint8_t *p = s; (p = memchr(p, ' ', (size_t)(s + n - p))); p++)
            spaces++;
    if (!prepend && spaces == 0)
        return SIMDBPE_OK;
    size_t need = n + 2 * spaces + 3 * (size_t)prepend;
    if (simdbpe__grow((void **)&e->sp_norm, &e->sp_norm_cap, need ? need : 1, 1))
        return SIMDBPE_ERR_NOMEM;
    uint8_t *o = e->sp_norm;
    if (prepend) {
        memcpy(o, META, 3);
        o += 3;
    }
    for (size_t i = 0; i < n;) {
        const uint8_t *sp = spaces ? memchr(s + i, ' ', n - i) : NULL;
        size_t run = sp ? (size_t)(sp - (s + i)) : n - i;
        memcpy(o, s + i, run);
        o += run;
        i += run;
        if (sp) {
            memcpy(o, META, 3);
            o += 3;
            i++;
        }
    }
    *text = e->sp_norm;
    *len = need;
    return SIMDBPE_OK;
}

/* ---- the table of parts ---- */

#define PART_BITS 17           /* slots */
#define PART_ARENA (24u << 20) /* bytes of keys and ids before it is emptied */
#define PART_LONGEST 256       /* longer parts are not remembered */

typedef struct part_slot {
    uint64_t hash;
    uint32_t off;   /* key bytes at arena + off, then the ids (4-aligned) */
    uint32_t len;   /* key bytes; 0: empty */
    uint32_t n_ids;
    uint32_t pad;
} part_slot;

struct simdbpe__sp_cache {
    part_slot slots[1u << PART_BITS];
    uint32_t used;
    size_t arena_used;
    uint8_t arena[PART_ARENA];
};

void simdbpe__sp_cache_free(struct simdbpe__sp_cache *c)
{
    free(c);
}

static void cache_clear(struct simdbpe__sp_cache *c)
{
    memset(c->slots, 0, sizeof c->slots);
    c->used = 0;
    c->arena_used = 0;
}

static part_slot *cache_find(struct simdbpe__sp_cache *c, const uint8_t *s, size_t len,
                             uint64_t hash)
{
    uint32_t mask = (1u << PART_BITS) - 1;
    for (uint32_t k = (uint32_t)(hash >> 40) & mask;; k = (k + 1) & mask) {
        part_slot *p = &c->slots[k];
        if (p->len == 0 || (p->hash == hash && p->len == len &&
                            memcmp(c->arena + p->off, s, len) == 0))
            return p;
    }
}

/* The ids of the part s[0..len) appended to e->out after *n. */
static simdbpe_status encode_part(simdbpe_encoder *e, const uint8_t *s, size_t len, size_t *n)
{
    simdbpe_status st = reserve_out(e, *n, len);
    if (st != SIMDBPE_OK)
        return st;
    struct simdbpe__sp_cache *c = e->sp_cache;
    if (len > PART_LONGEST || !c)
        return simdbpe__sp_word(e->m, &e->sp_work, s, len, e->out, n);
    uint64_t hash = simdbpe__piece_hash(s, len);
    part_slot *p = cache_find(c, s, len, hash);
    if (p->len) {
        memcpy(e->out + *n, c->arena + p->off + ((p->len + 3) & ~3u), p->n_ids * sizeof *e->out);
        *n += p->n_ids;
        return SIMDBPE_OK;
    }
    size_t first = *n;
    st = simdbpe__sp_word(e->m, &e->sp_work, s, len, e->out, n);
    if (st != SIMDBPE_OK)
        return st;
    size_t k = *n - first, key = (len + 3) & ~(size_t)3, need = key + 4 * k;
    if (c->arena_used + need > PART_ARENA || c->used >= (1u << PART_BITS) / 2) {
        cache_clear(c);
        p = cache_find(c, s, len, hash);
    }
    *p = (part_slot){hash, (uint32_t)c->arena_used, (uint32_t)len, (uint32_t)k, 0};
    memcpy(c->arena + c->arena_used, s, len);
    memcpy(c->arena + c->arena_used + key, e->out + first, k * sizeof *e->out);
    c->arena_used += need;
    c->used++;
    return SIMDBPE_OK;
}

/* The pre-token s[0..len) as a Metaspace pre-tokenizer leaves it: its
 * spaces as markers, and a marker before it if the scheme puts one there
 * (`first`: it starts the text) and it does not start with one, in
 * e->sp_norm. */
static simdbpe_status metaspace(simdbpe_encoder *e, const uint8_t **text, size_t *len, int first)
{
    const simdbpe_model *m = e->m;
    const uint8_t *s = *text;
    size_t n = *len, spaces = 0;
    for (const uint8_t *p = s; (p = memchr(p, ' ', (size_t)(s + n - p))); p++)
        spaces++;
    int prepend = (m->sp & SIMDBPE__SP_META_PREPEND) &&
                  (first || !(m->sp & SIMDBPE__SP_META_FIRST)) && s[0] != ' ' &&
                  !(n >= 3 && memcmp(s, META, 3) == 0);
    if (!prepend && spaces == 0)
        return SIMDBPE_OK;
    size_t need = n + 2 * spaces + 3 * (size_t)prepend;
    if (simdbpe__grow((void **)&e->sp_norm, &e->sp_norm_cap, need, 1))
        return SIMDBPE_ERR_NOMEM;
    uint8_t *o = e->sp_norm;
    if (prepend) {
        memcpy(o, META, 3);
        o += 3;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') {
            memcpy(o, META, 3);
            o += 3;
        } else {
            *o++ = s[i];
        }
    }
    *text = e->sp_norm;
    *len = need;
    return SIMDBPE_OK;
}

/* The first marker in s[from..len), or len. */
static size_t next_marker(const uint8_t *s, size_t len, size_t from)
{
    for (size_t i = from; i + 3 <= len; i++) {
        const uint8_t *p = memchr(s + i, 0xE2, len - 2 - i);
        if (!p)
            break;
        i = (size_t)(p - s);
        if (p[1] == 0x96 && p[2] == 0x81)
            return i;
    }
    return len;
}

simdbpe_status simdbpe__encode_sp(simdbpe_encoder *e, const uint8_t *s, size_t len, int first,
                                  size_t *n)
{
    const simdbpe_model *m = e->m;
    if (m->sp & SIMDBPE__SP_META) {
        simdbpe_status st = metaspace(e, &s, &len, first);
        if (st != SIMDBPE_OK)
            return st;
    }
    int split = (m->sp & SIMDBPE__SP_META_SPLIT) != 0;
    /* The table is made on first use (its pages are touched as it fills). */
    if (!e->sp_cache)
        e->sp_cache = calloc(1, sizeof *e->sp_cache);
    for (size_t a = 0; a < len;) {
        size_t b = split ? next_marker(s, len, a + 1) : simdbpe__sp_cut_before(m, s, len, a + 1);
        simdbpe_status st = encode_part(e, s + a, b - a, n);
        if (st != SIMDBPE_OK)
            return st;
        a = b;
    }
    return SIMDBPE_OK;
}
