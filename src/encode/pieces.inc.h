/*
 * pieces.inc.h - the piece path: the pre-tokens of a stretch of text (no
 * added tokens) to ids, through the piece table, the long map and BPE
 * (see encoder.h).
 *
 * Included by pieces.c and pieces_avx2.c, each compiled with its own
 * flags, which name the entry point SIMDBPE__PIECES_FN.
 *
 * The pieces that end in one chunk of the pre-tokenizer (up to 1,024
 * bytes) are encoded in two passes:
 *   1. each piece's key and hash, and a prefetch of its home pair's line;
 *   2. each piece's home bucket compared with its key, the matching
 *      slot's value selected without a branch, four ids stored whatever
 *      the value holds, and the count advanced by the number that count:
 *      0 for a piece not in its home bucket, a value with its ids
 *      elsewhere, or a piece over 16 bytes (key 0 matches only an empty
 *      slot, whose value counts 0). Those take the slow path, out of line.
 * A chunk's lines have the rest of pass 1 to arrive.
 */
#include <stdlib.h>
#include <string.h>

#include "encoder.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* Where the first part of p[from..len) ends: the first place after `from`
 * that no merge spans (simdbpe__may_join), else len. */
static inline size_t next_cut(const simdbpe_model *m, const uint8_t *p, size_t from, size_t len)
{
    for (size_t i = from + 1; i < len; i++)
        if (!simdbpe__may_join(m, p[i - 1], p[i]))
            return i;
    return len;
}

/* Whether no merge spans any place in p[0..len): its ids are then its
 * bytes' ids. */
static inline bool all_cut(const simdbpe_model *m, const uint8_t *p, size_t len)
{
    for (size_t i = 1; i < len; i++)
        if (simdbpe__may_join(m, p[i - 1], p[i]))
            return false;
    return true;
}

/* Writes the ids of the bytes p[0..len) at out[no..]; the new count. */
static inline size_t emit_bytes(const simdbpe_model *m, uint32_t *out, size_t no,
                                const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out[no + i] = m->byte_id[p[i]];
    return no + len;
}

/* Writes the ids of a table value (any kind) of the piece p[0..len) at
 * out[no..] (room for len ids and 4 more); the new count. */
static inline size_t emit_value(const simdbpe_encoder *e, uint32_t *out, size_t no, uint64_t val,
                                uint64_t ext, const uint8_t *p, size_t len)
{
    unsigned c = simdbpe__pv_count(val);
    if (SIMDBPE_LIKELY(c != 0)) {
        uint64_t ab = val & SIMDBPE__PV_IDS_MASK;
        memcpy(out + no, &ab, 8);
        memcpy(out + no + 2, &ext, 8);
        return no + c;
    }
    if (val & SIMDBPE__PV_BYTES)
        return emit_bytes(e->m, out, no, p, len);
    memcpy(out + no, e->arena_ids + (val >> 32), ext * sizeof *out);
    return no + ext;
}

/* Makes room for `more` elements of `size` bytes after the first n of
 * the arena *a (capacity *cap), within the encoder's budget for its side
 * tables: 0, or -1 if that or memory does not allow it. */
static int arena_room(simdbpe_encoder *e, void **a, size_t *cap, size_t n, size_t more,
                      size_t size)
{
    size_t need = n + more;
    if (need <= *cap)
        return 0;
    size_t room = (e->side_budget - e->side_used) / size; /* elements the budget still allows */
    size_t to = *cap * 2 > need ? *cap * 2 : need;
    if (to < 1024)
        to = 1024;
    if (to - *cap > room)
        to = need;
    if (to - *cap > room)
        return -1;
    void *p = realloc(*a, to * size);
    if (!p)
        return -1;
    e->side_used += (to - *cap) * size;
    *a = p;
    *cap = to;
    return 0;
}

/* Appends ids[0..n) to the id arena, within the budget; its offset in
 * *at, or false. */
static bool arena_ids_put(simdbpe_encoder *e, const uint32_t *ids, size_t n, uint64_t *at)
{
    if (arena_room(e, (void **)&e->arena_ids, &e->arena_ids_cap, e->arena_ids_n, n, sizeof *ids))
        return false;
    memcpy(e->arena_ids + e->arena_ids_n, ids, n * sizeof *ids);
    *at = e->arena_ids_n;
    e->arena_ids_n += n;
    return true;
}

