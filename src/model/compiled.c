/*
 * compiled.c - the compiled model format (.sbpe): writing, checking, opening.
 *
 * A compiled model is one little-endian image that the library uses in
 * place (mmap'd, embedded, or malloc'd): no parsing, no hashing at load.
 *
 *   offset size  field
 *   0      8     magic "SIMDBPE\x1a"
 *   8      4     version (4; version 3 files are read too)
 *   12     4     header size (128)
 *   16     8     file size
 *   24     8     checksum: XXH3-64 of bytes [32, file size)
 *   32     4     flags (bit 0: the whole-pre-token shortcut is exact;
 *                bit 1: ignore_merges; bit 2: no cuts, see model.h)
 *   36     4     vocab_size       40  4  n_tokens
 *   44     4     n_merges         48  4  n_merge_keys (distinct pairs)
 *   52     4     n_whole          56  4  n_specials
 *   60     4     merge buckets    64  4  whole buckets
 *   68     1     pre-tokenizer family (simdbpe__pretok_kind)
 *   69     1     normalizer (SIMDBPE__NORM_*; SIMDBPE__NORM_CHAIN: see the
 *                normalizer section, which only such files have, so a
 *                library older than it refuses them by this byte)
 *   70     1     prefix ids (n_prefix, <= 3)   71  1  suffix ids (n_suffix, <= 3)
 *   72     8     merge hash seed  80  8  whole hash seed
 *   88     8     blob length
 *   96     12    prefix ids u32[3]   108  12  suffix ids u32[3]
 *   120    4     by the family at 68: the generic family's (regex) Splits
 *                length; any other family's SentencePiece-style flags
 *                (SIMDBPE__SP_*; 0: byte-level BPE) | the decoder's Strip
 *                count << 24 (a SentencePiece-style model has no
 *                pre-tokenizer, so never the generic family)
 *   124    4     the unknown token's id (SentencePiece-style; UINT32_MAX:
 *                none), else 0. A byte-level model of a family other than
 *                the generic one has 0 in 120..128, as format 4 had from
 *                the start: those files are read as they were. read_header
 *                refuses every other combination.
 *   then the sections, in this order, each starting at a multiple of 8:
 *     tok_off        u32[vocab_size + 1]   token id -> offset in blob
 *     tok_has        u8[vocab_size]        1 if the id is a token
 *     blob           u8[blob length]       token bytes, in id order; then the
 *                                          texts of added tokens that are
 *                                          matched by other bytes than their
 *                                          token's (version 4)
 *     byte_id        u32[256]              byte -> initial id
 *     rules          {u32 left, right, id}[n_merges]        by rank
 *     merge pilots   u32[merge buckets]
 *     merge slots    {u64 left<<32|right, u32 rank, u32 id}[n_merge_keys]
 *     pair filter    u64[2^k], k = filter_log2(n_merges)   (model.h)
 *     whole pilots   u32[whole buckets]
 *     whole slots    {u64 lo, u64 hi, u32 id, u32 len}[n_whole]   (lo, hi:
 *                    the token's first 16 bytes, zero-padded, as two words)
 *     specials       {u32 id, u32 offset in blob, u32 length,
 *                     u32 flags (SIMDBPE__ADDED_*)}[n_specials]: the text
 *                    an added token is matched by, its token's bytes or
 *                    one of the texts after them
 *     splits         the generic family's Split patterns and behaviors
 *                    (src/pretok/regex.h), compiled at open
 *     normalizer     normalizer SIMDBPE__NORM_CHAIN only: u32 length, then
 *                    the chain (src/model/normalizer.h), compiled at open
 *
 * The section sizes follow from the header, so the file size must be
 * exactly their sum. Opening an untrusted image checks the magic, version,
 * sizes and checksum, then every entry that is later used as an index or
 * compared: offsets in order and inside the blob, ids below vocab_size,
 * the tokens of each merge rule not empty, ranks below n_merges, each
 * merge slot agreeing with its rule, each whole-token slot holding its
 * token's key, every rule passing the pair filter (a filter that stopped
 * a merge would change ids; one that lets more through only costs
 * lookups). (A merge or whole-token slot at the wrong place would only
 * make a lookup miss; positions are not re-hashed, to keep loading fast.)
 * A corrupted or hostile file is an error, never an out-of-bounds
 * read.
 *
 * The pair filter is in the image since version 2: building it at every
 * open cost a fresh process page faults on its 128 KB. The
 * joins (8 KB) are built at open, in the same pass over the rules that
 * checks the filter, except for the library's own images, which come with
 * theirs (simdbpe__image_open).
 *
 * The in-memory structs are the on-disk layout on little-endian machines;
 * a big-endian machine refuses images (SIMDBPE_ERR_UNSUPPORTED).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "model.h"
#include "normalizer.h"
#include "ptab.h"

#include "../common/replace.h"

#if defined(MAP_POPULATE)
#define MAP_POPULATE_IF_ANY MAP_POPULATE
#else
#define MAP_POPULATE_IF_ANY 0
#endif

#define MAGIC "SIMDBPE\x1a"
#define VERSION 4
#define OLDEST_VERSION 3 /* the same layout, without texts after the tokens */
#define HEADER_SIZE 128
#define MAX_VOCAB (1u << 24)
#define FLAG_WHOLE_EXACT 1u
#define FLAG_IGNORE_MERGES 2u
#define FLAG_NO_CUTS 4u
#define FLAGS_KNOWN (FLAG_WHOLE_EXACT | FLAG_IGNORE_MERGES | FLAG_NO_CUTS)
#define SPECIAL_SIZE 16

