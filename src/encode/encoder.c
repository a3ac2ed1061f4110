/*
 * encoder.c - the per-thread encoder: text in, token ids out.
 *
 * For each document:
 *   1. validate UTF-8 with the encoder's kernel set (strict: fail with the
 *      offset; replace: rewrite each maximal invalid subpart as U+FFFD);
 *   2. if specials are allowed (or forbidden), cut the text at occurrences
 *      of special tokens;
 *   3. find the pre-tokens of each stretch with the block scanner (a bitmask
 *      of piece starts per 64 bytes) and encode each one:
 *        - in the piece table (pieces of up to 16 bytes: the model's whole
 *          tokens, and every piece the encoder has encoded): copy its ids;
 *        - over 16 bytes, in the long map: copy its ids;
 *        - if no merge spans some place in it (simdbpe__may_join: most
 *          runs of CJK characters, of emoji, of punctuation), encode its
 *          parts between such places as pieces of their own;
 *        - otherwise run the BPE merge, and keep the result.
 *
 * Step 3 is the piece path (pieces.inc.h, built for the baseline CPU and
 * for AVX2); the tables it uses are described in encoder.h.
 */
#include <stdlib.h>

#include "encoder.h"
#include "../common/nfc.h"

/*
 * The first OUT_SMALL ids of an output go to room in the encoder's fixed
 * mapping; a larger output goes to a mapping of huge pages of its own,
 * written in order, like the text is read: on 4 KB pages a long
 * document's ids take a TLB miss every 1 K ids and, the first time, a
 * page fault (microseconds on virtual machines).
 */
#define OUT_SMALL ((size_t)1 << 17)

/* Releases e->out's mapping, if it has one of its own. */
static void free_out(simdbpe_encoder *e)
{
    if (e->out_map)
        simdbpe__huge_unmap(e->out_map, e->out_map_len);
}

simdbpe_status simdbpe__grow_out(simdbpe_encoder *e, size_t n, size_t need)
{
    size_t cap = e->out_cap ? e->out_cap : 1024;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / sizeof *e->out)
            return SIMDBPE_ERR_NOMEM;
        cap *= 2;
    }
    if (e->out_borrowed) { /* the caller's array (simdbpe_encode_append) */
        uint32_t *out = realloc(e->out, cap * sizeof *out);
        if (!out)
            return SIMDBPE_ERR_NOMEM;
        e->out = out;
        e->out_cap = cap;
        return SIMDBPE_OK;
    }
    void *map;
    size_t map_len, keep = (n < e->out_cap ? n : e->out_cap) * sizeof *e->out;
    uint32_t *out;
    if (e->out_map) { /* moved to the larger mapping, not copied (huge.c) */
        out = simdbpe__huge_grow(e->out_map, e->out_map_len, e->out, keep, cap * sizeof *out,
                                 &map, &map_len);
        if (!out)
            return SIMDBPE_ERR_NOMEM;
    } else {
        if (!(out = simdbpe__huge_map(cap * sizeof *out, &map, &map_len)))
            return SIMDBPE_ERR_NOMEM;
        memcpy(out, e->out, keep);
    }
    e->out = out;
    e->out_cap = cap;
    e->out_map = map;
    e->out_map_len = map_len;
    return SIMDBPE_OK;
}

/* A table of 2^bits buckets takes up to one piece a bucket (half its
 * slots): fuller, three times as many pieces land past their home bucket,
 * each a call of the slow path (bench/README.md). */
static size_t tab_room_for(unsigned bits, size_t n)
{
    size_t most = (size_t)1 << bits;
    return n < most ? most - n : 0;
}

/* A table of 2^bits buckets in huge pages: *t, its mapping in *map;
 * false if out of memory. */
static bool tab_new(simdbpe__ptab *t, unsigned bits, void **map, size_t *map_len)
{
    *t = (simdbpe__ptab){simdbpe__huge_map(sizeof(simdbpe__pbucket) << bits, map, map_len), bits,
                         0};
    return t->b != NULL;
}