/* Remembers that the piece p[0..len) (up to 16 bytes, key lo, hi, hash h,
 * not in the table) encodes to ids[0..n), if the table has room. */
static void tab_put(simdbpe_encoder *e, uint64_t lo, uint64_t hi, uint64_t h, const uint8_t *p,
                    size_t len, const uint32_t *ids, size_t n)
{
    if (SIMDBPE_UNLIKELY(e->tab_room == 0)) {
        simdbpe__grow_tab(e);
        if (e->tab_room == 0)
            return;
    }
    uint64_t val, ext = 0;
    if (n <= SIMDBPE__PV_INLINE) {
        simdbpe__pv_pack(ids, n, &val, &ext);
    } else {
        bool bytes = n == len;
        for (size_t i = 0; bytes && i < n; i++)
            bytes = ids[i] == e->m->byte_id[p[i]];
        uint64_t at = 0;
        if (bytes)
            val = SIMDBPE__PV_BYTES;
        else if (arena_ids_put(e, ids, n, &at))
            val = SIMDBPE__PV_ARENA | at << 32, ext = n;
        else
            return;
    }
    simdbpe__ptab *t = e->tab_map ? &e->tab : &e->ovf;
    simdbpe__pslot_set(simdbpe__ptab_free_slot(t, h), lo, hi, val, ext);
    t->n++;
    e->tab_room--;
}

static simdbpe_status encode_parts(simdbpe_encoder *e, const uint8_t *p, size_t len, size_t cut,
                                   size_t *no);

/* A piece (or part) of up to 16 bytes with key lo, hi and hash h: from the
 * table (a walk past its home pair), else its parts or BPE, remembered.
 * Room for len ids and 4 more at e->out[*no..]. */
static simdbpe_status encode_short(simdbpe_encoder *e, const uint8_t *p, size_t len, uint64_t lo,
                                   uint64_t hi, uint64_t h, size_t *no)
{
    uint64_t *slot = simdbpe__ptab_find(&e->tab, lo, hi, h);
    if (!slot && !e->tab_map)
        slot = simdbpe__ptab_find(&e->ovf, lo, hi, h);
    if (slot) {
        /* Found past its home bucket in the encoder's own table: it
         * changes places with the home bucket's second entry, which stays
         * on its own probe path (every bucket from its home to here is
         * full: nothing is ever removed), so pieces that come back are
         * soon found by pass 2. */
        simdbpe__pbucket *home = &e->tab.b[simdbpe__ptab_home(h, e->tab.bits)];
        if (e->tab_map && slot != &home->key[0] && slot != &home->key[2]) {
            uint64_t *second = &home->key[2], t[4] = {second[0], second[1], second[4], second[5]};
            simdbpe__pslot_set(second, slot[0], slot[1], slot[4], slot[5]);
            simdbpe__pslot_set(slot, t[0], t[1], t[2], t[3]);
            slot = second;
        }
        *no = emit_value(e, e->out, *no, slot[4], slot[5], p, len);
        return SIMDBPE_OK;
    }
    size_t start = *no;
    const simdbpe_model *m = e->m;
    uint32_t id;
    if (len == 1) {
        e->out[(*no)++] = m->byte_id[p[0]];
    } else if (!e->prefilled &&
               (id = simdbpe__whole_find(m, p, len, simdbpe__piece_hash(p, len),
                                         ~lo & simdbpe__keep_lo[len], ~hi & simdbpe__keep_hi[len])) !=
                   SIMDBPE__NO_ID) {
        /* A whole token, while the table does not hold them yet. */
        e->out[(*no)++] = id;
    } else {
        /* Not a whole token (the table had them all from the start). */
        size_t cut = next_cut(m, p, 0, len);
        simdbpe_status st = cut < len ? encode_parts(e, p, len, cut, no)
                                      : simdbpe__bpe_word(m, &e->scratch, p, len, e->out, no);
        if (st != SIMDBPE_OK)
            return st;
    }
    tab_put(e, lo, hi, h, p, len, e->out + start, *no - start);
    return SIMDBPE_OK;
}

/*
 * A piece that no merge spans at some places (simdbpe__may_join) is
 * encoded part by part, each part as if it were a piece of its own (and
 * remembered as one): a run of CJK characters or of one emoji is mostly
 * parts of one character. The first part ends at `cut`.
 */
