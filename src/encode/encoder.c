/*
 * encoder.c - the per-thread encoder: text in, token ids out.
 *
 * For each document:
 *   1. validate UTF-8 with the encoder's kernel set (strict: fail with the
 *      offset; replace: rewrite each maximal invalid subpart as U+FFFD);
 *   2. if specials are allowed (or forbidden), cut the text at occurrences
 *      of special tokens;
 *   3. split each stretch into pre-tokens and encode each one:
 *        - one byte: its byte token;
 *        - the whole pre-token is a token BPE would produce whole: emit it;
 *        - in the encoder's cache: copy the cached ids;
 *        - otherwise run the BPE merge and cache the result.
 *
 * The cache is direct-mapped and bounded (CACHE_SLOTS * 64 bytes); a new
 * entry simply replaces the one in its slot.
 */
#include <stdlib.h>

#include "../../kernels/kernels.h"
#include "../model/model.h"
#include "../pretok/pretok.h"

#define CACHE_SLOTS (1u << 14)
#define CACHE_KEY_MAX 26
#define CACHE_IDS 8

typedef struct cache_slot {
    uint32_t hash32;
    uint8_t klen; /* 0 = empty */
    uint8_t nids;
    uint8_t key[CACHE_KEY_MAX];
    uint32_t ids[CACHE_IDS];
} cache_slot;

struct simdbpe_encoder {
    const simdbpe_model *m;
    const simdbpe__kernels *k;
    uint32_t *out;
    size_t out_cap;
    uint8_t *clean; /* replace mode: the repaired text */
    size_t clean_cap;
    simdbpe__bpe_scratch scratch;
    cache_slot *cache;
};

simdbpe_status simdbpe_encoder_new(const simdbpe_model *model, simdbpe_encoder **out)
{
    if (!model || !out)
        return SIMDBPE_ERR_INVALID_ARG;
    *out = NULL;
    const simdbpe__kernels *k = simdbpe__kernels_select(getenv("SIMDBPE_KERNEL"));
    if (!k)
        return SIMDBPE_ERR_UNSUPPORTED;
    simdbpe_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return SIMDBPE_ERR_NOMEM;
    e->cache = calloc(CACHE_SLOTS, sizeof *e->cache);
    if (!e->cache) {
        free(e);
        return SIMDBPE_ERR_NOMEM;
    }
    e->m = model;
    e->k = k;
    *out = e;
    return SIMDBPE_OK;
}

void simdbpe_encoder_free(simdbpe_encoder *e)
{
    if (!e)
        return;
    free(e->out);
    free(e->clean);
    free(e->cache);
    simdbpe__bpe_scratch_free(&e->scratch);
    free(e);
}

const char *simdbpe_encoder_kernel_name(const simdbpe_encoder *e)
{
    return e->k->name;
}

/* Encodes one pre-token; appends to e->out at *n. */
static simdbpe_status encode_piece(simdbpe_encoder *e, const uint8_t *p, size_t len, size_t *n)
{
    const simdbpe_model *m = e->m;
    if (len == 1) {
        e->out[(*n)++] = m->byte_id[p[0]];
        return SIMDBPE_OK;
    }
    uint64_t h = simdbpe__hash_bytes(p, len);
    uint32_t id = simdbpe__whole_find(m, p, len, h);
    if (id != SIMDBPE__NO_ID) {
        e->out[(*n)++] = id;
        return SIMDBPE_OK;
    }
    cache_slot *slot = NULL;
    if (len <= CACHE_KEY_MAX) {
        slot = &e->cache[(h >> 7) & (CACHE_SLOTS - 1)];
        if (slot->klen == len && slot->hash32 == (uint32_t)h && memcmp(slot->key, p, len) == 0) {
            memcpy(e->out + *n, slot->ids, slot->nids * sizeof(uint32_t));
            *n += slot->nids;
            return SIMDBPE_OK;
        }
    }
    size_t start = *n;
    simdbpe_status st = simdbpe__bpe_word(m, &e->scratch, p, len, e->out, n);
    if (st != SIMDBPE_OK)
        return st;
    if (slot && *n - start <= CACHE_IDS) {
        slot->hash32 = (uint32_t)h;
        slot->klen = (uint8_t)len;
        slot->nids = (uint8_t)(*n - start);
        memcpy(slot->key, p, len);
        memcpy(slot->ids, e->out + start, slot->nids * sizeof(uint32_t));
    }
    return SIMDBPE_OK;
}

static simdbpe_status encode_ordinary(simdbpe_encoder *e, const uint8_t *s, size_t len, size_t *n)
{
    size_t i = 0;
    while (i < len) {
        size_t j = simdbpe__pretok_piece_end(s, len, i);
        simdbpe_status st = encode_piece(e, s + i, j - i, n);
        if (st != SIMDBPE_OK)
            return st;
        i = j;
    }
    return SIMDBPE_OK;
}

/* Finds the leftmost occurrence of any special at or after `from` (the
 * longest one where several start at the same offset). next[] caches each
 * special's next occurrence so the text is scanned once per special. */