typedef struct header {
    uint32_t flags, vocab_size, n_tokens, n_merges, n_merge_keys, n_whole, n_specials;
    uint32_t merge_buckets, whole_buckets;
    uint64_t merge_seed, whole_seed, blob_len;
    uint8_t pretok, normalizer, n_prefix, n_suffix;
    uint32_t splits_len;
    uint32_t nz_len; /* the normalizer section's chain bytes (0: no section) */
    uint32_t prefix[SIMDBPE__MAX_AFFIX], suffix[SIMDBPE__MAX_AFFIX];
    uint32_t sp, unk_id;
} header;

/* Where each section starts, computed from the header. */
typedef struct layout {
    uint64_t tok_off, tok_has, blob, byte_id, rules, merge_pilots, merge_slots, pair_filter,
        whole_pilots, whole_slots, specials, splits, nz, end;
} layout;

static uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

/* log2 of the pair filter's words: a power of two, at least one word per
 * six merges and at least two (so the shift is < 64). */
static unsigned filter_log2(uint32_t n_merges)
{
    unsigned log2_words = 1;
    while (log2_words < 32 && ((uint64_t)6 << log2_words) < n_merges)
        log2_words++;
    return log2_words;
}

static layout layout_of(const header *h)
{
    layout l;
    uint64_t at = HEADER_SIZE;
#define PLACE(field, bytes)                                                                        \
    l.field = at;                                                                                  \
    at = align8(at + (bytes));
    PLACE(tok_off, ((uint64_t)h->vocab_size + 1) * 4);
    PLACE(tok_has, (uint64_t)h->vocab_size);
    PLACE(blob, h->blob_len);
    PLACE(byte_id, 256 * 4);
    PLACE(rules, (uint64_t)h->n_merges * 12);
    PLACE(merge_pilots, (uint64_t)h->merge_buckets * 4);
    PLACE(merge_slots, (uint64_t)h->n_merge_keys * 16);
    PLACE(pair_filter, ((uint64_t)8) << filter_log2(h->n_merges));
    PLACE(whole_pilots, (uint64_t)h->whole_buckets * 4);
    PLACE(whole_slots, (uint64_t)h->n_whole * 24);
    PLACE(specials, (uint64_t)h->n_specials * SPECIAL_SIZE);
    PLACE(splits, h->splits_len);
    PLACE(nz, h->nz_len ? 4 + (uint64_t)h->nz_len : 0);
#undef PLACE
    l.end = at;
    return l;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static header header_of(const simdbpe_model *m)
{
    header h;
    memset(&h, 0, sizeof h);
    h.flags = (m->whole_exact ? FLAG_WHOLE_EXACT : 0) |
              (m->ignore_merges ? FLAG_IGNORE_MERGES : 0) | (m->no_cuts ? FLAG_NO_CUTS : 0);
    h.pretok = m->pretok;
    h.normalizer = m->normalizer;
    h.splits_len = (uint32_t)m->splits_len;
    h.nz_len = (uint32_t)m->nz_len;
    h.n_prefix = m->n_prefix;
    h.n_suffix = m->n_suffix;
    memcpy(h.prefix, m->prefix, sizeof h.prefix);
    memcpy(h.suffix, m->suffix, sizeof h.suffix);
    h.vocab_size = m->vocab_size;
    h.n_tokens = m->n_tokens;
    h.n_merges = m->n_merges;
    h.n_merge_keys = m->merge_mph.n_keys;
    h.n_whole = m->n_whole;
    h.n_specials = (uint32_t)m->n_specials;
    h.merge_buckets = m->merge_mph.n_buckets;
    h.whole_buckets = m->whole_mph.n_buckets;
    h.merge_seed = m->merge_mph.seed;
    h.whole_seed = m->whole_mph.seed;
    h.blob_len = m->blob_len;
    h.sp = m->sp ? m->sp | (uint32_t)m->sp_strip << 24 : 0;
    h.unk_id = m->sp ? m->unk_id : 0;
    return h;
}

size_t simdbpe__image_size(const simdbpe_model *m)
{
    header h = header_of(m);
    return (size_t)layout_of(&h).end;
}

void simdbpe__image_write(const simdbpe_model *m, uint8_t *out)
{
    header h = header_of(m);
    layout l = layout_of(&h);
    memset(out, 0, (size_t)l.end);
    memcpy(out, MAGIC, 8);
    put32(out + 8, VERSION);
    put32(out + 12, HEADER_SIZE);
    put64(out + 16, l.end);
    put32(out + 32, h.flags);
    put32(out + 36, h.vocab_size);
    put32(out + 40, h.n_tokens);
    put32(out + 44, h.n_merges);
    put32(out + 48, h.n_merge_keys);
    put32(out + 52, h.n_whole);
    put32(out + 56, h.n_specials);
    put32(out + 60, h.merge_buckets);
    put32(out + 64, h.whole_buckets);
    put64(out + 72, h.merge_seed);
    put64(out + 80, h.whole_seed);
    put64(out + 88, h.blob_len);
    out[68] = h.pretok;
    out[69] = h.normalizer;
    out[70] = h.n_prefix;
    out[71] = h.n_suffix;
    put32(out + 120, h.pretok == SIMDBPE__PRETOK_REGEX ? h.splits_len : h.sp);
    if (h.splits_len)
        memcpy(out + l.splits, m->splits, h.splits_len);
    if (h.nz_len) {
        put32(out + l.nz, h.nz_len);
        memcpy(out + l.nz + 4, m->nz_image, h.nz_len);
    }
    for (int i = 0; i < SIMDBPE__MAX_AFFIX; i++) {
        put32(out + 96 + 4 * i, h.prefix[i]);
        put32(out + 108 + 4 * i, h.suffix[i]);
    }
    put32(out + 124, h.unk_id);
    for (uint32_t i = 0; i <= h.vocab_size; i++)
        put32(out + l.tok_off + 4 * i, m->tok_off[i]);
    memcpy(out + l.tok_has, m->tok_has, h.vocab_size);
    memcpy(out + l.blob, m->blob, h.blob_len);
    for (int b = 0; b < 256; b++)
        put32(out + l.byte_id + 4 * b, m->byte_id[b]);
    for (uint32_t r = 0; r < h.n_merges; r++) {
        put32(out + l.rules + 12 * r, m->rules[r].left);
        put32(out + l.rules + 12 * r + 4, m->rules[r].right);
        put32(out + l.rules + 12 * r + 8, m->rules[r].id);
    }
    for (uint32_t b = 0; b < h.merge_buckets; b++)
        put32(out + l.merge_pilots + 4 * b, m->merge_mph.pilots[b]);
    for (uint32_t i = 0; i < h.n_merge_keys; i++) {
        put64(out + l.merge_slots + 16 * i, m->merges[i].key);
        put32(out + l.merge_slots + 16 * i + 8, m->merges[i].rank);
        put32(out + l.merge_slots + 16 * i + 12, m->merges[i].id);
    }
    for (size_t w = 0; w < (size_t)1 << filter_log2(h.n_merges); w++)
        put64(out + l.pair_filter + 8 * w, m->pair_filter[w]);
    for (uint32_t b = 0; b < h.whole_buckets; b++)
        put32(out + l.whole_pilots + 4 * b, m->whole_mph.pilots[b]);
    for (uint32_t i = 0; i < h.n_whole; i++) {
        put64(out + l.whole_slots + 24 * i, m->whole[i].lo);
        put64(out + l.whole_slots + 24 * i + 8, m->whole[i].hi);
        put32(out + l.whole_slots + 24 * i + 16, m->whole[i].id);
        put32(out + l.whole_slots + 24 * i + 20, m->whole[i].len);
    }
    for (size_t i = 0; i < m->n_specials; i++) {
        uint8_t *e = out + l.specials + SPECIAL_SIZE * i;
        put32(e, m->specials[i].id);
        put32(e + 4, (uint32_t)(m->specials[i].text - m->blob));
        put32(e + 8, m->specials[i].len);
        put32(e + 12, m->specials[i].flags);
    }
    put64(out + 24, XXH3_64bits(out + 32, (size_t)l.end - 32));
}

/* ------------------------------------------------------------- checking */

#define BAD(...) simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0, __VA_ARGS__)

/* The header of the image p[0..len), checked, and where its sections are.
 * The checksum is verified unless the image is `trusted` (simdbpe__image_open). */
static simdbpe_status read_header(const uint8_t *p, size_t len, int trusted, header *h,
                                  layout *l, simdbpe_error *err)
{
    if (len < HEADER_SIZE)
        return BAD("compiled model: %zu bytes is too short for a header (%d)", len, HEADER_SIZE);
    if (memcmp(p, MAGIC, 8) != 0)
        return BAD("compiled model: bad magic (not a .sbpe file)");
    if (get32(p + 8) < OLDEST_VERSION || get32(p + 8) > VERSION)
        return BAD("compiled model: format version %u, this library reads versions %d to %d "
                   "(compile the model again with this version's `simdbpe compile`)",
                   get32(p + 8), OLDEST_VERSION, VERSION);
    if (get32(p + 12) != HEADER_SIZE)
        return BAD("compiled model: header size %u, expected %d", get32(p + 12), HEADER_SIZE);
    if (get64(p + 16) > len)
        return BAD("compiled model: header says %llu bytes, file has %zu (truncated)",
                   (unsigned long long)get64(p + 16), len);
    if (get64(p + 16) < len)
        return BAD("compiled model: header says %llu bytes, file has %zu (%llu bytes of "
                   "something else after the model)",
                   (unsigned long long)get64(p + 16), len,
                   (unsigned long long)(len - get64(p + 16)));
    if (!trusted && get64(p + 24) != XXH3_64bits(p + 32, len - 32))
        return BAD("compiled model: checksum mismatch (the file is corrupted)");
    h->flags = get32(p + 32);
    h->vocab_size = get32(p + 36);
    h->n_tokens = get32(p + 40);
    h->n_merges = get32(p + 44);
    h->n_merge_keys = get32(p + 48);
    h->n_whole = get32(p + 52);
    h->n_specials = get32(p + 56);
    h->merge_buckets = get32(p + 60);
    h->whole_buckets = get32(p + 64);
    h->merge_seed = get64(p + 72);
    h->whole_seed = get64(p + 80);
    h->blob_len = get64(p + 88);
    h->pretok = p[68];
    h->normalizer = p[69];
    h->n_prefix = p[70];
    h->n_suffix = p[71];
    h->nz_len = 0;
    for (int i = 0; i < SIMDBPE__MAX_AFFIX; i++) {
        h->prefix[i] = get32(p + 96 + 4 * i);
        h->suffix[i] = get32(p + 108 + 4 * i);
    }
    /* Bytes 120..128 mean one thing or the other by the family byte: the
     * two kinds of model they describe never meet (a SentencePiece-style
     * model has no pre-tokenizer, so never the generic family's Splits),
     * and byte-level models of the other families, as format 4 always
     * wrote them, have 0 in all eight. Every other combination is refused
     * here, as is a SentencePiece-style model with any of the byte-level
     * settings its builder never gives it (a whole-token map, its flags, a
     * family other than the gpt2 placeholder) or with neither byte
     * fallback nor an unknown token. */
    uint32_t at120 = get32(p + 120);
    h->splits_len = h->pretok == SIMDBPE__PRETOK_REGEX ? at120 : 0;
    h->sp = h->pretok == SIMDBPE__PRETOK_REGEX ? 0 : at120;
    h->unk_id = get32(p + 124);
    if (!h->sp && h->unk_id != 0)
        return BAD("compiled model: an unknown token id (%u) in a byte-level BPE model",
                   h->unk_id);
    if (h->sp && ((h->sp & 0xFFFFFF & ~SIMDBPE__SP_KNOWN) || !(h->sp & SIMDBPE__SP_MODEL)))
        return BAD("compiled model: unknown SentencePiece-style settings 0x%08X (made by a "
                   "newer simdbpe?)",
                   h->sp);
    /* (a SentencePiece-style model's whole tokens: ignore_merges' map) */
    if (h->sp && (h->pretok != SIMDBPE__PRETOK_GPT2 || (h->flags & ~FLAG_IGNORE_MERGES) ||
                  (h->n_whole != 0 && !(h->flags & FLAG_IGNORE_MERGES))))
        return BAD("compiled model: a SentencePiece-style model with byte-level settings "
                   "(family %u, flags 0x%X, %u whole tokens)",
                   h->pretok, h->flags, h->n_whole);
    if (h->sp && (h->unk_id == SIMDBPE__NO_ID ? !(h->sp & SIMDBPE__SP_BYTE_FALLBACK)
                                              : h->unk_id >= h->vocab_size))
        return BAD("compiled model: a SentencePiece-style model's unknown token id %u is out "
                   "of range, or missing without byte fallback",
                   h->unk_id);
    for (int i = 0; i < SIMDBPE__MAX_AFFIX; i++)
        if ((i < h->n_prefix && h->prefix[i] >= h->vocab_size) ||
            (i < h->n_suffix && h->suffix[i] >= h->vocab_size))
            return BAD("compiled model: a post-processor id is out of range");
    if (!simdbpe__pretok_family_of(h->pretok))
        return BAD("compiled model: unknown pre-tokenizer family %u (made by a newer simdbpe?)",
                   h->pretok);
    if ((h->pretok == SIMDBPE__PRETOK_REGEX) != (h->splits_len > 0) || h->splits_len > (1u << 20))
        return BAD("compiled model: the Split pre-tokenizers do not match the family");
    if (h->normalizer > SIMDBPE__NORM_LAST)
        return BAD("compiled model: unknown normalizer %u (made by a newer simdbpe?)",
                   h->normalizer);
    if (h->vocab_size == 0 || h->vocab_size > MAX_VOCAB || h->n_tokens > h->vocab_size ||
        h->n_merges > MAX_VOCAB || h->n_merge_keys > h->n_merges ||
        h->n_whole > h->n_tokens || h->n_specials > h->n_tokens || h->blob_len > UINT32_MAX ||
        h->merge_buckets != simdbpe__mph_buckets_for(h->n_merge_keys) ||
        h->whole_buckets != simdbpe__mph_buckets_for(h->n_whole) ||
        h->n_prefix > SIMDBPE__MAX_AFFIX || h->n_suffix > SIMDBPE__MAX_AFFIX ||
        (h->flags & ~FLAGS_KNOWN))
        return BAD("compiled model: inconsistent counts in the header");
    *l = layout_of(h);
    if (h->normalizer == SIMDBPE__NORM_CHAIN) {
        if (l->end + 4 > len || get32(p + l->end) == 0 || get32(p + l->end) > len - l->end - 4)
            return BAD("compiled model: the normalizer section is malformed");
        h->nz_len = get32(p + l->end);
        *l = layout_of(h);
    }
    if (l->end != len)
        return BAD("compiled model: sections need %llu bytes, file has %zu",
                   (unsigned long long)l->end, len);
    return SIMDBPE_OK;
}

/* Every entry that is used as an index or compared, checked. */
static simdbpe_status check_tables(const simdbpe_model *m, simdbpe_error *err)
{
    uint32_t v = m->vocab_size;
    if (m->tok_off[0] != 0 || m->tok_off[v] > m->blob_len)
        return BAD("compiled model: token offsets do not span the token bytes");
    uint32_t n_tokens = 0;
    for (uint32_t id = 0; id < v; id++) {
        if (m->tok_off[id + 1] < m->tok_off[id] || m->tok_has[id] > 1 ||
            (!m->tok_has[id] && m->tok_off[id + 1] != m->tok_off[id]))
            return BAD("compiled model: bad token entry for id %u", id);
        n_tokens += m->tok_has[id];
    }
    if (n_tokens != m->n_tokens)
        return BAD("compiled model: %u tokens, header says %u", n_tokens, m->n_tokens);
    if (m->sp && m->unk_id != SIMDBPE__NO_ID && !m->tok_has[m->unk_id])
        return BAD("compiled model: the unknown token id %u is no token", m->unk_id);
    for (int b = 0; b < 256; b++) {
        uint32_t id = m->byte_id[b];
        /* byte-level: the token of that one byte; SentencePiece-style: its
         * "<0xNN>" token, or the unknown token (without byte fallback, or
         * for a byte that has no token) */
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        int ok = id < v && m->tok_has[id];
        if (ok && !m->sp)
            ok = m->tok_off[id + 1] - m->tok_off[id] == 1 && m->blob[m->tok_off[id]] == b;
        else if (ok && (m->sp & SIMDBPE__SP_BYTE_FALLBACK))
            ok = (m->tok_off[id + 1] - m->tok_off[id] == 6 &&
                  memcmp(m->blob + m->tok_off[id], name, 6) == 0) ||
                 id == m->unk_id;
        else if (ok)
            ok = id == m->unk_id;
        if (!ok)
            return BAD("compiled model: byte 0x%02X maps to a wrong token", b);
    }
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        if (u->left >= v || u->right >= v || u->id >= v || !m->tok_has[u->id])
            return BAD("compiled model: merge rule %u has an id out of range", r);
        if (m->tok_off[u->left + 1] == m->tok_off[u->left] ||
            m->tok_off[u->right + 1] == m->tok_off[u->right])
            return BAD("compiled model: merge rule %u joins a token without bytes", r);
    }
    for (uint32_t i = 0; i < m->merge_mph.n_keys; i++) {
        const simdbpe__merge_slot *s = &m->merges[i];
        if (s->rank >= m->n_merges || m->rules[s->rank].id != s->id ||
            ((uint64_t)m->rules[s->rank].left << 32 | m->rules[s->rank].right) != s->key)
            return BAD("compiled model: merge slot %u is inconsistent", i);
    }
    /* A whole-token slot must hold its token's bytes: a lookup that matches
     * the slot then returns the token of exactly those bytes. Whether the
     * slot sits where the perfect hash puts its token is not checked (that
     * took two thirds of the load: a hash per token): a misplaced slot is
     * only never found, and the piece takes the BPE path, which is exact. */
    for (uint32_t i = 0; i < m->n_whole; i++) {
        const simdbpe__whole_slot *w = &m->whole[i];
        if (w->id >= v || !m->tok_has[w->id])
            return BAD("compiled model: whole-token slot %u has a bad id", i);
        uint32_t off = m->tok_off[w->id], len = m->tok_off[w->id + 1] - off;
        uint64_t lo, hi;
        simdbpe__short_words(m->blob + off, len < 16 ? len : 16, &lo, &hi);
        if (w->lo != lo || w->hi != hi || w->len != len)
            return BAD("compiled model: whole-token slot %u is inconsistent", i);
    }
    return SIMDBPE_OK;
}