static simdbpe_status encode_parts(simdbpe_encoder *e, const uint8_t *p, size_t len, size_t cut,
                                   size_t *no)
{
    for (size_t a = 0; a < len; a = cut, cut = next_cut(e->m, p, a, len)) {
        size_t n = cut - a;
        simdbpe_status st;
        if (n <= SIMDBPE__SHORT_PIECE) {
            uint64_t lo, hi;
            simdbpe__pkey(p + a, n, &lo, &hi);
            st = encode_short(e, p + a, n, lo, hi, simdbpe__pkey_hash(lo, hi), no);
        } else {
            st = simdbpe__bpe_word(e->m, &e->scratch, p + a, n, e->out, no);
        }
        if (st != SIMDBPE_OK)
            return st;
    }
    return SIMDBPE_OK;
}

/* The long map's slot for hash h and the piece p[0..len): the one holding
 * it, or the empty one where it goes. */
static long_slot *long_slot_of(const simdbpe_encoder *e, uint64_t h, const uint8_t *p, size_t len)
{
    size_t mask = ((size_t)1 << e->long_bits) - 1;
    for (size_t i = (size_t)(h >> (64 - e->long_bits));; i = (i + 1) & mask) {
        long_slot *l = &e->longs[i];
        if (l->h == 0 || (l->h == h && l->len == len &&
                          memcmp(e->arena_bytes + l->bytes, p, len) == 0))
            return l;
    }
}

/* Doubles the long map (or makes its first one) within the budget;
 * false if it cannot. */
static bool long_grow(simdbpe_encoder *e)
{
    unsigned bits = e->long_bits ? e->long_bits + 1 : 10;
    size_t bytes = sizeof(long_slot) << bits, old = e->longs ? sizeof(long_slot) << e->long_bits : 0;
    if (e->side_used - old + bytes > e->side_budget)
        return false;
    long_slot *l = calloc((size_t)1 << bits, sizeof *l), *from = e->longs;
    if (!l)
        return false;
    size_t n = e->longs ? (size_t)1 << e->long_bits : 0;
    e->longs = l;
    e->long_bits = bits;
    for (size_t i = 0; i < n; i++) {
        if (from[i].h == 0)
            continue;
        size_t mask = ((size_t)1 << bits) - 1, j = (size_t)(from[i].h >> (64 - bits));
        while (l[j].h != 0)
            j = (j + 1) & mask;
        l[j] = from[i];
    }
    free(from);
    e->side_used = e->side_used - old + bytes;
    return true;
}

/* Remembers the long piece p[0..len) with hash h and its ids, within the
 * budget. */
static void long_put(simdbpe_encoder *e, uint64_t h, const uint8_t *p, size_t len,
                     const uint32_t *ids, size_t n)
{
    if ((e->long_n + 1) * 4 > ((size_t)3 << e->long_bits) && !long_grow(e))
        return;
    uint64_t at;
    if (arena_room(e, (void **)&e->arena_bytes, &e->arena_bytes_cap, e->arena_bytes_n, len, 1) ||
        !arena_ids_put(e, ids, n, &at))
        return;
    memcpy(e->arena_bytes + e->arena_bytes_n, p, len);
    *long_slot_of(e, h, p, len) =
        (long_slot){h, (uint32_t)len, (uint32_t)n, e->arena_bytes_n, at};
    e->arena_bytes_n += len;
    e->long_n++;
}

static simdbpe_status encode_cut_piece(simdbpe_encoder *e, const uint8_t *p, size_t len,
                                       size_t *no);

/* A piece of over 16 bytes: its bytes' ids if no merge spans it, else the
 * long map, the whole-token map, its parts or BPE, remembered. Room for
 * len ids and 4 more at e->out[*no..]. */
static simdbpe_status encode_long(simdbpe_encoder *e, const uint8_t *p, size_t len, size_t *no)
{
    const simdbpe_model *m = e->m;
    if (all_cut(m, p, len)) {
        /* A run of spaces after a newline (indentation in code). */
        *no = emit_bytes(m, e->out, *no, p, len);
        return SIMDBPE_OK;
    }
    uint64_t hash = simdbpe__hash_bytes(p, len), h = hash + (hash == 0);
    if (len <= LONG_KEY && e->long_n != 0) {
        const long_slot *l = long_slot_of(e, h, p, len);
        if (l->h != 0) {
            memcpy(e->out + *no, e->arena_ids + l->ids, l->n_ids * sizeof *e->out);
            *no += l->n_ids;
            return SIMDBPE_OK;
        }
    }
    size_t start = *no;
    uint64_t lo, hi;
    simdbpe__short_words(p, 16, &lo, &hi);
    uint32_t id = len <= SIMDBPE__MAX_TOKEN_BYTES
             ? simdbpe__whole_find(m, p, len, hash, lo, hi)
             : SIMDBPE__NO_ID;
    if (id != SIMDBPE__NO_ID) {
        e->out[(*no)++] = id;
    } else {
        simdbpe_status st = next_cut(m, p, 0, len) < len
                                ? encode_cut_piece(e, p, len, no)
                                : simdbpe__bpe_word(m, &e->scratch, p, len, e->out, no);
        if (st != SIMDBPE_OK)
            return st;
    }
    if (len <= LONG_KEY)
        long_put(e, h, p, len, e->out + start, *no - start);
    return SIMDBPE_OK;
}

