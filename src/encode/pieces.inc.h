/*
 * pieces.inc.h - the piece path: the pre-tokens of a stretch of text
 * (no special tokens) to ids, through the hot and warm tables, the
 * whole-token map, the caches and BPE (see encoder.h for the tables).
 *
 * Included by pieces.c, pieces_avx2.c and their _wide twins, each
 * compiled with its own flags, which name the entry point
 * SIMDBPE__PIECES_FN and, for the _wide ones, set SIMDBPE__WIDE_IDS (the
 * ids in hot values are 18 bits wide instead of 16, see encoder.h).
 */
#include <string.h>

#if defined(__BMI2__)
#include <immintrin.h>
#endif
#include <simde/x86/sse2.h>

#include "encoder.h"

#if defined(SIMDBPE__WIDE_IDS)
#define HOT_ID_BITS 18
#else
#define HOT_ID_BITS 16
#endif

static simdbpe_status encode_parts(simdbpe_encoder *e, const uint8_t *p, size_t len, size_t cut,
                                   size_t *n);

/* Where the first part of p[from..len) ends: the first place after `from`
 * that no merge spans (simdbpe__may_join), else len. */
static inline size_t next_cut(const simdbpe_model *m, const uint8_t *p, size_t from, size_t len)
{
    for (size_t i = from + 1; i < len; i++)
        if (!simdbpe__may_join(m, p[i - 1], p[i]))
            return i;
    return len;
}

/* Where a big-cache entry's ids start, after its `len` bytes. */
static inline size_t big_ids_at(size_t len)
{
    return (len + 3) & ~(size_t)3;
}

/* Whether the big cache holds the piece p[0..len) with hash h; if so, its
 * ids are appended at e->out[*n..] (the caller made room for len). */
static bool big_find(simdbpe_encoder *e, const uint8_t *p, size_t len, uint64_t h, size_t *n)
{
    const big_slot *b = &e->big[h >> (64 - BIG_BITS)];
    if (b->h != h || b->len != len)
        return false;
    const uint8_t *at = e->big_arena + b->at;
    if (memcmp(at, p, len) != 0)
        return false;
    memcpy(e->out + *n, at + big_ids_at(len), b->n_ids * sizeof *e->out);
    *n += b->n_ids;
    return true;
}

/* Puts the piece p[0..len) (up to BIG_KEY bytes) with hash h and its ids
 * ids[0..n_ids) in the big cache, emptying it first if the arena is full. */
static void big_put(simdbpe_encoder *e, const uint8_t *p, size_t len, uint64_t h,
                    const uint32_t *ids, size_t n_ids)
{
    size_t need = big_ids_at(len) + n_ids * sizeof *ids;
    if (e->big_used + need > BIG_ARENA) {
        memset(e->big, 0, BIG_SLOTS * sizeof *e->big);
        e->big_used = 0;
        e->big_resets++;
    }
    uint8_t *at = e->big_arena + e->big_used;
    memcpy(at, p, len);
    memcpy(at + big_ids_at(len), ids, n_ids * sizeof *ids);
    e->big[h >> (64 - BIG_BITS)] =
        (big_slot){h, (uint32_t)e->big_used, (uint16_t)len, (uint16_t)n_ids};
    e->big_used += need;
}

/* The long slot of the piece p[0..len) (up to 48 bytes) with hash h,
 * given to it (its hash, length and bytes set; the caller sets the ids).
 * The piece that had the slot moves to the big cache if it was found
 * there since it was put there: the direct-mapped slots pushed out
 * pieces that came back on every pass (code has 17 K distinct pieces of
 * 17-48 bytes), and pieces seen once (most of multilingual's) are not
 * worth the copy. */
static long_slot *long_put(simdbpe_encoder *e, const uint8_t *p, size_t len, uint64_t h)
{
    long_slot *ls = &e->long_cache[h >> (64 - LONG_BITS)];
    if (ls->used && ls->h != h)
        big_put(e, ls->key, ls->len, ls->h, ls->ids, ls->n_ids);
    ls->used = 0;
    ls->h = h;
    ls->len = (uint8_t)len;
    memcpy(ls->key, p, len);
    return ls;
}

/* A piece that is not a whole token: the caches, else its parts if no
 * merge spans some place in it, else BPE; the result is cached when it
 * fits. */
static simdbpe_status encode_other(simdbpe_encoder *e, const uint8_t *p, size_t len, uint64_t h,
                                   uint64_t lo, uint64_t hi, size_t *n)
{
    cache_slot *slot = NULL;
    bool in_long = len > SIMDBPE__SHORT_PIECE; /* where to look next */
    if (!in_long) {
        slot = &e->cache[h >> (64 - CACHE_BITS)];
        if (SIMDBPE_LIKELY(slot->lo == lo && slot->hi == hi && slot->len == len)) {
            if (SIMDBPE_LIKELY(slot->n_ids != CACHE_IN_LONG)) {
                memcpy(e->out + *n, slot->ids, sizeof slot->ids);
                *n += slot->n_ids;
                return SIMDBPE_OK;
            }
            in_long = true;
        }
    }
    if (in_long && len <= LONG_KEY) {
        long_slot *ls = &e->long_cache[h >> (64 - LONG_BITS)];
        if (ls->h == h && ls->len == len && memcmp(ls->key, p, len) == 0) {
            memcpy(e->out + *n, ls->ids, ls->n_ids * sizeof(uint32_t));
            *n += ls->n_ids;
            ls->used = 1;
            return SIMDBPE_OK;
        }
    }
    simdbpe_status st = reserve_out(e, *n, len + CACHE_IDS);
    if (st != SIMDBPE_OK)
        return st;
    /* Not in the long cache: over 48 bytes, or moved out of its long slot
     * (long_put); the big cache may hold it. */
    if (in_long && len <= BIG_KEY && big_find(e, p, len, h, n))
        return SIMDBPE_OK;
    size_t start = *n, cut = next_cut(e->m, p, 0, len);
    st = cut < len ? encode_parts(e, p, len, cut, n)
                   : simdbpe__bpe_word(e->m, &e->scratch, p, len, e->out, n);
    if (st != SIMDBPE_OK)
        return st;
    size_t got = *n - start;
    if (slot && got <= CACHE_IDS) {
        slot->lo = lo;
        slot->hi = hi;
        slot->len = (uint8_t)len;
        slot->n_ids = (uint8_t)got;
        memcpy(slot->ids, e->out + start, got * sizeof(uint32_t));
    } else if (len <= LONG_KEY && got <= LONG_IDS) {
        if (slot) {
            /* A short piece of many ids: its slot sends lookups on to the
             * long cache, which is not read (nor prefetched) otherwise. */
            slot->lo = lo;
            slot->hi = hi;
            slot->len = (uint8_t)len;
            slot->n_ids = CACHE_IN_LONG;
        }
        long_slot *ls = long_put(e, p, len, h);
        ls->n_ids = (uint8_t)got;
        memcpy(ls->ids, e->out + start, got * sizeof(uint32_t));
    } else if (len > LONG_KEY && len <= BIG_KEY) {
        big_put(e, p, len, h, e->out + start, got);
    }
    return SIMDBPE_OK;
}