/* One pass over the rules: sets the joins' bits (model.h) and, if
 * `filter` is not NULL, the pair filter's (shift: 64 - log2 of its
 * words). If `check` is not NULL, returns the rank of the first rule whose
 * bits the pair filter `check` lacks; else (and if none) n_merges. The
 * rules' tokens have bytes (check_tables; the loader makes them so): a
 * rule with an empty one would join nothing. */
static uint32_t rules_pass(const simdbpe_model *m, uint64_t *joins, uint64_t *filter,
                           const uint64_t *check, unsigned shift)
{
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        uint64_t h = simdbpe__pair_filter_hash((uint64_t)u->left << 32 | u->right);
        uint64_t bits = simdbpe__pair_filter_bits(h);
        if (filter)
            filter[h >> shift] |= bits;
        if (check && (check[h >> shift] & bits) != bits)
            return r;
        uint32_t l0 = m->tok_off[u->left], l1 = m->tok_off[u->left + 1];
        uint32_t r0 = m->tok_off[u->right], r1 = m->tok_off[u->right + 1];
        if (l1 > l0 && r1 > r0) {
            uint32_t a = m->blob[l1 - 1], b = m->blob[r0];
            joins[a << 2 | b >> 6] |= 1ULL << (b & 63);
        }
    }
    return m->n_merges;
}