/* A piece pass 2 did not find in its home pair (or over 16 bytes): the
 * piece s[a..b), with its key from pass 1, whose ids go to e->out[no..].
 * Returns the new count, or SIZE_MAX with the failure in *st (pass 2
 * keeps its count in a register: a pointer to it would keep it in
 * memory). */
static NOINLINE size_t slow_piece(simdbpe_encoder *e, const uint8_t *s, size_t a, size_t b,
                                  uint64_t lo, uint64_t hi, size_t no, simdbpe_status *st)
{
    size_t len = b - a;
    *st = reserve_out(e, no, len + 8);
    if (*st == SIMDBPE_OK)
        *st = len <= SIMDBPE__SHORT_PIECE
                  ? encode_short(e, s + a, len, lo, hi, simdbpe__pkey_hash(lo, hi), &no)
                  : encode_long(e, s + a, len, &no);
    return *st == SIMDBPE_OK ? no : SIZE_MAX;
}

/* Pass 1 for the piece s[a..b) of s[0..n): its key (0 if over 16 bytes),
 * home bucket and end into *r, and a prefetch of the home bucket. With
 * `safe`, 16 bytes can be read from a. */
static SIMDBPE_ALWAYS_INLINE void key_pass(const simdbpe__pbucket *t, unsigned bits,
                                           const uint8_t *s, size_t a, size_t b, piece_ref *r,
                                           bool safe)
{
    size_t len = b - a;
    size_t c = len <= SIMDBPE__SHORT_PIECE ? len : 0;
    uint64_t lo, hi;
    if (safe) {
        memcpy(&lo, s + a, 8);
        memcpy(&hi, s + a + 8, 8);
        lo = ~simdbpe__le64(lo) & simdbpe__keep_lo[c];
        hi = ~simdbpe__le64(hi) & simdbpe__keep_hi[c];
    } else if (c != 0) {
        simdbpe__pkey(s + a, c, &lo, &hi);
    } else {
        lo = hi = 0;
    }
    const simdbpe__pbucket *home = &t[simdbpe__ptab_home(simdbpe__pkey_hash(lo, hi), bits)];
    __builtin_prefetch(home);
    *r = (piece_ref){lo, hi, home, b};
}

/* The ids of piece r in its home bucket, as they go out (four, some of
 * them past the piece's), and how many count: 0 if the bucket does not
 * hold it, or holds it with its ids elsewhere. No branch: which slot
 * holds a piece is as good as random. */
#if defined(__AVX2__)
#include <immintrin.h>

static SIMDBPE_ALWAYS_INLINE size_t probe(const piece_ref *r, __m128i *ids)
{
    __m256i key = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)r));
    __m256i eq = _mm256_cmpeq_epi64(_mm256_load_si256((const __m256i *)(const void *)r->home->key),
                                    key);
    /* each slot's two compares ANDed into both of its lanes */
    __m256i hit = _mm256_and_si256(eq, _mm256_shuffle_epi32(eq, 0x4E));
    __m256i vals = _mm256_load_si256((const __m256i *)(const void *)r->home->val);
    __m128i v = _mm_blendv_epi8(_mm256_extracti128_si256(vals, 1), _mm256_castsi256_si128(vals),
                                _mm256_castsi256_si128(hit));
    *ids = _mm_and_si128(v, _mm_set_epi64x(-1, (long long)SIMDBPE__PV_IDS_MASK));
    size_t n = simdbpe__pv_count((uint64_t)_mm_cvtsi128_si64(v));
    return _mm256_movemask_pd(_mm256_castsi256_pd(hit)) ? n : 0;
}
#else
/* x if `take`, else y, with no branch (gcc makes a branch of the ternary
 * where the two are loads). */