/* Byte masks keeping the first k bytes of the 16-byte window, k = 0..16. */
static const uint64_t keep_lo[17] = {
    0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL,
    0xFFFFFFFFFFFFFFULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL};
static const uint64_t keep_hi[17] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFULL,
    0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL, ~0ULL};

/*
 * The hot and warm tables key a piece of up to 16 bytes by its bytes
 * inverted (each byte b as ~b), as two zero-padded little-endian words
 * (its "hot words"). No 0xFF byte occurs in valid UTF-8, which is all the
 * encoder ever looks up (the text is validated or repaired first), so no
 * inverted byte of a piece is zero: the padding says where the piece
 * ends, and a piece's first word is never 0, an empty slot's key. A key
 * that matches is therefore the piece, with a value: no length to
 * compare, no empty slot to rule out. A piece of up to 8 bytes has hi = 0.
 * hot_lo and hot_hi undo themselves: applied to hot words, they give the
 * zero-padded words back.
 */
static inline uint64_t hot_lo(uint64_t lo, size_t len)
{
    return ~lo & keep_lo[len];
}

static inline uint64_t hot_hi(uint64_t hi, size_t len)
{
    return ~hi & keep_hi[len];
}

/* The first 16 bytes of the piece s[a..a+len) of s[0..n) (len > 8) as
 * hot words (for a longer piece, its first 16 bytes inverted), read with
 * two loads where 16 bytes are left. */
static inline void piece_words(const uint8_t *s, size_t n, size_t a, size_t len, uint64_t *lo,
                               uint64_t *hi)
{
    size_t c = len < 16 ? len : 16;
    if (SIMDBPE_LIKELY(a + 16 <= n)) {
        memcpy(lo, s + a, 8);
        memcpy(hi, s + a + 8, 8);
        *lo = ~simdbpe__le64(*lo);
        *hi = ~simdbpe__le64(*hi) & keep_hi[c];
    } else {
        simdbpe__short_words(s + a, len, lo, hi); /* len < 16 here */
        *lo = ~*lo;
        *hi = hot_hi(*hi, c);
    }
}

/* The warm-table line of a piece of up to 8 bytes, or of 9..16 bytes, with
 * hash h (bits 20.. of it: the caches index by the top bits). */
static inline hot_slot *warm_line(const simdbpe_encoder *e, uint64_t h)
{
    return &e->warm[((h >> 20) & (e->warm_lines - 1)) * WARM_WAYS];
}

static inline hot16_slot *warm16_line(const simdbpe_encoder *e, uint64_t h)
{
    return &e->warm16[((h >> 20) & (e->warm16_lines - 1)) * WARM16_WAYS];
}

/* A 32-byte entry may also be in a second line, chosen by other bits of
 * the hash (see warm_put). */
static inline hot16_slot *warm16_line2(const simdbpe_encoder *e, uint64_t h)
{
    return &e->warm16[((h >> 42) & (e->warm16_lines - 1)) * WARM16_WAYS];
}

/* General path, step 1 (k->lo, hi, a, b are set): the hash; prefetches the
 * whole-token map's pilot for it, the piece's warm line and cache slot. */
static inline void prepare_piece(const simdbpe_encoder *e, const uint8_t *s, piece_key *k)
{
    const simdbpe_model *m = e->m;
    size_t len = k->b - k->a;
    if (SIMDBPE_LIKELY(len <= SIMDBPE__SHORT_PIECE)) {
        k->h = simdbpe__hash_short(k->lo, k->hi, len);
        __builtin_prefetch(&e->cache[k->h >> (64 - CACHE_BITS)]);
        if (len <= HOT_LEN)
            __builtin_prefetch(warm_line(e, k->h));
        __builtin_prefetch(warm16_line(e, k->h));
        __builtin_prefetch(warm16_line2(e, k->h));
    } else {
        k->h = simdbpe__piece_hash(s + k->a, len);
        if (len <= LONG_KEY)
            __builtin_prefetch(&e->long_cache[k->h >> (64 - LONG_BITS)]);
        /* Pieces of up to 48 bytes too: one pushed out of its long slot
         * is looked for there (long_put), a miss a profile of
         * multilingual text showed in big_find. */
        if (len <= BIG_KEY)
            __builtin_prefetch(&e->big[k->h >> (64 - BIG_BITS)]);
    }
    k->slot = NULL;
    if (m->n_whole != 0 && e->whole_ahead) {
        uint64_t x = simdbpe__mph_mix(&m->whole_mph, k->h);
        __builtin_prefetch(&m->whole_mph.pilots[simdbpe__mph_bucket(&m->whole_mph, x)]);
    }
}