simdbpe_status simdbpe__merge_filters_build(simdbpe_model *m)
{
    unsigned log2_words = filter_log2(m->n_merges);
    uint64_t *f = simdbpe__model_calloc((size_t)1 << log2_words, sizeof *f);
    uint64_t *joins = calloc(SIMDBPE__JOINS_WORDS, sizeof *joins);
    if (!f || !joins) {
        free(f);
        free(joins);
        return SIMDBPE_ERR_NOMEM;
    }
    rules_pass(m, joins, f, NULL, 64 - log2_words);
    m->pair_filter = f;
    m->pair_filter_shift = 64 - log2_words;
    m->joins = joins;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__image_open(const uint8_t *p, size_t len, int kind, int trusted,
                                   const uint64_t *given_joins, simdbpe_model **out,
                                   simdbpe_error *err)
{
    *out = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    (void)p, (void)len, (void)kind, (void)trusted, (void)given_joins;
    return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                         "compiled models need a little-endian machine");
#else
    if ((uintptr_t)p % 8)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "compiled model: image is not 8-byte aligned");
    header h;
    layout l;
    simdbpe_status st = read_header(p, len, trusted, &h, &l, err);
    if (st != SIMDBPE_OK)
        return st;
    simdbpe_model *m = calloc(1, sizeof *m);
    simdbpe__special *sp = calloc(h.n_specials ? h.n_specials : 1, sizeof *sp);
    if (!m || !sp) {
        free(m);
        free(sp);
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    }
    m->vocab_size = h.vocab_size;
    m->n_tokens = h.n_tokens;
    m->n_merges = h.n_merges;
    m->tok_off = (const uint32_t *)(p + l.tok_off);
    m->tok_has = p + l.tok_has;
    m->blob = p + l.blob;
    m->blob_len = (size_t)h.blob_len;
    memcpy(m->byte_id, p + l.byte_id, sizeof m->byte_id);
    m->rules = (const simdbpe__merge_rule *)(p + l.rules);
    m->merge_mph = (simdbpe__mph){h.n_merge_keys, h.merge_buckets, h.merge_seed,
                                  (const uint32_t *)(p + l.merge_pilots)};
    m->merges = (const simdbpe__merge_slot *)(p + l.merge_slots);
    m->whole_mph = (simdbpe__mph){h.n_whole, h.whole_buckets, h.whole_seed,
                                  (const uint32_t *)(p + l.whole_pilots)};
    m->whole = (const simdbpe__whole_slot *)(p + l.whole_slots);
    m->n_whole = h.n_whole;
    m->whole_exact = (h.flags & FLAG_WHOLE_EXACT) != 0;
    m->ignore_merges = (h.flags & FLAG_IGNORE_MERGES) != 0;
    m->no_cuts = (h.flags & FLAG_NO_CUTS) != 0;
    m->pretok = h.pretok;
    m->normalizer = h.normalizer;
    m->sp = h.sp & 0xFFFFFF;
    m->sp_strip = (uint8_t)(h.sp >> 24);
    m->unk_id = h.sp ? h.unk_id : SIMDBPE__NO_ID;
    if (h.splits_len) {
        m->splits = p + l.splits;
        m->splits_len = h.splits_len;
        st = simdbpe__regex_from_image(m->splits, m->splits_len, &m->regex, err);
    }
    if (h.nz_len && st == SIMDBPE_OK) {
        m->nz_image = p + l.nz + 4;
        m->nz_len = h.nz_len;
        st = simdbpe__normalizer_new(m->nz_image, m->nz_len, "compiled model", &m->nz, err);
    }
    m->n_prefix = h.n_prefix;
    m->n_suffix = h.n_suffix;
    memcpy(m->prefix, h.prefix, sizeof m->prefix);
    memcpy(m->suffix, h.suffix, sizeof m->suffix);
    m->specials = sp;
    m->image = p;
    m->image_len = len;
    m->image_kind = kind;
    if (!trusted && st == SIMDBPE_OK)
        st = check_tables(m, err);
    for (uint32_t i = 0; st == SIMDBPE_OK && i < h.n_specials; i++) {
        const uint8_t *e = p + l.specials + SPECIAL_SIZE * i;
        uint32_t id = get32(e), off = get32(e + 4), n = get32(e + 8), fl = get32(e + 12);
        /* The text is the token's bytes or lies after all tokens' bytes. */
        int own = id < h.vocab_size && m->tok_off[id] == off && m->tok_off[id + 1] - off == n;
        if (id >= h.vocab_size || !m->tok_has[id] || (uint64_t)off + n > h.blob_len ||
            (!own && off < m->tok_off[h.vocab_size]) || n == 0 ||
            (fl & ~(SIMDBPE__ADDED_SPECIAL | SIMDBPE__ADDED_NORMALIZED | SIMDBPE__ADDED_IN_VOCAB)))
            st = BAD("compiled model: special token %u is inconsistent", i);
        sp[i] = (simdbpe__special){id, n, m->blob + off, fl};
    }
    m->n_specials = h.n_specials;
    /* The pair filter is the image's; the joins are given (trusted images),
     * or built, and an untrusted filter checked, in one pass over the rules. */
    unsigned log2_words = filter_log2(h.n_merges);
    m->pair_filter = (const uint64_t *)(p + l.pair_filter);
    m->pair_filter_shift = 64 - log2_words;
    uint64_t *joins = NULL;
    if (st == SIMDBPE_OK && !(trusted && given_joins)) {
        joins = calloc(SIMDBPE__JOINS_WORDS, sizeof *joins);
        if (!joins)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    }
    if (joins) {
        uint32_t r = rules_pass(m, joins, NULL, trusted ? NULL : m->pair_filter,
                                m->pair_filter_shift);
        if (r < m->n_merges)
            st = BAD("compiled model: the pair filter stops merge rule %u", r);
    }
    /* A model that must not cut pieces has all joins set (model.h); its
     * trusted images come with them so. */
    if (joins && m->no_cuts)
        memset(joins, 0xFF, SIMDBPE__JOINS_WORDS * sizeof *joins);
    m->joins = joins ? joins : given_joins;
    if (st == SIMDBPE_OK && simdbpe__added_build(m) != SIMDBPE_OK)
        st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    if (st == SIMDBPE_OK && m->sp && simdbpe__sp_chars_build(m) != SIMDBPE_OK)
        st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    if (st != SIMDBPE_OK) {
        simdbpe__sp_chars_free(m->sp_chars);
        simdbpe__added_free(m->trie);
        simdbpe__regex_free(m->regex);
        simdbpe__normalizer_free(m->nz);
        free(joins);
        free(sp);
        free(m);
        return st;
    }
    *out = m;
    return SIMDBPE_OK;