void simdbpe__grow_tab(simdbpe_encoder *e)
{
    void *map;
    size_t map_len;
    simdbpe__ptab t;
    if (!e->tab_map) {
        /* From the model's table and the overflow to one of our own, of
         * the model's size if it has room for both (a small model's may
         * not: then larger, whatever the budget). */
        if (!e->prefilled) {
            const simdbpe__ptab *base = simdbpe__model_ptab(e->m);
            if (!base) {
                e->tab_room = 0;
                return;
            }
            e->tab = *base;
            e->prefilled = true;
            e->tab_max_bits = e->tab_max_bits > base->bits ? e->tab_max_bits : base->bits;
        }
        unsigned bits = e->tab.bits;
        while (((size_t)1 << bits) <= e->tab.n + e->ovf.n)
            bits++;
        if (!tab_new(&t, bits, &map, &map_len)) {
            e->tab_room = 0;
            return;
        }
        if (bits == e->tab.bits) {
            memcpy(t.b, e->tab.b, sizeof(simdbpe__pbucket) << t.bits);
            t.n = e->tab.n;
        } else {
            simdbpe__ptab_rehash(&t, &e->tab);
        }
        if (e->tab_max_bits < bits)
            e->tab_max_bits = bits;
        simdbpe__ptab_rehash(&t, &e->ovf);
        simdbpe__huge_unmap(e->ovf_map, e->ovf_map_len);
        e->ovf = (simdbpe__ptab){NULL, 0, 0};
        e->ovf_map = NULL;
    } else {
        if (e->tab.bits >= e->tab_max_bits || !tab_new(&t, e->tab.bits + 1, &map, &map_len)) {
            /* The largest table: filled on to three slots in four, its
             * later pieces found by a walk from their home (encode_short)
             * rather than encoded again every time. */
            size_t most = (size_t)3 << e->tab.bits >> 1;
            e->tab_room = e->tab.n < most ? most - e->tab.n : 0;
            return;
        }
        simdbpe__ptab_rehash(&t, &e->tab);
        simdbpe__huge_unmap(e->tab_map, e->tab_map_len);
    }
    e->tab = t;
    e->tab_map = map;
    e->tab_map_len = map_len;
    e->tab_room = tab_room_for(t.bits, t.n);
    if (e->tab_room == 0) /* the model's table was full: double it now */
        simdbpe__grow_tab(e);
}

static simdbpe_status encoder_new(const simdbpe_model *model, const simdbpe_encoder_options *opts,
                                  simdbpe_encoder **out);

simdbpe_status simdbpe_encoder_new(const simdbpe_model *model, simdbpe_encoder **out,
                                   simdbpe_error *err)
{
    return simdbpe_encoder_new_with(model, NULL, out, err);
}

simdbpe_status simdbpe_encoder_new_with(const simdbpe_model *model,
                                        const simdbpe_encoder_options *opts,
                                        simdbpe_encoder **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    simdbpe_status st = encoder_new(model, opts, out);
    if (st == SIMDBPE_ERR_INVALID_ARG && model && out)
        return simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0,
                             "encoder: cache_mb %u is above 65536", opts->cache_mb);
    if (st == SIMDBPE_ERR_UNSUPPORTED)
        return simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0,
                             "encoder: SIMDBPE_KERNEL names an unknown or unsupported kernel set");
    if (st != SIMDBPE_OK)
        return simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "encoder: %s",
                             st == SIMDBPE_ERR_NOMEM ? "out of memory" : "NULL argument");
    return st;
}