/* Step 2: the whole-token slot (its pilot has arrived by now), prefetched. */
static inline void locate_piece(const simdbpe_encoder *e, piece_key *k)
{
    if (e->m->n_whole != 0 && e->whole_ahead) {
        k->slot = simdbpe__whole_slot_of(e->m, k->h);
        __builtin_prefetch(k->slot);
    }
}

/* Step 3: the whole token, else the caches or BPE. */
static inline simdbpe_status encode_piece(simdbpe_encoder *e, const uint8_t *s, const piece_key *k,
                                          size_t *n_out)
{
    size_t len = k->b - k->a;
    uint32_t id = k->slot ? simdbpe__whole_match(e->m, k->slot, s + k->a, len, k->lo, k->hi)
                          : SIMDBPE__NO_ID;
    if (SIMDBPE_LIKELY(id != SIMDBPE__NO_ID)) {
        e->out[(*n_out)++] = id;
        return SIMDBPE_OK;
    }
    return encode_other(e, s + k->a, len, k->h, k->lo, k->hi, n_out);
}

/* The hot word of the piece s[a..a+len) (len <= 8). */
static inline uint64_t hot_key(const uint8_t *s, size_t n, size_t a, size_t len)
{
    uint64_t w;
    if (SIMDBPE_LIKELY(a + 8 <= n)) {
        memcpy(&w, s + a, 8);
        return ~simdbpe__le64(w) & keep_lo[len];
    }
    return hot_lo(simdbpe__upto8(s + a, len), len);
}

static inline size_t hot_index(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - HOT_BITS));
}

static inline size_t hot16_index(uint64_t lo, uint64_t hi)
{
    return (size_t)(((lo ^ hi * 0xD6E8FEB86659FD93ULL) * 0x9E3779B97F4A7C15ULL) >>
                    (64 - HOT16_BITS));
}

/* ids[0..n) (n = 1..3) packed as in a hot value, without the length; 0
 * if an id is too large. */
static inline uint64_t pack_ids(const uint32_t *ids, size_t n)
{
    uint64_t v = (uint64_t)n << HOT_N_SHIFT;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= (1u << HOT_ID_BITS))
            return 0;
        v |= (uint64_t)ids[i] << (HOT_ID_BITS * i);
    }
    return v;
}

/* Writes the ids of hot value v at out[no..] (room for four: its 16-bit
 * fields widened, with one store; or its three 18-bit ones); returns the
 * new count. */
static inline size_t emit_hot(uint32_t *out, size_t no, uint64_t v)
{
#if defined(SIMDBPE__WIDE_IDS)
    const uint64_t id = (1u << HOT_ID_BITS) - 1;
#if defined(__BMI2__)
    uint64_t two = _pdep_u64(v, id | id << 32); /* the first two ids into 32-bit halves */
#else
    uint64_t two = (v & id) | (v << (32 - HOT_ID_BITS) & id << 32);
#endif
    memcpy(out + no, &two, 8);
    out[no + 2] = (uint32_t)(v >> 2 * HOT_ID_BITS & id);
#else
    simde__m128i x = simde_mm_cvtsi64_si128((int64_t)v);
    x = simde_mm_unpacklo_epi16(x, simde_mm_setzero_si128());
    simde_mm_storeu_si128((void *)(out + no), x);
#endif
    return no + (v >> HOT_N_SHIFT);
}

/* Whether the value v of a piece of `len` bytes goes to the 16-byte slots
 * (hot or warm): up to 8 bytes, and no `more` word. */
static inline bool in_short_slot(size_t len, uint64_t v)
{
    return len <= HOT_LEN && (v & (HOT_MORE | HOT_BYTES)) != HOT_MORE;
}

/* Remembers the hot value v of a general-path piece of `len` bytes (up to
 * 16) in its hot table: the 16-byte slots (in_short_slot), else its
 * 32-byte slot with the `more` word. */
static inline void hot_put(simdbpe_encoder *e, const piece_key *k, size_t len, uint64_t v,
                           uint64_t more)
{
    uint64_t lo = hot_lo(k->lo, len), hi = hot_hi(k->hi, len);
    if (in_short_slot(len, v)) {
        hot_slot *hs = &e->hot[hot_index(lo)];
        hs->key = lo;
        hs->val = v;
    } else {
        e->hot16[hot16_index(lo, hi)] = (hot16_slot){lo, hi, v, more};
    }
}

/* The hot value of the piece p[0..len) (len up to 16) that encodes to
 * ids[0..n) (n >= 1), with the ids after the third in *more if n is 4..6
 * (a HOT_BYTES value if n is more and they are its bytes' ids); 0 if it
 * does not fit one (more ids, or an id too large). */
static inline uint64_t hot_val(const simdbpe_model *m, const uint8_t *p, size_t len,
                               const uint32_t *ids, size_t n, uint64_t *more)
{
    if (n > 6) {
        if (n != len)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (ids[i] != m->byte_id[p[i]])
                return 0;
        *more = 0;
        return HOT_MORE | HOT_BYTES | (uint64_t)(len - 1) << HOT_LEN_SHIFT;
    }
    uint64_t v = pack_ids(ids, n <= 3 ? n : 3);
    if (n > 3 && (*more = pack_ids(ids + 3, n - 3)) == 0)
        return 0;
    return v != 0 ? v | (uint64_t)(len - 1) << HOT_LEN_SHIFT | (n > 3 ? HOT_MORE : 0) : 0;
}