#endif
}

/* ------------------------------------------------------------ public API */

void simdbpe_model_free(simdbpe_model *m)
{
    if (!m)
        return;
    if (m->image_kind == SIMDBPE__IMAGE_MALLOC)
        free((void *)m->image);
    else if (m->image_kind == SIMDBPE__IMAGE_MMAP)
        munmap((void *)m->image, m->image_len);
    free(m->specials);
    simdbpe__regex_free(m->regex);
    simdbpe__normalizer_free(m->nz);
    free(m->notice);
    simdbpe__model_ptab_free(m);
    simdbpe__added_free(m->trie);
    simdbpe__sp_chars_free(m->sp_chars);
    if (m->image_kind != SIMDBPE__IMAGE_STATIC)
        free((void *)m->joins);
    free(m);
}

size_t simdbpe_model_compiled_size(const simdbpe_model *m)
{
    return m ? m->image_len : 0;
}

simdbpe_status simdbpe_model_compile(const simdbpe_model *m, void *out, size_t cap,
                                     size_t *out_len, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!m || (!out && cap) || !out_len)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_compile: NULL argument");
    *out_len = m->image_len;
    if (cap < m->image_len)
        return simdbpe__fail(err, SIMDBPE_ERR_BUFFER_TOO_SMALL, SIMDBPE_NO_POSITION, 0,
                             "model_compile: needs %zu bytes, buffer has %zu", m->image_len, cap);
    /* Every model is an image already: the compiled form is a copy. */
    memcpy(out, m->image, m->image_len);
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_model_save(const simdbpe_model *m, const char *path, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!m || !path)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_save: NULL argument");
    /* A failed save never leaves a partial file under the final name. */
    int e = simdbpe__replace_file(path, m->image, m->image_len);
    if (e)
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0, "%s: %s", path,
                             strerror(e));
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_model_load_compiled(const void *data, size_t len, simdbpe_model **out,
                                           simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out || (!data && len))
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_load_compiled: NULL argument");
    *out = NULL;
    uint8_t *copy = aligned_alloc(64, (len + 63) / 64 * 64 + 64);
    if (!copy)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    if (len)
        memcpy(copy, data, len);
    simdbpe_status st = simdbpe__image_open(copy, len, SIMDBPE__IMAGE_MALLOC, 0, NULL, out, err);
    if (st != SIMDBPE_OK)
        free(copy);
    return st;
}

simdbpe_status simdbpe_model_load_file(const char *path, simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!path || !out)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_load_file: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0, "%s: %s", path,
                             strerror(e));
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size < HEADER_SIZE) {
        close(fd);
        return simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                             "%s: not a compiled model (%s)", path,
                             S_ISREG(sb.st_mode) ? "too short" : "not a regular file");
    }
    size_t len = (size_t)sb.st_size;
    /* Every page is read at once (checksum, checks): populate them in one go
     * rather than fault them in one by one. */
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE_IF_ANY, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0, "%s: mmap: %s", path,
                             strerror(e));
    simdbpe_status st = simdbpe__image_open(map, len, SIMDBPE__IMAGE_MMAP, 0, NULL, out, err);
    if (st != SIMDBPE_OK) {
        munmap(map, len);
        if (err) {
            /* Prefix the path; a message cut short is still useful. */
            char msg[sizeof err->message + 4200];
            snprintf(msg, sizeof msg, "%s: %s", path, err->message);
            size_t n = strlen(msg);
            if (n >= sizeof err->message)
                n = sizeof err->message - 1;
            memcpy(err->message, msg, n);
            err->message[n] = '\0';
        }
    }
    return st;
}