static simdbpe_status encoder_new(const simdbpe_model *model, const simdbpe_encoder_options *opts,
                                  simdbpe_encoder **out)
{
    if (!model || !out)
        return SIMDBPE_ERR_INVALID_ARG;
    *out = NULL;
    unsigned mb = opts && opts->cache_mb ? opts->cache_mb : SIMDBPE_CACHE_MB_DEFAULT;
    if (mb > 65536)
        return SIMDBPE_ERR_INVALID_ARG;
    const simdbpe__kernels *k = simdbpe__kernels_select(getenv("SIMDBPE_KERNEL"));
    if (!k)
        return SIMDBPE_ERR_UNSUPPORTED;
    const simdbpe__byte_pair *byte_pairs = simdbpe__model_byte_pairs(model);
    if (!byte_pairs)
        return SIMDBPE_ERR_NOMEM;
    simdbpe_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return SIMDBPE_ERR_NOMEM;
    /* BPE's cache of merge lookups, the chunk's pieces and the first ids
     * of an output in one mapping: on 4 KB pages of their own they cost a
     * page fault each (hundreds a fresh encoder). */
    size_t merge_cache_bytes = simdbpe__bpe_pairs_bytes();
    size_t work_bytes = 2 * MAX_PIECES * sizeof *e->work;
    size_t out_bytes = OUT_SMALL * sizeof *e->out;
    uint8_t *t = simdbpe__huge_map(merge_cache_bytes + work_bytes + out_bytes, &e->fixed,
                                   &e->fixed_len);
    /* The model's table until the encoder has added more pieces than the
     * overflow takes (a short job never copies it), or an empty one while
     * the model's is not built. */
    static const simdbpe__pbucket empty[2];
    const simdbpe__ptab *base = simdbpe__model_ptab_if_built(model);
    e->prefilled = base != NULL;
    e->tab = base ? *base : (simdbpe__ptab){(simdbpe__pbucket *)empty, 1, 0};
    if (!t || !tab_new(&e->ovf, OVERFLOW_BITS, &e->ovf_map, &e->ovf_map_len)) {
        simdbpe_encoder_free(e);
        return SIMDBPE_ERR_NOMEM;
    }
    e->tab_room = tab_room_for(OVERFLOW_BITS, 0);
    /* The budget: up to two thirds for the table (whole powers of two,
     * never below the model's), the rest for the long map and arenas. */
    size_t budget = (size_t)mb << 20;
    e->tab_max_bits = e->tab.bits;
    while ((sizeof(simdbpe__pbucket) << (e->tab_max_bits + 1)) <= budget / 3 * 2)
        e->tab_max_bits++;
    size_t tab_most = sizeof(simdbpe__pbucket) << e->tab_max_bits;
    e->side_budget = budget > tab_most + budget / 8 ? budget - tab_most : budget / 8;
    simdbpe__bpe_lend_pairs(&e->scratch, t);
    t += merge_cache_bytes;
    e->work = (piece_ref *)(void *)t;
    e->parts = e->work + MAX_PIECES;
    t += work_bytes;
    e->out = (uint32_t *)(void *)t;
    e->out_cap = OUT_SMALL;
    e->m = model;
    e->k = k;
    e->encode_pieces = simdbpe__encode_pieces;
#if defined(SIMDBPE_HAVE_X86_KERNELS)
    if (k == &simdbpe__kernels_avx2) {
        e->encode_pieces = simdbpe__encode_pieces_avx2;
        e->scratch.small = simdbpe__bpe_small_avx2;
    }
#endif
    e->scratch.k = k;
    e->scratch.byte_pairs = byte_pairs;
    *out = e;
    return SIMDBPE_OK;
}

void simdbpe_encoder_free(simdbpe_encoder *e)
{
    if (!e)
        return;
    free_out(e);
    free(e->clean);
    free(e->norm);
    simdbpe__nz_work_free(&e->nz_work);
    free(e->sp_norm);
    simdbpe__sp_work_free(&e->sp_work);
    simdbpe__sp_cache_free(e->sp_cache);
    simdbpe__huge_unmap(e->fixed, e->fixed_len);
    simdbpe__huge_unmap(e->tab_map, e->tab_map_len);
    simdbpe__huge_unmap(e->ovf_map, e->ovf_map_len);
    free(e->longs);
    free(e->arena_ids);
    free(e->arena_bytes);
    simdbpe__bpe_scratch_free(&e->scratch);
    free(e);
}