/* Whether a hot table holds the piece of `len` bytes (1..16) with hot
 * words lo, hi: its hot slot if it is up to 8 bytes, else (or if that
 * misses: pieces of 4-6 ids) its 32-byte slot. If so, its value goes to
 * *v, and from a 32-byte slot the `more` word to *more (copied now: the
 * slot may be given to another piece before the value is used). A
 * matching key always has a value (hot_lo), so the key compare is the
 * only branch of a hit. Hot and warm tables share the slot formats. */
static inline bool hot_find(const simdbpe_encoder *e, uint64_t lo, uint64_t hi, size_t len,
                            uint64_t *v, uint64_t *more)
{
    if (SIMDBPE_LIKELY(len <= HOT_LEN)) {
        const hot_slot *hs = &e->hot[hot_index(lo)];
        if (SIMDBPE_LIKELY(hs->key == lo)) {
            *v = hs->val;
            return true;
        }
    }
    const hot16_slot *hs = &e->hot16[hot16_index(lo, hi)];
    if (hs->lo != lo || hs->hi != hi)
        return false;
    *v = hs->val;
    *more = hs->more;
    return true;
}

/* Writes the ids of the bytes p[0..len) at out[no..]; returns the new
 * count. */
static inline size_t emit_bytes(const simdbpe_model *m, uint32_t *out, size_t no,
                                const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out[no + i] = m->byte_id[p[i]];
    return no + len;
}

/* Writes the ids of value v of the piece p[0..len) at out[no..] (room
 * for len and seven), with those of its `more` word m if v has HOT_MORE:
 * the rest of its ids, or (n_ids 0) where in out they were written (see
 * emit_pieces), or (HOT_BYTES) none, its bytes' ids. Returns the new
 * count. */
static inline size_t emit_value(const simdbpe_model *m, uint32_t *out, size_t no, uint64_t v,
                                uint64_t more, const uint8_t *p, size_t len)
{
    no = emit_hot(out, no, v);
    if (SIMDBPE_UNLIKELY(v & HOT_MORE)) {
        if (SIMDBPE_LIKELY(v >> HOT_N_SHIFT)) {
            no = emit_hot(out, no, more);
        } else if (v & HOT_BYTES) {
            no = emit_bytes(m, out, no, p, len);
        } else {
            size_t got = (size_t)(v & (HOT_MORE - 1));
            memcpy(out + no, out + more, got * sizeof *out);
            no += got;
        }
    }
    return no;
}

/* The hot value of a general-path piece of `len` bytes (up to 16) in its
 * warm lines (with the `more` word in *more if it has HOT_MORE), or 0. A
 * piece of up to 8 bytes is in the 16-byte line if it has up to three
 * ids, in the 32-byte one if it has more. A piece is in at most one entry
 * of a line (it is put there only after it was not found), so the entries
 * are all compared and their matches ORed: which way holds a piece is as
 * good as random, and a loop that stopped at the match mispredicted on
 * most warm hits. */
static inline uint64_t warm_find(const simdbpe_encoder *e, const piece_key *k, size_t len,
                                 uint64_t *more)
{
    uint64_t v = 0, m = 0, lo = hot_lo(k->lo, len), hi = hot_hi(k->hi, len);
    if (len <= HOT_LEN) {
        const hot_slot *w = warm_line(e, k->h);
        for (size_t j = 0; j < WARM_WAYS; j++)
            v |= w[j].val & -(uint64_t)(w[j].key == lo);
        if (v != 0)
            return v;
    }
    const hot16_slot *w = warm16_line(e, k->h), *w2 = warm16_line2(e, k->h);
    for (size_t j = 0; j < WARM16_WAYS; j++) {
        uint64_t hit = -(uint64_t)(w[j].lo == lo && w[j].hi == hi);
        uint64_t hit2 = -(uint64_t)(w2[j].lo == lo && w2[j].hi == hi);
        v |= (w[j].val & hit) | (w2[j].val & hit2);
        m |= (w[j].more & hit) | (w2[j].more & hit2);
    }
    *more = m;
    return v;
}

static void grow_warm(simdbpe_encoder *e);

/* Puts hot value v (and its `more` word) in the piece's warm line. A
 * 16-byte entry goes first and the line's last one goes. A 32-byte one
 * goes to its second line if its first is full and the second is not
 * (lookups compare both lines' entries); then first only if the line has
 * room, or one time in eight; otherwise it replaces the line's second
 * entry and the first stays. Lines of two overflow on multilingual text
 * (273 K distinct pieces of 9-16 bytes for 512 K entries), and pieces
 * that kept pushing each other out of a line all missed; keeping the
 * first entry and the second line let a later pass find them and run BPE
 * less. The 16-byte lines do not keep their first entry: there that was
 * slower (bench/README.md). */
static inline void warm_put(simdbpe_encoder *e, const piece_key *k, size_t len, uint64_t v,
                            uint64_t more)
{
    if (SIMDBPE_UNLIKELY(--e->warm_room == 0))
        grow_warm(e);
    uint64_t lo = hot_lo(k->lo, len), hi = hot_hi(k->hi, len);
    if (in_short_slot(len, v)) {
        hot_slot *w = warm_line(e, k->h);
        memmove(w + 1, w, (WARM_WAYS - 1) * sizeof *w);
        *w = (hot_slot){lo, v};
    } else {
        hot16_slot *w = warm16_line(e, k->h), *w2 = warm16_line2(e, k->h);
        if (w[WARM16_WAYS - 1].val != 0 && w2[WARM16_WAYS - 1].val == 0 && w2 != w)
            w = w2;
        if (w[WARM16_WAYS - 1].val == 0 || (e->warm_room & 7) == 0) { /* warm_room counts down */
            memmove(w + 1, w, (WARM16_WAYS - 1) * sizeof *w);
            *w = (hot16_slot){lo, hi, v, more};
        } else {
            w[WARM16_WAYS - 1] = (hot16_slot){lo, hi, v, more};
        }
    }
}

