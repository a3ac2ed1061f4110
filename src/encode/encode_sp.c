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
 * stretch is one pre-token. It is BPE'd in parts cut before word markers
 * where the model allows (simdbpe__sp_cut_before: no merge spans such a place, so the
 * parts give the ids of the whole), and the parts, mostly words that
 * recur, are remembered: a table from a part's bytes to its ids, emptied
 * when it is full. A stretch that cannot be cut is one BPE, O(n log n).
 */
#include <stdlib.h>

#include "../common/common.h"
#include "encoder.h"

simdbpe_status simdbpe__sp_normalize(simdbpe_encoder *e, const uint8_t **text, size_t *len)
{
    return simdbpe__sp_normalize_into(e->m->sp, &e->sp_norm, &e->sp_norm_cap, text, len);
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

/* 27 MB, mapped as the encoder's other large tables are
 * (simdbpe__huge_map): zero pages until they are written. */
struct simdbpe__sp_cache {
    part_slot slots[1u << PART_BITS];
    uint32_t used;
    size_t arena_used;
    void *map_base; /* what simdbpe__huge_unmap takes */
    size_t map_len;
    uint8_t arena[PART_ARENA];
};

static struct simdbpe__sp_cache *cache_new(void)
{
    void *base;
    size_t len;
    struct simdbpe__sp_cache *c = simdbpe__huge_map(sizeof *c, &base, &len);
    if (c) {
        c->map_base = base;
        c->map_len = len;
    }
    return c;
}

void simdbpe__sp_cache_free(struct simdbpe__sp_cache *c)
{
    if (c)
        simdbpe__huge_unmap(c->map_base, c->map_len);
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

/* The pre-token *text[0..*len) as a Metaspace pre-tokenizer leaves it:
 * its spaces as markers, and a marker before it if the scheme puts one
 * there (`first`: it starts the text) and it does not start with one;
 * unchanged, or a copy in e->sp_norm. */
static simdbpe_status metaspace(simdbpe_encoder *e, const uint8_t **text, size_t *len, int first)
{
    int prepend = simdbpe__sp_meta_prepends(e->m->sp, *text, *len, first);
    return simdbpe__sp_normalize_into(SIMDBPE__SP_REPLACE | (prepend ? SIMDBPE__SP_PREPEND : 0),
                                      &e->sp_norm, &e->sp_norm_cap, text, len);
}

/* With ignore_merges: each pre-token (the whole stretch, or with a
 * Metaspace split each part that starts at a word marker) that is a token
 * of the vocabulary is that token, as HF looks it up before merging; the
 * others go part by part as usual. */
static simdbpe_status encode_words(simdbpe_encoder *e, const uint8_t *s, size_t len, size_t *n)
{
    const simdbpe_model *m = e->m;
    for (size_t w = 0; w < len;) {
        /* with a split, the word ends at the next marker, sp_cut_before's
         * first cut */
        size_t end = len;
        if (m->sp & SIMDBPE__SP_META_SPLIT)
            end = simdbpe__sp_cut_before(m, s, len, w + 1);
        uint64_t lo, hi;
        simdbpe__short_words(s + w, end - w < 16 ? end - w : 16, &lo, &hi);
        uint32_t id = simdbpe__whole_find(m, s + w, end - w, simdbpe__piece_hash(s + w, end - w),
                                          lo, hi);
        simdbpe_status st = reserve_out(e, *n, 1);
        if (st != SIMDBPE_OK)
            return st;
        if (id != SIMDBPE__NO_ID) {
            e->out[(*n)++] = id;
        } else {
            for (size_t a = w; a < end;) {
                size_t b = simdbpe__sp_cut_before(m, s, end, a + 1);
                if ((st = encode_part(e, s + a, b - a, n)) != SIMDBPE_OK)
                    return st;
                a = b;
            }
        }
        w = end;
    }
    return SIMDBPE_OK;
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
    /* The table is made on first use (its pages are touched as it fills). */
    if (!e->sp_cache)
        e->sp_cache = cache_new();
    if (m->ignore_merges)
        return encode_words(e, s, len, n);
    for (size_t a = 0; a < len;) {
        size_t b = simdbpe__sp_cut_before(m, s, len, a + 1);
        simdbpe_status st = encode_part(e, s + a, b - a, n);
        if (st != SIMDBPE_OK)
            return st;
        a = b;
    }
    return SIMDBPE_OK;
}