static inline uint64_t pick(bool take, uint64_t x, uint64_t y)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__("test %1, %1\n\tcmovne %2, %0" : "+r"(y) : "r"(take), "rm"(x) : "cc");
    return y;
#else
    return take ? x : y;
#endif
}

static SIMDBPE_ALWAYS_INLINE size_t probe(const piece_ref *r, uint64_t ids[2])
{
    const simdbpe__pbucket *b = r->home;
    bool f0 = (b->key[0] == r->lo) & (b->key[1] == r->hi);
    bool f1 = (b->key[2] == r->lo) & (b->key[3] == r->hi);
    uint64_t val = pick(f0, b->val[0], b->val[2]);
    ids[0] = val & SIMDBPE__PV_IDS_MASK;
    ids[1] = pick(f0, b->val[1], b->val[3]);
    return pick(f0 | f1, simdbpe__pv_count(val), 0);
}
#endif

/* Pass 2 over np pieces (the first from `first`): their ids at
 * e->out[*n_out..], which has room for one id a byte of their span and
 * 20 more. */
static simdbpe_status probe_pass(simdbpe_encoder *e, const uint8_t *s, piece_ref *r, size_t np,
                                 size_t first, size_t *n_out)
{
    uint32_t *out = e->out;
    const simdbpe__pbucket *t = e->tab.b;
    size_t w = *n_out;
    for (size_t i = 0; i < np; i++) {
#if defined(__AVX2__)
        __m128i ids;
        size_t c = probe(&r[i], &ids);
        _mm_storeu_si128((__m128i *)(void *)(out + w), ids);
#else
        uint64_t ids[2];
        size_t c = probe(&r[i], ids);
        memcpy(out + w, ids, 16);
#endif
        w += c;
        if (SIMDBPE_UNLIKELY(c == 0)) {
            size_t a = i ? r[i - 1].end : first;
            /* In its home bucket with its ids not inline (a run of one
             * byte's tokens, indentation in code; more than four ids):
             * no second lookup. (lo 0 is a long piece, and an empty slot.) */
            const uint64_t *hk = r[i].home->key;
            int k = r[i].lo == 0                           ? -1
                    : hk[0] == r[i].lo && hk[1] == r[i].hi ? 0
                    : hk[2] == r[i].lo && hk[3] == r[i].hi ? 2
                                                           : -1;
            if (k >= 0) {
                w = emit_value(e, out, w, r[i].home->val[k], r[i].home->val[k + 1], s + a,
                               r[i].end - a);
                continue;
            }
            simdbpe_status st;
            w = slow_piece(e, s, a, r[i].end, r[i].lo, r[i].hi, w, &st);
            if (SIMDBPE_UNLIKELY(w == SIZE_MAX))
                return st;
            out = e->out;
            if (SIMDBPE_UNLIKELY(e->tab.b != t)) {
                /* The table moved (it grew): the other pieces' homes too. */
                t = e->tab.b;
                for (size_t j = i + 1; j < np; j++)
                    r[j].home =
                        &t[simdbpe__ptab_home(simdbpe__pkey_hash(r[j].lo, r[j].hi), e->tab.bits)];
            }
        }
    }
    *n_out = w;
    return SIMDBPE_OK;
}

/* Pass 1 over the pieces that end in a chunk (see encode_chunk), from a
 * (the start of the piece open at its start); returns their number. */
static SIMDBPE_ALWAYS_INLINE size_t key_chunk(const simdbpe_encoder *e, const uint8_t *s,
                                              const uint64_t *starts, size_t count,
                                              size_t base, size_t a, piece_ref *r, bool safe)
{
    /* The table in locals: through e, gcc reloads them every piece. */
    const simdbpe__pbucket *t = e->tab.b;
    unsigned bits = e->tab.bits;
    size_t np = 0;
    for (size_t j = 0; j < count; j++) {
        uint64_t m = starts[j];
        size_t at = base + 64 * j;
        if (j == 0 && at == 0)
            m &= m - 1; /* the text's first start opens the first piece */
        for (; m; m &= m - 1) {
            size_t b = at + (size_t)__builtin_ctzll(m);
            key_pass(t, bits, s, a, b, &r[np++], safe);
            a = b;
        }
    }
    return np;
}