/* Moves to the full warm tables, with the entries of the small ones in
 * them (each line's oldest first, so the newest stay in front); if they
 * cannot be mapped, the small ones stay. */
static void grow_warm(simdbpe_encoder *e)
{
    e->warm_room = SIZE_MAX;
    hot_slot *old = e->warm;
    hot16_slot *old16 = e->warm16;
    size_t n = e->warm_lines * WARM_WAYS, n16 = e->warm16_lines * WARM16_WAYS;
    void *old_map = e->warm_map;
    size_t old_map_len = e->warm_map_len;
    if (!simdbpe__map_warm(e, e->warm_bits))
        return;
    for (size_t i = n; i-- > 0;) {
        uint64_t v = old[i].val;
        if (v != 0) {
            size_t len = (size_t)(v >> HOT_LEN_SHIFT & 0xF) + 1;
            uint64_t lo = hot_lo(old[i].key, len);
            piece_key k = {.lo = lo, .h = simdbpe__hash_short(lo, 0, len)};
            warm_put(e, &k, len, v, 0);
        }
    }
    for (size_t i = n16; i-- > 0;) {
        const hot16_slot *w = &old16[i];
        if (w->val != 0) {
            size_t len = (size_t)(w->val >> HOT_LEN_SHIFT & 0xF) + 1;
            uint64_t lo = hot_lo(w->lo, len), hi = hot_hi(w->hi, len);
            piece_key k = {.lo = lo, .hi = hi, .h = simdbpe__hash_short(lo, hi, len)};
            warm_put(e, &k, len, w->val, w->more);
        }
    }
    simdbpe__unmap_tables(old_map, old_map_len);
}

/*
 * A piece that no merge spans at some places (simdbpe__may_join) is
 * encoded part by part, each part as if it were a piece of its own: from
 * the hot tables (then the warm ones, once the tables are full: see
 * WHOLE_WINDOW), the whole-token map, else BPE, whose result goes to the
 * hot tables (and the warm ones). A run of CJK characters or of one emoji
 * is mostly parts of one character, which the hot tables soon hold.
 */
static simdbpe_status encode_part(simdbpe_encoder *e, const uint8_t *p, size_t len, size_t *n)
{
    const simdbpe_model *m = e->m;
    if (len == 1) {
        e->out[(*n)++] = m->byte_id[p[0]];
        return SIMDBPE_OK;
    }
    if (len > SIMDBPE__SHORT_PIECE)
        return simdbpe__bpe_word(m, &e->scratch, p, len, e->out, n);
    piece_key k = {0};
    simdbpe__short_words(p, len, &k.lo, &k.hi);
    uint64_t more = 0, v;
    if (hot_find(e, hot_lo(k.lo, len), hot_hi(k.hi, len), len, &v, &more)) {
        *n = emit_value(m, e->out, *n, v, more, p, len);
        return SIMDBPE_OK;
    }
    k.h = simdbpe__hash_short(k.lo, k.hi, len);
    bool warm = !e->whole_ahead;
    if (warm && (v = warm_find(e, &k, len, &more)) != 0) {
        *n = emit_value(m, e->out, *n, v, more, p, len);
        hot_put(e, &k, len, v, more);
        return SIMDBPE_OK;
    }
    size_t start = *n;
    uint32_t id = simdbpe__whole_find(m, p, len, k.h, k.lo, k.hi);
    if (id != SIMDBPE__NO_ID) {
        e->out[(*n)++] = id;
    } else {
        simdbpe_status st = simdbpe__bpe_word(m, &e->scratch, p, len, e->out, n);
        if (st != SIMDBPE_OK)
            return st;
    }
    if ((v = hot_val(m, p, len, e->out + start, *n - start, &more)) != 0) {
        hot_put(e, &k, len, v, more);
        if (warm)
            warm_put(e, &k, len, v, more);
    }
    return SIMDBPE_OK;
}

/* The parts of p[0..len), the first of which ends at `cut`; the caller
 * made room for len ids and the seven entries a hot value writes. */
static simdbpe_status encode_parts(simdbpe_encoder *e, const uint8_t *p, size_t len, size_t cut,
                                   size_t *n)
{
    for (size_t a = 0; a < len; a = cut, cut = next_cut(e->m, p, a, len)) {
        simdbpe_status st = encode_part(e, p + a, cut - a, n);
        if (st != SIMDBPE_OK)
            return st;
    }
    return SIMDBPE_OK;
}

/*
 * The pieces of a pre-tokenizer chunk are encoded in three passes:
 *   1. each piece (single bytes too: a branch on the length cost more
 *      than the lookup) is looked up in its hot table, and the pieces not
 *      found are listed, with no branch on whether it was; then the
 *      listed ones get their key and hash, and their pilot, warm line and
 *      cache slot are prefetched;
 *   2. the others' whole-token slots are located and prefetched;
 *   3. the others get a value from the general path (warm table, whole
 *      token, caches, BPE), whose memory has had the rest of the chunk's
 *      time to arrive; then every piece's value is written out in order.
 * Taking the pieces in order and branching on which kind each is would
 * cost a mispredicted branch per general-path piece; so would branching
 * on each of pass 1's lookups, hence the list of misses.
 */

/*
 * Pass 1's two selections, written as the two instructions each takes on
 * x86-64: gcc made `v & -(key == lo)` a compare, a set, a zero-extension,
 * a negation and an AND (the ternary form became a branch, mispredicted
 * on every miss), and `n + (v == 0)` a test, a set, a zero-extension and
 * an add. Pass 1 is half of English's time. Its loop is 27 instructions a
 * piece instead of 29 (with the key compared in memory and the 0 read
 * from keep_lo[0], which spares two registers: short of them, gcc
 * reloaded two constants every piece), and a hit's value is ready two
 * instructions after its slot is read instead of five.
 */