static size_t find_special(const simdbpe_model *m, const uint8_t *s, size_t len, size_t from,
                           size_t *next, size_t *which)
{
    size_t best = len;
    for (size_t k = 0; k < m->n_specials; k++) {
        const simdbpe__special *sp = &m->specials[k];
        if (next[k] < from || next[k] == SIZE_MAX - 1) {
            const uint8_t *hit = from < len ? memmem(s + from, len - from, sp->text, sp->len) : NULL;
            next[k] = hit ? (size_t)(hit - s) : SIZE_MAX;
        }
        if (next[k] < best || (next[k] == best && best < len && sp->len > m->specials[*which].len)) {
            best = next[k];
            *which = k;
        }
    }
    return best;
}

static simdbpe_status encode_text(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                  simdbpe_special_policy policy, size_t *n, simdbpe_error *err)
{
    const simdbpe_model *m = e->m;
    if (policy == SIMDBPE_SPECIAL_AS_TEXT || m->n_specials == 0)
        return encode_ordinary(e, s, len, n);
    size_t next_small[8];
    size_t *next = m->n_specials <= 8 ? next_small : malloc(m->n_specials * sizeof *next);
    if (!next)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    for (size_t k = 0; k < m->n_specials; k++)
        next[k] = SIZE_MAX - 1; /* not searched yet */
    simdbpe_status st = SIMDBPE_OK;
    size_t i = 0;
    while (st == SIMDBPE_OK && i < len) {
        size_t which = 0;
        size_t at = find_special(m, s, len, i, next, &which);
        st = encode_ordinary(e, s + i, at - i, n);
        if (st != SIMDBPE_OK || at == len)
            break;
        const simdbpe__special *sp = &m->specials[which];
        if (policy == SIMDBPE_SPECIAL_ERROR) {
            char q[64];
            simdbpe__quote(q, sizeof q, sp->text, sp->len);
            st = simdbpe__fail(err, SIMDBPE_ERR_SPECIAL_TOKEN, at, 0,
                               "special token %s at byte offset %zu is not allowed", q, at);
            break;
        }
        e->out[(*n)++] = sp->id;
        i = at + sp->len;
    }
    if (next != next_small)
        free(next);
    return st;
}

/* Copies s into e->clean with every maximal invalid subpart replaced by
 * U+FFFD (EF BF BD); `first_bad` is the offset of the first invalid byte. */
static simdbpe_status repair_utf8(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                  size_t first_bad, size_t *out_len)
{
    /* Each invalid byte becomes at most 3 bytes. */
    if (len > (SIZE_MAX - 1) / 3)
        return SIMDBPE_ERR_TOO_LARGE;
    if (simdbpe__grow((void **)&e->clean, &e->clean_cap, 3 * len + 1, 1))
        return SIMDBPE_ERR_NOMEM;
    uint8_t *o = e->clean;
    memcpy(o, s, first_bad);
    size_t n = first_bad, i = first_bad;
    while (i < len) {
        size_t valid = e->k->validate_utf8(s + i, len - i);
        memcpy(o + n, s + i, valid);
        n += valid;
        i += valid;
        if (i == len)
            break;
        i += simdbpe__utf8_maximal_subpart(s + i, len - i);
        memcpy(o + n, "\xEF\xBF\xBD", 3);
        n += 3;
    }
    *out_len = n;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_encode(simdbpe_encoder *e, const char *text, size_t len,
                              const simdbpe_encode_options *opts, const uint32_t **ids,
                              size_t *n_ids, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!e || (!text && len) || !ids || !n_ids)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "encode: NULL argument");
    static const simdbpe_encode_options defaults = {SIMDBPE_SPECIAL_AS_TEXT, SIMDBPE_UTF8_STRICT};
    if (!opts)
        opts = &defaults;
    *ids = NULL;
    *n_ids = 0;
    const uint8_t *s = (const uint8_t *)text;
    size_t bad = len ? e->k->validate_utf8(s, len) : 0;
    if (bad != len) {
        if (opts->errors != SIMDBPE_UTF8_REPLACE)
            return simdbpe__fail(err, SIMDBPE_ERR_INVALID_UTF8, bad, 0,
                                 "invalid UTF-8 at byte offset %zu (byte 0x%02X)", bad, s[bad]);
        simdbpe_status st = repair_utf8(e, s, len, bad, &len);
        if (st != SIMDBPE_OK)
            return simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "%s", simdbpe_strerror(st));
        s = e->clean;
    }
    /* Every pre-token yields at most one id per byte. */
    if (simdbpe__grow((void **)&e->out, &e->out_cap, len + 1, sizeof *e->out))
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    size_t n = 0;
    simdbpe_status st = encode_text(e, s, len, opts->special, &n, err);
    if (st != SIMDBPE_OK) {
        if (err && err->status == SIMDBPE_OK)
            simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "%s", simdbpe_strerror(st));
        return st;
    }
    *ids = e->out;
    *n_ids = n;
    return SIMDBPE_OK;
}