const char *simdbpe_encoder_kernel_name(const simdbpe_encoder *e)
{
    return e->k->name;
}

/*
 * Added tokens split the text before anything else, as in HF tokenizers:
 * those matched in the raw text (not "normalized") first; each stretch
 * between them is normalized (NFC, or the model's normalizer chain), then
 * split by the "normalized" ones; the stretches left are pre-tokenized.
 * Which added tokens count: any that is not special, and the special ones
 * unless the policy says they are text; under SIMDBPE_SPECIAL_ERROR a
 * special one found is the error. `base` is the stretch's offset in the
 * caller's text, for error offsets (after normalization, the offset of
 * the normalized stretch's start plus the offset within it).
 */
static simdbpe_status encode_stretch(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                     uint32_t normalized, simdbpe_special_policy policy,
                                     size_t base, size_t *n, simdbpe_error *err)
{
    const simdbpe_model *m = e->m;
    if (normalized && m->normalizer != SIMDBPE__NORM_NONE) {
        simdbpe_status st = simdbpe__nfc(e, m->normalizer, &s, &len);
        if (st != SIMDBPE_OK)
            return st;
    }
    if (normalized && m->sp) {
        simdbpe_status st = simdbpe__sp_normalize(e, &s, &len);
        if (st != SIMDBPE_OK)
            return st;
    }
    uint32_t mask = SIMDBPE__ADDED_NORMALIZED, want = normalized;
    if (policy == SIMDBPE_SPECIAL_AS_TEXT)
        mask |= SIMDBPE__ADDED_SPECIAL;
    size_t i = 0;
    while (i < len) {
        size_t which = 0;
        size_t at = m->trie ? i + simdbpe__added_find(m, s + i, len - i, mask, want, &which) : len;
        if (at > i) {
            simdbpe_status st =
                normalized ? (m->sp ? simdbpe__encode_sp(e, s + i, at - i, base + i == 0, n)
                                    : e->encode_pieces(e, s + i, at - i, n))
                           : encode_stretch(e, s + i, at - i, SIMDBPE__ADDED_NORMALIZED, policy,
                                            base + i, n, err);
            if (st != SIMDBPE_OK)
                return st;
        }
        if (at == len)
            break;
        const simdbpe__special *sp = &m->specials[which];
        if (policy == SIMDBPE_SPECIAL_ERROR && (sp->flags & SIMDBPE__ADDED_SPECIAL)) {
            char q[64];
            simdbpe__quote(q, sizeof q, sp->text, sp->len);
            return simdbpe__fail(err, SIMDBPE_ERR_SPECIAL_TOKEN, base + at, 0,
                                 "special token %s at byte offset %zu is not allowed", q,
                                 base + at);
        }
        simdbpe_status st = reserve_out(e, *n, 1);
        if (st != SIMDBPE_OK)
            return st;
        e->out[(*n)++] = sp->id;
        i = at + sp->len;
    }
    return SIMDBPE_OK;
}