/* v if key == lo, else 0, with no branch. */
static inline uint64_t val_if_key(uint64_t key, uint64_t lo, uint64_t v)
{
#if defined(__x86_64__) && defined(__GNUC__)
    /* the key and the 0 from memory: registers are short in pass 1 */
    __asm__("cmpq %2, %1\n\tcmovneq %3, %0"
            : "+r"(v)
            : "rm"(key), "r"(lo), "m"(keep_lo[0])
            : "cc");
    return v;
#else
    return v & -(uint64_t)(key == lo);
#endif
}

/* n + (v == 0): a compare and an add with carry. */
static inline size_t add_if_zero(size_t n, uint64_t v)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__("cmpq $1, %1\n\tadcq $0, %0" : "+r"(n) : "r"(v) : "cc");
    return n;
#else
    return n + (v == 0);
#endif
}

/* Pass 1 for the piece s[a..a+len) of s[0..n): its value in its hot slot
 * (and, from a 32-byte slot, the `more` word in *more), or 0, with no
 * branch on which: a key that does not match gives 0, and so does an
 * empty slot (value 0; no piece's key is 0, see hot_lo). */
static inline uint64_t first_pass(const hot_slot *hot, const hot16_slot *hot16, const uint8_t *s,
                                  size_t n, size_t a, size_t len, uint64_t *more, bool safe)
{
    /* With `safe`, the loads of hot_key and piece_words without their
     * bounds checks, written out: the same functions with a `safe ||`
     * in the check gave gcc a loop of one instruction more per piece
     * (register allocation). */
    if (SIMDBPE_LIKELY(len <= HOT_LEN)) {
        uint64_t lo;
        if (safe) {
            memcpy(&lo, s + a, 8);
            lo = ~simdbpe__le64(lo) & keep_lo[len];
        } else {
            lo = hot_key(s, n, a, len);
        }
        const hot_slot *hs = &hot[hot_index(lo)];
        return val_if_key(hs->key, lo, hs->val);
    }
    if (len > SIMDBPE__SHORT_PIECE)
        return 0;
    uint64_t lo, hi;
    if (safe) {
        memcpy(&lo, s + a, 8);
        memcpy(&hi, s + a + 8, 8);
        lo = ~simdbpe__le64(lo);
        hi = ~simdbpe__le64(hi) & keep_hi[len];
    } else {
        piece_words(s, n, a, len, &lo, &hi);
    }
    const hot16_slot *hs = &hot16[hot16_index(lo, hi)];
    *more = hs->more;
    return val_if_key(hs->hi, hi, val_if_key(hs->lo, lo, hs->val));
}

/* Whether no merge spans any place in p[0..len) (simdbpe__may_join): then
 * its ids are its bytes' ids (it is cut into single bytes, see
 * encode_parts). */
static inline bool all_cut(const simdbpe_model *m, const uint8_t *p, size_t len)
{
    for (size_t i = 1; i < len; i++)
        if (simdbpe__may_join(m, p[i - 1], p[i]))
            return false;
    return true;
}

/* Pass 1b for the piece s[a..b), the i-th of its chunk, that pass 1 did
 * not find: if it is over 16 bytes and no merge spans any place in it,
 * a HOT_BYTES value into val[i]; if it is up to 8 bytes, its value and
 * `more` word from its 32-byte slot (pieces of 4-6 ids) into val[i] and
 * more[i]; else (or if not there) its key goes to keys[*nk] and is
 * prefetched, and val[i] stays 0. Its hot words are read again: pass 1
 * keeps only values, and keeping the words of every piece cost more than
 * reading them again for the few it missed. */
static inline void miss_pass(const simdbpe_encoder *e, const uint8_t *s, size_t n, size_t a,
                             size_t b, size_t i, piece_key *keys, size_t *nk, uint64_t *val,
                             uint64_t *more)
{
    size_t len = b - a;
    if (len > SIMDBPE__SHORT_PIECE && all_cut(e->m, s + a, len)) {
        /* A long run of spaces after a newline (indentation in code):
         * no lookup at all, its bytes' ids are written in pass 3. */
        val[i] = HOT_MORE | HOT_BYTES;
        return;
    }
    uint64_t lo, hi = 0; /* the hot words */
    if (len <= HOT_LEN) {
        lo = hot_key(s, n, a, len);
        const hot16_slot *hs = &e->hot16[hot16_index(lo, 0)];
        if (hs->lo == lo && hs->hi == 0) {
            val[i] = hs->val;
            more[i] = hs->more;
            return;
        }
    } else {
        piece_words(s, n, a, len, &lo, &hi);
    }
    size_t c = len < 16 ? len : 16;
    piece_key *k = &keys[(*nk)++];
    *k = (piece_key){.lo = hot_lo(lo, c), .hi = hot_hi(hi, c), .a = a, .b = b, .i = i};
    prepare_piece(e, s, k);
}

/*
 * The ids of the values val[0..np) (with their `more` words), written at
 * out[no..]; returns the new count. A value with ids in its `more` word
 * (4-6 ids) took a branch that is mispredicted wherever such values are
 * common, as in multilingual text (a short Cyrillic word is 4-6 ids). In
 * a `dense` chunk every value writes its `more` word too (0, no ids,
 * where it has none), and only the values whose ids come from the bytes
 * or from elsewhere in `out` branch. Dense: more than one piece in
 * MORE_SHARE took the general path, which is cheap to know and goes with
 * such text (many of multilingual's pieces, few of English's); counting
 * the values with ids in `more` would take a pass over the chunk.
 */
#define MORE_SHARE 8

