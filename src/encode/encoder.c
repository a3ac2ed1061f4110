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
 *        - in a hot table (pieces of 1..16 bytes that encode to up to three
 *          ids, or to up to six in the 32-byte slots, or to their bytes'
 *          ids; 98% of English pieces are up to 16 bytes): copy them;
 *        - in a warm table (the same kind of pieces, over three times as
 *          many of them): copy them;
 *        - the whole pre-token is a token BPE would produce whole (the
 *          model's whole-token map): emit it;
 *        - in the encoder's cache: copy the cached ids;
 *        - if no merge spans some place in it (simdbpe__may_join: most
 *          runs of CJK characters, of emoji, of punctuation), encode its
 *          parts between such places as pieces of their own;
 *        - otherwise run the BPE merge; cache the result.
 *
 * Step 3 is the piece path (pieces.inc.h, built for the baseline CPU and
 * for AVX2); the tables it uses are described in encoder.h.
 */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "encoder.h"

/*
 * The tables live in two zeroed regions, touched at random: 7.4 MB for
 * the hot tables, caches, byte pairs, BPE's merge-lookup cache, the piece
 * path's arrays and the first ids of an output, and the warm tables'
 * 1.5 MB, later 24 MB by default. On Linux each is an anonymous mapping of whole 2 MB pages,
 * aligned to 2 MB, with transparent huge pages asked for: the kernel
 * hands out zeroed pages on first touch (no memset of memory that may
 * never be used, which cost a few ms per encoder), and a handful of page
 * faults and TLB entries cover it instead of thousands.
 */
#define HUGE_PAGE ((size_t)2 << 20)

static void *map_tables(size_t bytes, void **base, size_t *mapped)
{
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    /* Whole huge pages: the part of a region past its last whole one
     * would be faulted in 4 KB at a time. */
    bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    size_t len = bytes + HUGE_PAGE;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t at = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
#if defined(MADV_HUGEPAGE)
    madvise((void *)at, bytes, MADV_HUGEPAGE);
#endif
    *base = p;
    *mapped = len;
    return (void *)at;
#else
    void *p = calloc(1, bytes + 64);
    *base = p;
    *mapped = 0;
    return p ? (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL;
#endif
}

void simdbpe__unmap_tables(void *base, size_t mapped)
{
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    if (base)
        munmap(base, mapped);
#else
    (void)mapped;
    free(base);
#endif
}

bool simdbpe__map_warm(simdbpe_encoder *e, unsigned bits)
{
    size_t lines = ((size_t)1 << bits) / WARM_WAYS;
    size_t lines16 = ((size_t)1 << bits) / WARM16_WAYS;
    size_t bytes = lines * WARM_WAYS * sizeof(hot_slot);
    void *map;
    size_t map_len;
    uint8_t *t = map_tables(bytes + lines16 * WARM16_WAYS * sizeof(hot16_slot), &map, &map_len);
    if (!t)
        return false;
    e->warm = (hot_slot *)(void *)t;
    e->warm16 = (hot16_slot *)(void *)(t + bytes);
    e->warm_lines = lines;
    e->warm16_lines = lines16;
    e->warm_map = map;
    e->warm_map_len = map_len;
    return true;
}

/*
 * The first OUT_SMALL ids of an output go to room in the encoder's
 * tables; a larger output goes to a mapping of huge pages of its own
 * (map_tables), written in order, like the text is read: a 3 MB
 * document's 3.3 MB of ids on 4 KB pages took a TLB miss every 1 K ids,
 * which this VM's nested page walks make dear, and a page fault per 1 K
 * ids the first time (a few microseconds each on such a VM).
 */
#define OUT_SMALL ((size_t)1 << 17)

/* Releases e->out's mapping, if it has one of its own. */
static void free_out(simdbpe_encoder *e)
{
    if (e->out_map)
        simdbpe__unmap_tables(e->out_map, e->out_map_len);
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
    size_t map_len;
    uint32_t *out = map_tables(cap * sizeof *out, &map, &map_len);
    if (!out)
        return SIMDBPE_ERR_NOMEM;
    memcpy(out, e->out, (n < e->out_cap ? n : e->out_cap) * sizeof *out);
    free_out(e);
    e->out = out;
    e->out_cap = cap;
    e->out_map = map;
    e->out_map_len = map_len;
    return SIMDBPE_OK;
}

/* The warm tables' b for cache_mb (see WARM_BITS): 3 * 2^(b - 16) MB, the
 * largest that is at most cache_mb; 0 if cache_mb is out of range. */
static unsigned warm_bits_for(unsigned cache_mb)
{
    if (cache_mb == 0)
        return WARM_BITS;
    if (cache_mb < 3 || cache_mb > 3u << (WARM_MAX_BITS - WARM_MIN_BITS))
        return 0;
    unsigned b = WARM_MIN_BITS;
    while (b < WARM_MAX_BITS && cache_mb >= 3u << (b + 1 - WARM_MIN_BITS))
        b++;
    return b;
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
                             "encoder: cache_mb %u is outside 3-96", opts->cache_mb);
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
    unsigned warm_bits = warm_bits_for(opts ? opts->cache_mb : 0);
    if (warm_bits == 0)
        return SIMDBPE_ERR_INVALID_ARG;
    const simdbpe__kernels *k = simdbpe__kernels_select(getenv("SIMDBPE_KERNEL"));
    if (!k)
        return SIMDBPE_ERR_UNSUPPORTED;
    simdbpe_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return SIMDBPE_ERR_NOMEM;
    e->whole_ahead = true;
    size_t cache_bytes = (size_t)CACHE_SLOTS * sizeof(cache_slot);
    size_t long_bytes = ((size_t)1 << LONG_BITS) * sizeof(long_slot);
    size_t hot_bytes = ((size_t)1 << HOT_BITS) * sizeof(hot_slot);
    size_t hot16_bytes = ((size_t)1 << HOT16_BITS) * sizeof(hot16_slot);
    size_t pairs_bytes = 65536 * sizeof(simdbpe__byte_pair);
    size_t big_bytes = BIG_SLOTS * sizeof(big_slot);
    /* BPE's cache of merge lookups, encode_chunk's arrays and the first
     * ids of an output in the same huge pages: on 4 KB pages of their
     * own they cost a page fault each (over 300 a fresh encoder). */
    size_t merge_cache_bytes = simdbpe__bpe_pairs_bytes();
    size_t work_bytes = (sizeof *e->work + 63) & ~(size_t)63;
    size_t out_bytes = OUT_SMALL * sizeof *e->out;
    uint8_t *t = map_tables(cache_bytes + long_bytes + hot_bytes + hot16_bytes + pairs_bytes +
                                big_bytes + BIG_ARENA + merge_cache_bytes + work_bytes + out_bytes,
                            &e->tables, &e->tables_len);
    e->warm_bits = warm_bits;
    if (!t || !simdbpe__map_warm(e, WARM_START_BITS)) {
        simdbpe_encoder_free(e);
        return SIMDBPE_ERR_NOMEM;
    }
    e->warm_room = e->warm_lines * WARM_WAYS + e->warm16_lines * WARM16_WAYS;
    e->cache = (cache_slot *)(void *)t;
    t += cache_bytes;
    e->long_cache = (long_slot *)(void *)t;
    t += long_bytes;
    e->hot = (hot_slot *)(void *)t;
    t += hot_bytes;
    e->hot16 = (hot16_slot *)(void *)t;
    t += hot16_bytes;
    e->byte_pairs = (simdbpe__byte_pair *)(void *)t;
    t += pairs_bytes;
    e->big = (big_slot *)(void *)t;
    t += big_bytes;
    e->big_arena = t;
    t += BIG_ARENA;
    simdbpe__bpe_lend_pairs(&e->scratch, t);
    t += merge_cache_bytes;
    e->work = (struct chunk_work *)(void *)t;
    t += work_bytes;
    e->out = (uint32_t *)(void *)t;
    e->out_cap = OUT_SMALL;
    e->m = model;
    e->k = k;
    /* Ids up to 2^18 in the hot values when the vocabulary needs them
     * (encoder.h); a larger vocabulary keeps 16 (its pieces with larger
     * ids go to the other tables, as they do). */
    uint32_t vocab = simdbpe_model_vocab_size(model);
    int wide = vocab > (1u << 16) && vocab <= (1u << 18);
    e->encode_pieces = wide ? simdbpe__encode_pieces_wide : simdbpe__encode_pieces;
#if defined(SIMDBPE_HAVE_X86_KERNELS)
    if (k == &simdbpe__kernels_avx2)
        e->encode_pieces = wide ? simdbpe__encode_pieces_wide_avx2 : simdbpe__encode_pieces_avx2;
#endif
    e->scratch.k = k;
    simdbpe__byte_pairs_fill(model, e->byte_pairs);
    e->scratch.byte_pairs = e->byte_pairs;
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
    simdbpe__unmap_tables(e->tables, e->tables_len);
    simdbpe__unmap_tables(e->warm_map, e->warm_map_len);
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
 * between them is normalized (NFC, for the models that have it), then
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
    if (normalized && m->normalizer == SIMDBPE__NORM_NFC) {
        simdbpe_status st = simdbpe__nfc(e, &s, &len);
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
                normalized ? e->encode_pieces(e, s + i, at - i, n)
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
        m->normalizer == SIMDBPE__NORM_NONE)
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
        if (err && err->status == SIMDBPE_OK && m->regex)
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