/* Encodes the pieces that end in one chunk of the pre-tokenizer: its
 * piece starts are the bits of starts[0..count) (bit i of word j is byte
 * base + 64 j + i of s[0..n)); *piece is where the piece open at the
 * chunk's start began, and becomes where the one open at its end begins. */
static simdbpe_status encode_chunk(simdbpe_encoder *e, const uint8_t *s, size_t n,
                                   const uint64_t *starts, size_t count, size_t base,
                                   size_t *piece, size_t *n_out, piece_ref *r)
{
    size_t np;
    if (SIMDBPE_LIKELY(base + 64 * count + 16 <= n))
        np = key_chunk(e, s, starts, count, base, *piece, r, true);
    else
        np = key_chunk(e, s, starts, count, base, *piece, r, false);
    size_t first = *piece;
    if (np)
        *piece = r[np - 1].end;
    return probe_pass(e, s, r, np, first, n_out);
}

/* Encodes the last piece (or part) s[a..len), which no chunk ends. */
static simdbpe_status encode_last(simdbpe_encoder *e, const uint8_t *s, size_t a, size_t len,
                                  size_t *n)
{
    simdbpe_status st = reserve_out(e, *n, 64);
    if (st != SIMDBPE_OK)
        return st;
    piece_ref r;
    key_pass(e->tab.b, e->tab.bits, s, a, len, &r, false);
    return probe_pass(e, s, &r, 1, a, n);
}

/* Splits s[0..len) into pre-tokens and encodes each one. */
simdbpe_status SIMDBPE__PIECES_FN(simdbpe_encoder *e, const uint8_t *s, size_t len, size_t *n)
{
    simdbpe__pretok_state ps;
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t base, count, piece = 0;
    simdbpe_status st = SIMDBPE_OK;
    simdbpe__pretok_begin_rx(&ps, e->m->pretok, e->m->regex, e->k, s, len);
    while (st == SIMDBPE_OK && (count = simdbpe__pretok_next(&ps, starts, &base)) != 0) {
        /* The pieces that end in this chunk of 64 * count bytes give at
         * most one id a byte, plus up to 16 for a short piece begun before
         * it, and pass 2 stores four ids past the count: room for all. A
         * long piece begun before the chunk reserves for itself. */
        st = reserve_out(e, *n, 64 * count + 64);
        if (st == SIMDBPE_OK)
            st = encode_chunk(e, s, len, starts, count, base, &piece, n, e->work);
    }
    if (st == SIMDBPE_OK && len > 0)
        st = encode_last(e, s, piece, len, n);
    if (SIMDBPE_UNLIKELY(ps.rx.failed) && st == SIMDBPE_OK)
        st = SIMDBPE_ERR_TOO_LARGE; /* Oniguruma's retry limit: HF fails too */
    if (SIMDBPE_UNLIKELY(ps.rx.dropped) && st == SIMDBPE_OK)
        st = SIMDBPE_ERR_UNSUPPORTED; /* a Removed Split would drop text (regex.h) */
    return st;
}

/*
 * A long piece that no merge spans at some places (runs of punctuation,
 * CJK, emoji; random letters) falls apart into parts there, which are
 * encoded as the pre-tokenizer's pieces are: their starts made into
 * masks a chunk at a time, then the two passes, with their own array
 * (this runs from pass 2's slow path, whose array is in use).
 */
static simdbpe_status encode_cut_piece(simdbpe_encoder *e, const uint8_t *p, size_t len,
                                       size_t *no)
{
    const simdbpe_model *m = e->m;
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t part = 0;
    simdbpe_status st = SIMDBPE_OK;
    for (size_t base = 0; st == SIMDBPE_OK && base < len;
         base += 64 * SIMDBPE__PRETOK_CHUNK) {
        size_t count = 0;
        for (; count < SIMDBPE__PRETOK_CHUNK && base + 64 * count < len; count++) {
            size_t at = base + 64 * count, end = at + 64 < len ? at + 64 : len;
            uint64_t mask = at == 0; /* the piece's start (encode_chunk drops it) */
            for (size_t i = at ? at : 1; i < end; i++)
                mask |= (uint64_t)!simdbpe__may_join(m, p[i - 1], p[i]) << (i - at);
            starts[count] = mask;
        }
        st = reserve_out(e, *no, 64 * count + 64);
        if (st == SIMDBPE_OK)
            st = encode_chunk(e, p, len, starts, count, base, &part, no, e->parts);
    }
    return st == SIMDBPE_OK ? encode_last(e, p, part, len, no) : st;
}