static inline size_t write_out(const simdbpe_model *m, uint32_t *out, size_t no,
                               const uint8_t *s, const uint64_t *val, const uint64_t *more,
                               const size_t *ends, size_t first, size_t np, bool dense)
{
    if (!dense) {
        for (size_t i = 0; i < np; i++) {
            uint64_t v = val[i];
            if (SIMDBPE_LIKELY(!(v & HOT_MORE))) {
                no = emit_hot(out, no, v);
            } else {
                size_t a = i ? ends[i - 1] : first;
                no = emit_value(m, out, no, v, more[i], s + a, ends[i] - a);
            }
        }
        return no;
    }
    for (size_t i = 0; i < np; i++) {
        uint64_t v = val[i];
        /* One compare: HOT_MORE and no ids in v (one branch, seldom taken) */
        if (SIMDBPE_UNLIKELY((v & (HOT_MORE | (uint64_t)3 << HOT_N_SHIFT)) == HOT_MORE)) {
            size_t a = i ? ends[i - 1] : first;
            no = emit_value(m, out, no, v, more[i], s + a, ends[i] - a);
            continue;
        }
        /* more[i] may be left from another chunk where v has no HOT_MORE */
        no = emit_hot(out, no, v);
        no = emit_hot(out, no, more[i] & -(v >> HOT_MORE_BIT & 1));
    }
    return no;
}

/* Passes 2 and 3 for np pieces whose pass-1 values are val[] (with the
 * `more` words in more[]) and whose general-path keys are keys[0..nk);
 * the pieces span `span` bytes from s[first], the i-th ending at
 * ends[i] (HOT_BYTES values are written from the bytes). Pass 3 first
 * gives each general-path piece a value: its ids packed as in a hot value, or, if they do not
 * fit one, HOT_MORE with no ids and their number in the id bits, and in
 * its `more` word where they were written (past the room the chunk's
 * ids can take, one per byte). Then all the pieces' values are written
 * out, with no branch on where a value came from (see write_out). */
static simdbpe_status emit_pieces(simdbpe_encoder *e, const uint8_t *s, uint64_t *val,
                                  uint64_t *more, const size_t *ends, size_t first, size_t np,
                                  piece_key *keys, size_t nk, size_t span, size_t *n_out)
{
    for (size_t j = 0; j < nk; j++)
        locate_piece(e, &keys[j]);
    size_t side = *n_out + span + 8; /* emit_hot writes up to 3 entries past the count */
    /* Room for the gap and the general path's ids (at most one a byte)
     * now, while only out[0 .. *n_out) is live: growing it later would copy
     * the untouched gap too, 4 bytes a byte of a long piece that all
     * become resident. */
    simdbpe_status grown = reserve_out(e, *n_out, 2 * span + 8 + CACHE_IDS + 1);
    if (SIMDBPE_UNLIKELY(grown != SIMDBPE_OK))
        return grown;
    /* A long first piece (one begun in an earlier chunk: every piece of
     * more than a chunk is one) writes its ids in place, from *n_out, and
     * the others' values go after them: written aside and copied down,
     * a megabyte piece's ids were resident twice. They end before `side`
     * (at most one id a byte of the span). */
    size_t head = *n_out;
    bool first_in_place = false;
    for (size_t j = 0; j < nk; j++) {
        const piece_key *k = &keys[j];
        size_t len = k->b - k->a, i = k->i;
        uint64_t w_more = 0, v;
        if (SIMDBPE_UNLIKELY(i == 0 && len > SIMDBPE__SHORT_PIECE)) {
            simdbpe_status st = encode_piece(e, s, k, &head);
            if (SIMDBPE_UNLIKELY(st != SIMDBPE_OK))
                return st;
            first_in_place = true;
            continue;
        }
        if (SIMDBPE_UNLIKELY(++e->window_pieces == WHOLE_WINDOW)) {
            /* A model whose map holds tokens BPE does not yield (no_cuts)
             * must ask it for every piece. */
            e->whole_ahead = e->window_ones * WHOLE_SHARE > WHOLE_WINDOW || e->m->no_cuts;
            e->window_pieces = e->window_ones = 0;
        }
        if (len <= SIMDBPE__SHORT_PIECE && (v = warm_find(e, k, len, &w_more)) != 0) {
            val[i] = v;
            more[i] = w_more;
            hot_put(e, k, len, v, w_more);
            continue;
        }
        simdbpe_status st = reserve_out(e, side, CACHE_IDS + 1);
        if (SIMDBPE_UNLIKELY(st != SIMDBPE_OK))
            return st;
        size_t start = side, n_now = side;
        st = encode_piece(e, s, k, &n_now);
        if (SIMDBPE_UNLIKELY(st != SIMDBPE_OK))
            return st;
        const uint32_t *ids = e->out + start;
        size_t got = n_now - start;
        e->window_ones += got == 1;
        if (len <= SIMDBPE__SHORT_PIECE) {
            if ((v = hot_val(e->m, s + k->a, len, ids, got, &w_more)) != 0) {
                hot_put(e, k, len, v, w_more);
                warm_put(e, k, len, v, w_more);
                val[i] = v;
                more[i] = w_more;
                continue;
            }
        } else if (got <= 3 && (v = pack_ids(ids, got)) != 0) {
            val[i] = v;
            continue;
        }
        val[i] = HOT_MORE | got; /* no ids in the value itself, n_ids 0 */
        more[i] = start;
        side = n_now;
    }
    /* Room for all (up to one id per byte, and what emit_hot writes past
     * them) was reserved above. */
    bool dense = nk * MORE_SHARE > np;
    if (first_in_place)
        *n_out = write_out(e->m, e->out, head, s, val + 1, more + 1, ends + 1, ends[0], np - 1,
                           dense);
    else
        *n_out = write_out(e->m, e->out, *n_out, s, val, more, ends, first, np, dense);
    return SIMDBPE_OK;
}