static simdbpe_status encode_text(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                  simdbpe_special_policy policy, size_t *n, simdbpe_error *err)
{
    const simdbpe_model *m = e->m;
    /* The common case, one call: no added token can apply and no
     * normalizer. */
    if ((m->n_specials == 0 || (policy == SIMDBPE_SPECIAL_AS_TEXT && !m->has_plain_added)) &&
        m->normalizer == SIMDBPE__NORM_NONE && !m->sp)
        return e->encode_pieces(e, s, len, n);
    return encode_stretch(e, s, len, 0, policy, 0, n, err);
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

/* Encodes text[0..len) after the first *n ids of e->out (see
 * simdbpe_encode); on failure *n may have grown. */
static simdbpe_status encode_doc(simdbpe_encoder *e, const char *text, size_t len,
                                 const simdbpe_encode_options *opts, size_t *n_io,
                                 simdbpe_error *err)
{
    static const simdbpe_encode_options defaults = SIMDBPE_ENCODE_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    const uint8_t *s = (const uint8_t *)text;
    /* Everything after this sees valid UTF-8 only; the hot tables' keys
     * rely on it (no 0xFF byte, see hot_lo). */
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
    size_t n = *n_io;
    /* The special-token paths write one id without asking: keep room for
     * it; the pre-token paths reserve as they go. */
    if (reserve_out(e, n, 64) != SIMDBPE_OK)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    const simdbpe_model *m = e->m;
    /* 1 (any value but the part flags alone) adds both. */
    int add = opts->add_special_tokens;
    int prefix = add & ~SIMDBPE_ADD_SUFFIX, suffix = add & ~SIMDBPE_ADD_PREFIX;
    if (prefix)
        for (size_t i = 0; i < m->n_prefix; i++)
            e->out[n++] = m->prefix[i];
    simdbpe_status st = encode_text(e, s, len, opts->special, &n, err);
    if (st == SIMDBPE_OK && suffix && m->n_suffix &&
        (st = reserve_out(e, n, m->n_suffix)) == SIMDBPE_OK)
        for (size_t i = 0; i < m->n_suffix; i++)
            e->out[n++] = m->suffix[i];
    if (st != SIMDBPE_OK) {
        if (err && err->status == SIMDBPE_OK && m->nz && st == SIMDBPE_ERR_TOO_LARGE)
            simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0,
                          "the normalizer's Replace regex gave up on this text (Oniguruma's "
                          "retry limit, as in HF tokenizers)");
        else if (err && err->status == SIMDBPE_OK && m->regex)
            simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "%s",
                          st == SIMDBPE_ERR_UNSUPPORTED
                              ? "the pre-tokenizer's Removed Split would drop text here, "
                                "which this library does not do"
                              : st == SIMDBPE_ERR_TOO_LARGE
                                    ? "the pre-tokenizer's regex gave up on this text "
                                      "(Oniguruma's retry limit, as in HF tokenizers)"
                                    : simdbpe_strerror(st));
        else if (err && err->status == SIMDBPE_OK)
            simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "%s", simdbpe_strerror(st));
        return st;
    }
    *n_io = n;
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
    *ids = NULL;
    *n_ids = 0;
    size_t n = 0;
    simdbpe_status st = encode_doc(e, text, len, opts, &n, err);
    if (st != SIMDBPE_OK)
        return st;
    *ids = e->out;
    *n_ids = n;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_encode_append(simdbpe_encoder *e, const char *text, size_t len,
                                     const simdbpe_encode_options *opts, uint32_t **ids,
                                     size_t *cap, size_t *n_ids, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!e || (!text && len) || !ids || !cap || !n_ids)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "encode_append: NULL argument");
    if (*n_ids > *cap || (!*ids && *cap))
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "encode_append: %zu ids in an array of %zu%s", *n_ids, *cap,
                             *ids ? "" : " that is NULL");
    /* The encoder writes into the caller's array for this call, its own
     * output set aside. */
    uint32_t *own = e->out;
    size_t own_cap = e->out_cap;
    e->out = *ids;
    e->out_cap = *cap;
    e->out_borrowed = true;
    size_t n = *n_ids;
    simdbpe_status st = encode_doc(e, text, len, opts, &n, err);
    *ids = e->out;
    *cap = e->out_cap;
    e->out = own;
    e->out_cap = own_cap;
    e->out_borrowed = false;
    if (st == SIMDBPE_OK)
        *n_ids = n;
    return st;
}

simdbpe_status simdbpe__nfc(simdbpe_encoder *e, unsigned form, const uint8_t **text, size_t *len)
{
    if (form == SIMDBPE__NORM_CHAIN)
        return simdbpe__normalize(e->m->nz, &e->nz_work, text, len);
    return simdbpe__nfc_into(form, &e->norm, &e->norm_cap, text, len);
}
