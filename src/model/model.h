/*
 * model.h - the in-memory model (internal).
 *
 * A model is built once (from vocab.json + merges.txt, or the embedded
 * GPT-2 files) and never changes afterwards, so any number of encoders on
 * any number of threads may read it at once.
 *
 *   tokens:   id -> bytes          tok_off[id] .. tok_off[id+1] in `blob`
 *   bytes:    byte -> initial id   byte_id[256]
 *   merges:   (left id, right id) -> (rank, new id), open addressing on the
 *             packed 64-bit key  left << 32 | right
 *   whole:    token bytes -> id, holding only the tokens whose own bytes
 *             BPE-encode to exactly that one token, so that "the whole
 *             pre-token is in this map => emit it" is exact by construction
 *   specials: literal text -> id
 */
#ifndef SIMDBPE_MODEL_H
#define SIMDBPE_MODEL_H

#include "../common/common.h"

#define SIMDBPE__NO_ID UINT32_MAX
#define SIMDBPE__EMPTY_KEY UINT64_MAX

typedef struct simdbpe__merge_slot {
    uint64_t key; /* left << 32 | right, or SIMDBPE__EMPTY_KEY */
    uint32_t rank;
    uint32_t id;
} simdbpe__merge_slot;

typedef struct simdbpe__whole_slot {
    uint32_t id; /* SIMDBPE__NO_ID when empty */
    uint32_t hash32;
} simdbpe__whole_slot;

typedef struct simdbpe__special {
    uint32_t id;
    uint32_t len;
    const uint8_t *text; /* points into the model's blob */
} simdbpe__special;

struct simdbpe_model {
    uint32_t vocab_size; /* max id + 1 */
    uint32_t n_tokens;   /* ids that have bytes */
    uint32_t n_merges;
    uint32_t *tok_off;   /* vocab_size + 1 offsets into blob */
    uint8_t *tok_has;    /* vocab_size flags: 1 if the id is defined */
    uint8_t *blob;
    size_t blob_len;
    uint32_t byte_id[256];

    simdbpe__merge_slot *merges;
    uint64_t merge_mask;

    simdbpe__whole_slot *whole;
    uint64_t whole_mask;
    uint32_t n_whole;
    int whole_exact; /* every non-special token is in `whole` */

    simdbpe__special *specials;
    size_t n_specials;
};

static inline const simdbpe__merge_slot *simdbpe__merge_find(const simdbpe_model *m,
                                                            uint32_t left, uint32_t right)
{
    uint64_t key = (uint64_t)left << 32 | right;
    uint64_t i = simdbpe__hash_u64(key) & m->merge_mask;
    for (;;) {
        const simdbpe__merge_slot *s = &m->merges[i];
        if (s->key == key)
            return s;
        if (s->key == SIMDBPE__EMPTY_KEY)
            return NULL;
        i = (i + 1) & m->merge_mask;
    }
}

/* The id of the token whose bytes are exactly s[0..len) and which BPE
 * yields on its own bytes, or SIMDBPE__NO_ID. `hash` is
 * simdbpe__hash_bytes(s, len). */
static inline uint32_t simdbpe__whole_find(const simdbpe_model *m, const uint8_t *s, size_t len,
                                           uint64_t hash)
{
    uint32_t h32 = (uint32_t)(hash >> 32);
    uint64_t i = hash & m->whole_mask;
    for (;;) {
        const simdbpe__whole_slot *w = &m->whole[i];
        if (w->id == SIMDBPE__NO_ID)
            return SIMDBPE__NO_ID;
        if (w->hash32 == h32) {
            uint32_t off = m->tok_off[w->id];
            if (m->tok_off[w->id + 1] - off == len && memcmp(m->blob + off, s, len) == 0)
                return w->id;
        }
        i = (i + 1) & m->whole_mask;
    }
}

/* ---- hashing pre-tokens ---- */

/*
 * The hash of a piece of text, shared by the encoder's cache and the
 * model's whole-token map so a piece is hashed once. Pieces of up to 16
 * bytes are read as two little-endian words zero-padded past the end (the
 * encoder loads them with two unaligned loads) and mixed with one 64x64 ->
 * 128-bit multiply folded to 64 bits; longer pieces use XXH3.
 */
#define SIMDBPE__SHORT_PIECE 16

static inline uint64_t simdbpe__hash_short(uint64_t lo, uint64_t hi, size_t len)
{
    __uint128_t p = (__uint128_t)(lo ^ 0x9E3779B97F4A7C15ULL) *
                    (hi ^ 0xD6E8FEB86659FD93ULL ^ ((uint64_t)len << 56));
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* The zero-padded words of a piece of up to 16 bytes. */
static inline void simdbpe__short_words(const uint8_t *s, size_t len, uint64_t *lo, uint64_t *hi)
{
    uint8_t buf[16] = {0};
    memcpy(buf, s, len);
    memcpy(lo, buf, 8);
    memcpy(hi, buf + 8, 8);
}

static inline uint64_t simdbpe__piece_hash(const uint8_t *s, size_t len)
{
    if (len <= SIMDBPE__SHORT_PIECE) {
        uint64_t lo, hi;
        simdbpe__short_words(s, len, &lo, &hi);
        return simdbpe__hash_short(lo, hi, len);
    }
    return simdbpe__hash_bytes(s, len);
}

/* ---- BPE merging (bpe.c) ---- */

/* Scratch space for merging one word; owned by an encoder (or a model
 * build), reused across words. */
typedef struct simdbpe__bpe_scratch {
    const struct simdbpe__kernels *k; /* for map_bytes; NULL = scalar */
    uint32_t *id, *prev, *next;
    size_t cap;
    struct simdbpe__heap_entry *heap;
    size_t heap_cap;
} simdbpe__bpe_scratch;

void simdbpe__bpe_scratch_free(simdbpe__bpe_scratch *s);

/*
 * Applies the model's merges to the bytes s[0..len) (len >= 1): starts from
 * one token per byte, merges the lowest-rank adjacent pair first (leftmost
 * on ties) until no pair has a merge. Appends the resulting ids to
 * out[*n_out ..] (the caller guarantees room for `len` ids).
 * O(len log len). Returns SIMDBPE_ERR_NOMEM or SIMDBPE_OK.
 */
simdbpe_status simdbpe__bpe_word(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                 const uint8_t *s, size_t len, uint32_t *out, size_t *n_out);

/* ---- byte-level alphabet (bytelevel.c) ---- */

/* The code point that stands for byte b in vocab.json / merges.txt. */
uint32_t simdbpe__bytelevel_cp(uint8_t b);
/* The byte a code point stands for, or -1 if it is not in the alphabet. */
int simdbpe__bytelevel_byte(uint32_t cp);

/* ---- building (load.c) ---- */

/* Builds the lookup tables of a model whose tokens, byte ids, merges list
 * and specials are filled in; used by every loader. */
simdbpe_status simdbpe__model_finish(simdbpe_model *m, simdbpe_error *err);

/* The embedded GPT-2 files (gpt2_data.c, generated at build time). */
extern const unsigned char simdbpe__gpt2_vocab_json[];
extern const size_t simdbpe__gpt2_vocab_json_len;
extern const unsigned char simdbpe__gpt2_merges_txt[];
extern const size_t simdbpe__gpt2_merges_txt_len;

#endif
