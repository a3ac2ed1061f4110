/*
 * ptab.h - the piece table (internal): pieces of up to 16 bytes -> their
 * ids, one open-addressing table of 32-byte slots in buckets of two.
 *
 * A model fills one with every token of up to 16 bytes that a piece of
 * text is exactly when it is that token (the whole-token map's tokens),
 * before any text arrives (simdbpe__model_ptab, built on first use and
 * then shared read-only); every encoder starts from a copy of it and adds
 * the pieces it encodes, growing without eviction up to its budget.
 *
 * Key: a piece's bytes inverted (each byte b as ~b), as two zero-padded
 * little-endian words lo, hi (hi = 0 for up to 8 bytes). No 0xFF byte
 * occurs in valid UTF-8, which is all the encoder looks up, so no inverted
 * byte of a piece is 0: the padding tells where the piece ends, no length
 * is needed, and lo != 0 for every piece: lo == 0 is an empty slot.
 *
 * Slots come in buckets of two (one 64-byte line, the two keys first,
 * so that one 32-byte compare tells which of them matches): a piece's home
 * bucket is chosen by the top bits of its hash, and an insert takes the
 * first empty slot from there on (linear probing over buckets, wrapping).
 * Tables are at most half full, so nearly every piece is in its home
 * bucket, which the encoder reads without a branch; the rest are found by
 * a walk that stops at the first bucket with an empty slot.
 *
 * Value (val, ext): up to four ids inline,
 *   val = id0 | n << 24 | id1 << 32,  ext = id2 | id3 << 32   (n = 1..4),
 * ids being below 2^24 (the loaders' limit), so val & ~(0xFF << 24) and ext
 * are the four ids as they go out, n = (val >> 24) & 7 how many count.
 * With n = 0 the ids are elsewhere (flags in bits 27..31): the piece's
 * bytes' ids (BYTES), or n_ids = ext ids at offset val >> 32 of the
 * encoder's id arena (ARENA).
 */
#ifndef SIMDBPE_PTAB_H
#define SIMDBPE_PTAB_H

#include "model.h"

/* Slot j of a bucket is its key key[2j], key[2j + 1] (lo, hi; lo == 0:
 * empty) and its value val[2j], val[2j + 1] (val, ext). A slot is named by
 * a pointer to its lo: its hi is p[1], its val p[4] and its ext p[5]. */
typedef struct simdbpe__pbucket {
    uint64_t key[4];
    uint64_t val[4];
} simdbpe__pbucket;

static inline void simdbpe__pslot_set(uint64_t *p, uint64_t lo, uint64_t hi, uint64_t val,
                                      uint64_t ext)
{
    p[0] = lo;
    p[1] = hi;
    p[4] = val;
    p[5] = ext;
}

#define SIMDBPE__PV_N_SHIFT 24
#define SIMDBPE__PV_IDS_MASK 0xFFFFFFFF00FFFFFFULL /* val's ids as they go out */
#define SIMDBPE__PV_BYTES ((uint64_t)1 << 27)
#define SIMDBPE__PV_ARENA ((uint64_t)1 << 28)
#define SIMDBPE__PV_INLINE 4 /* ids a value holds inline */

static inline unsigned simdbpe__pv_count(uint64_t val)
{
    return (unsigned)(val >> SIMDBPE__PV_N_SHIFT) & 7;
}

/* The value of ids[0..n) (n = 1..4, ids below 2^24). */
static inline void simdbpe__pv_pack(const uint32_t *ids, size_t n, uint64_t *val, uint64_t *ext)
{
    uint32_t v[4] = {ids[0], n > 1 ? ids[1] : 0, n > 2 ? ids[2] : 0, n > 3 ? ids[3] : 0};
    *val = v[0] | (uint64_t)n << SIMDBPE__PV_N_SHIFT | (uint64_t)v[1] << 32;
    *ext = v[2] | (uint64_t)v[3] << 32;
}

/* Byte masks keeping the first k bytes of a 16-byte key, k = 0..16. */
extern const uint64_t simdbpe__keep_lo[17], simdbpe__keep_hi[17];

/* The key of s[0..len) (1 <= len <= 16), reading only its bytes. */
static inline void simdbpe__pkey(const uint8_t *s, size_t len, uint64_t *lo, uint64_t *hi)
{
    simdbpe__short_words(s, len, lo, hi);
    *lo = ~*lo & simdbpe__keep_lo[len];
    *hi = ~*hi & simdbpe__keep_hi[len];
}

/* The hash of a key; its top bits choose the home pair (the top bits of
 * a product by an odd constant depend on all of the multiplicand's bits;
 * hi is rotated so that its bytes do not meet lo's like bytes). One
 * constant: the piece path is short of registers. */
static inline uint64_t simdbpe__pkey_hash(uint64_t lo, uint64_t hi)
{
    return (lo ^ (hi >> 27 | hi << 37)) * 0x9E3779B97F4A7C15ULL;
}

/* A table of 2^bits buckets. */
typedef struct simdbpe__ptab {
    simdbpe__pbucket *b;
    unsigned bits;
    size_t n; /* slots in use */
} simdbpe__ptab;

/* The home bucket of hash h in a table of 2^bits buckets. */
static inline size_t simdbpe__ptab_home(uint64_t h, unsigned bits)
{
    return (size_t)(h >> (64 - bits));
}

/* The slot holding key (lo, hi) with hash h, or NULL. */
static inline uint64_t *simdbpe__ptab_find(const simdbpe__ptab *t, uint64_t lo, uint64_t hi,
                                           uint64_t h)
{
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (size_t i = simdbpe__ptab_home(h, t->bits);; i = (i + 1) & mask) {
        uint64_t *k = t->b[i].key;
        if (k[0] == lo && k[1] == hi)
            return &k[0];
        if (k[2] == lo && k[3] == hi)
            return &k[2];
        if (k[0] == 0 || k[2] == 0)
            return NULL;
    }
}

/* The slot an absent key with hash h goes to: the first empty one from
 * its home bucket on (the table is never full). */
static inline uint64_t *simdbpe__ptab_free_slot(const simdbpe__ptab *t, uint64_t h)
{
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (size_t i = simdbpe__ptab_home(h, t->bits);; i = (i + 1) & mask) {
        uint64_t *k = t->b[i].key;
        if (k[0] == 0)
            return &k[0];
        if (k[2] == 0)
            return &k[2];
    }
}

/* Copies every entry of `from` into `to` (empty, large enough). */
void simdbpe__ptab_rehash(simdbpe__ptab *to, const simdbpe__ptab *from);

/* The model's table of its whole tokens of up to 16 bytes, and its byte
 * pairs (model.h), each built on the first call (by whichever thread gets
 * there first; the others wait for nothing: a thread that loses the race
 * frees its copy), shared read-only by its encoders and freed with the
 * model; NULL if out of memory. The table takes milliseconds to build
 * (bench/README.md), which an encoder puts off until it has met a few thousand pieces (encoder.h); _if_built gives
 * it if it is there, else NULL. */
const simdbpe__ptab *simdbpe__model_ptab(const simdbpe_model *m);
const simdbpe__ptab *simdbpe__model_ptab_if_built(const simdbpe_model *m);
const simdbpe__byte_pair *simdbpe__model_byte_pairs(const simdbpe_model *m);

/* Frees what simdbpe__model_ptab built for m (model free). */
void simdbpe__model_ptab_free(simdbpe_model *m);


#endif