/* Pass 1 over the pieces that end in a chunk (see encode_chunk), from
 * a (the start of the piece open at its start); returns their number
 * and their values, ends, misses (*nm of them), `more` words. With
 * `safe`, 16 bytes can be read from where any of them starts: no bounds
 * checks (encode_chunk makes a copy of each kind). */
static SIMDBPE_ALWAYS_INLINE size_t hit_pass(
    const simdbpe_encoder *e, const uint8_t *s, size_t n, const uint64_t *starts, size_t count,
    size_t base, size_t a, struct chunk_work *w, size_t *nm_out, bool safe)
{
    uint64_t *val = w->val, *more = w->more;
    size_t *ends = w->ends;
    uint16_t *missed = w->missed;
    size_t np = 0, nm = 0;
    /* The tables in locals: through e, gcc reloaded e (spilled) and then
     * e->hot for every piece. */
    const hot_slot *hot = e->hot;
    const hot16_slot *hot16 = e->hot16;
    for (size_t j = 0; j < count; j++) {
        uint64_t bits = starts[j];
        size_t at = base + 64 * j;
        if (j == 0 && at == 0)
            bits &= bits - 1; /* the text's first start opens the first piece */
        for (; bits; bits &= bits - 1) {
            size_t b = at + (size_t)__builtin_ctzll(bits);
            uint64_t v = first_pass(hot, hot16, s, n, a, b - a, &more[np], safe);
            val[np] = v;
            ends[np] = b;
            missed[nm] = (uint16_t)np;
            nm = add_if_zero(nm, v);
            np++;
            a = b;
        }
    }
    *nm_out = nm;
    return np;
}

/* Encodes the pieces that end in one chunk of the pre-tokenizer: its
 * piece starts are the bits of starts[0..count) (bit i of word j is byte
 * base + 64 j + i of s[0..n)); *piece is where the piece open at the
 * chunk's start began, and becomes where the one open at its end begins. */
static simdbpe_status encode_chunk(simdbpe_encoder *e, const uint8_t *s, size_t n,
                                   const uint64_t *starts, size_t count, size_t base,
                                   size_t *piece, size_t *n_out)
{
    struct chunk_work *w = e->work;
    uint64_t *val = w->val, *more = w->more;
    size_t *ends = w->ends;
    uint16_t *missed = w->missed;
    piece_key *keys = w->keys;
    size_t nk = 0, nm, np;
    if (SIMDBPE_LIKELY(base + 64 * count + 16 <= n))
        np = hit_pass(e, s, n, starts, count, base, *piece, w, &nm, true);
    else
        np = hit_pass(e, s, n, starts, count, base, *piece, w, &nm, false);
    size_t a = np ? ends[np - 1] : *piece;
    /* Pass 1b takes the misses by length (up to 8 bytes, 9-16, longer),
     * each kind in a run: its branches on the length, and pass 3's, which
     * takes the keys in the order they are listed, were mispredicted on
     * about half the misses of multilingual text, which mixes the kinds.
     * Sorting them costs three stores a miss, and no branch. */
    size_t n_by[3] = {0, 0, 0};
    for (size_t j = 0; j < nm; j++) {
        size_t i = missed[j], len = ends[i] - (i ? ends[i - 1] : *piece);
        size_t c = (size_t)(len > HOT_LEN) + (size_t)(len > SIMDBPE__SHORT_PIECE);
        w->by_len[0][n_by[0]] = (uint16_t)i;
        w->by_len[1][n_by[1]] = (uint16_t)i;
        w->by_len[2][n_by[2]] = (uint16_t)i;
        n_by[0] += c == 0;
        n_by[1] += c == 1;
        n_by[2] += c == 2;
    }
    for (size_t c = 0; c < 3; c++)
        for (size_t j = 0; j < n_by[c]; j++) {
            size_t i = w->by_len[c][j];
            miss_pass(e, s, n, i ? ends[i - 1] : *piece, ends[i], i, keys, &nk, val, more);
        }
    size_t span = a - *piece;
    *piece = a;
    return emit_pieces(e, s, val, more, ends, *piece - span, np, keys, nk, span, n_out);
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
        /* The pieces that end in this chunk of 64*count bytes give at most
         * one id per byte, plus up to 15 bytes of a short piece begun
         * before it: room for all, and for what emit_hot writes past
         * them. A long piece begun before the chunk makes emit_pieces
         * reserve more (its span), and the general path reserves for
         * what it writes past the chunk's room. (emit_pieces' reserve
         * alone would do; without this one, gcc's code for pass 1 took
         * an instruction more per piece.) */
        st = reserve_out(e, *n, 64 * count + 64);
        if (st == SIMDBPE_OK)
            st = encode_chunk(e, s, len, starts, count, base, &piece, n);
    }
    if (st == SIMDBPE_OK && len > 0) {
        /* The last piece. */
        st = reserve_out(e, *n, CACHE_IDS + 1);
        if (st == SIMDBPE_OK) {
            piece_key key = {0}; /* gcc cannot see that only pass 1's write is read */
            size_t nk = 0;
            uint64_t more = 0,
                     val = first_pass(e->hot, e->hot16, s, len, piece, len - piece, &more, false);
            if (val == 0)
                miss_pass(e, s, len, piece, len, 0, &key, &nk, &val, &more);
            st = emit_pieces(e, s, &val, &more, &len, piece, 1, &key, nk, len - piece, n);
        }
    }
    if (SIMDBPE_UNLIKELY(ps.rx.failed) && st == SIMDBPE_OK)
        st = SIMDBPE_ERR_TOO_LARGE; /* Oniguruma's retry limit: HF fails too */
    if (SIMDBPE_UNLIKELY(ps.rx.dropped) && st == SIMDBPE_OK)
        st = SIMDBPE_ERR_UNSUPPORTED; /* a Removed Split would drop text (regex.h) */
    return st;
}
