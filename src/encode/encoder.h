/*
 * encoder.h - the encoder's state and tables (internal): shared by
 * encoder.c (creating encoders; UTF-8, added tokens, normalization) and
 * the piece path (pieces.inc.h), which encodes the pre-tokens of a
 * stretch of text.
 *
 * A piece's ids come from
 *   the piece table  pieces of up to 16 bytes (src/model/ptab.h): the
 *                    model's, which holds its whole tokens before any text
 *                    arrives, shared read-only while the encoder has added
 *                    few pieces (they go to a small table of its own, the
 *                    overflow), then a copy of its own that holds them
 *                    all; probed once per piece, without a branch, for
 *                    nearly every piece of text. Until the model's is
 *                    built (the first encoder to outgrow its overflow
 *                    builds it), an empty one: a short job does not pay
 *                    for it, and finds whole tokens in the model's
 *                    whole-token map;
 *   the long map     pieces of 17..LONG_KEY bytes the encoder has encoded
 *                    (bytes and ids in the arenas);
 *   BPE              on the piece, or on its parts between places no
 *                    merge spans, for pieces met for the first time.
 * Both tables grow without evicting anything until the encoder's budget
 * (simdbpe_encoder_options.cache_mb) is spent (the piece table, one piece
 * a bucket while it grows, is then filled on to three slots in four);
 * after that new pieces are encoded every time they come.
 */
#ifndef SIMDBPE_ENCODER_H
#define SIMDBPE_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kernels/kernels.h"
#include "../model/model.h"
#include "../model/normalizer.h"
#include "../model/ptab.h"
#include "../pretok/pretok.h"

/* Pieces longer than this are encoded every time (BPE in O(n log n)). */
#define LONG_KEY 4096

/* A long piece: its hash, and where its bytes and ids are in the arenas. */
typedef struct long_slot {
    uint64_t h;      /* 0: empty (a hash of 0 is stored as 1) */
    uint32_t len;    /* bytes */
    uint32_t n_ids;
    uint64_t bytes;  /* offset in the byte arena */
    uint64_t ids;    /* offset in the id arena */
} long_slot;

/* The most pieces that end in one chunk of the pre-tokenizer (one per
 * byte). */
#define MAX_PIECES (SIMDBPE__PRETOK_CHUNK * 64)

/* A piece of a chunk, as pass 1 leaves it for pass 2 (see pieces.inc.h):
 * its key (lo = hi = 0 for a piece over 16 bytes), home pair and end. */
typedef struct piece_ref {
    uint64_t lo, hi;
    const simdbpe__pbucket *home;
    size_t end;
} piece_ref;

/* Encodes the pre-tokens of s[0..len) (no special tokens), appending
 * their ids to e->out after the first *n; see pieces.inc.h. */
typedef simdbpe_status (*simdbpe__pieces_fn)(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                             size_t *n);

struct simdbpe_encoder {
    const simdbpe_model *m;
    const simdbpe__kernels *k;
    uint32_t *out;
    size_t out_cap;
    void *out_map; /* out's own mapping once it is large, else NULL: out is in `fixed` */
    size_t out_map_len;
    bool out_borrowed; /* out is the caller's malloc'd array (simdbpe_encode_append) */
    uint8_t *clean; /* replace mode: the repaired text */
    size_t clean_cap;
    uint8_t *norm; /* the normalized stretch (models with a normalizer; common/nfc.c) */
    size_t norm_cap;
    simdbpe__nz_work nz_work; /* ... of a normalizer chain (model/normalizer.c) */
    simdbpe__bpe_scratch scratch;

    /* The piece table: the model's (tab_map NULL) or the encoder's own
     * (in tab_map); the entries it may still take before it grows (or,
     * once the budget is spent, any more); while it is the model's, the
     * overflow of OVERFLOW_BITS slots takes the encoder's pieces. */
    simdbpe__ptab tab;
    void *tab_map;
    size_t tab_map_len;
    size_t tab_room;
    unsigned tab_max_bits; /* the largest table the budget allows */
    simdbpe__ptab ovf;
    void *ovf_map;
    size_t ovf_map_len;
    bool prefilled; /* tab holds the model's whole tokens */

    /* The long map: 2^long_bits slots (malloc'd; 0 until the first long
     * piece), long_n of them in use. */
    long_slot *longs;
    unsigned long_bits;
    size_t long_n;
    /* The arenas: ids of long pieces and of short ones of more than four
     * ids; bytes of long pieces. */
    uint32_t *arena_ids;
    size_t arena_ids_n, arena_ids_cap;
    uint8_t *arena_bytes;
    size_t arena_bytes_n, arena_bytes_cap;
    /* What the budget leaves for the long map and the arenas. */
    size_t side_budget, side_used;

    /* Fixed tables in one mapping: BPE's merge-lookup cache, the chunk's
     * pieces and a long piece's parts (encode_cut_piece), the first ids of
     * an output. */
    piece_ref *work, *parts;
    void *fixed;
    size_t fixed_len;

    /* the piece path built for the encoder's kernel set (see below) */
    simdbpe__pieces_fn encode_pieces;
    /* SentencePiece-style models (encode_sp.c): the normalized stretch and
     * BPE's scratch */
    uint8_t *sp_norm;
    size_t sp_norm_cap;
    simdbpe__sp_work sp_work;
    struct simdbpe__sp_cache *sp_cache; /* NULL until used (or out of memory) */
};

/* Gives e->out room for `need` ids, keeping the first n. */
simdbpe_status simdbpe__grow_out(simdbpe_encoder *e, size_t n, size_t need);

/* Makes room for `more` ids after the first `n`. */
static inline simdbpe_status reserve_out(simdbpe_encoder *e, size_t n, size_t more)
{
    if (SIMDBPE_LIKELY(n + more <= e->out_cap))
        return SIMDBPE_OK;
    return simdbpe__grow_out(e, n, n + more);
}

/* The encoder's pieces go to the overflow until it holds one a bucket (of
 * its 2^OVERFLOW_BITS); then it copies the model's table. */
#define OVERFLOW_BITS 11

/* Makes room in the piece table: moves to a table of the encoder's own
 * (the model's and the overflow's entries) when the overflow is full,
 * doubles its own table if the budget allows, else leaves it full
 * (tab_room 0). encoder.c. */
void simdbpe__grow_tab(simdbpe_encoder *e);

/* The normal form `form` (SIMDBPE__NORM_*, not NONE) of *text[0..*len)
 * (valid UTF-8): unchanged, or *text and *len set to the normalized copy
 * in e->norm (common/nfc.c); for SIMDBPE__NORM_CHAIN, the model's chain
 * applied (model/normalizer.c, its copy in e->nz_work). */
simdbpe_status simdbpe__nfc(simdbpe_encoder *e, unsigned form, const uint8_t **text, size_t *len);

/* SentencePiece-style models (encode_sp.c): the normalizer's word markers
 * on *text[0..*len) (unchanged, or set to a copy in e->sp_norm), and a
 * normalized stretch's ids appended to e->out after the first *n (`first`:
 * the stretch starts the caller's text). */
simdbpe_status simdbpe__sp_normalize(simdbpe_encoder *e, const uint8_t **text, size_t *len);
simdbpe_status simdbpe__encode_sp(simdbpe_encoder *e, const uint8_t *s, size_t len, int first,
                                  size_t *n);
void simdbpe__sp_cache_free(struct simdbpe__sp_cache *c);

/*
 * The piece path, built from pieces.inc.h for the baseline CPU
 * (pieces.c), and for AVX2 with BMI1 and BMI2 (pieces_avx2.c, x86 builds
 * only), which an encoder uses when its kernel set is the AVX2 one: the
 * same code, with gcc free to use tzcnt, blsr, andn, shlx and
 * three-operand vector instructions.
 */
simdbpe_status simdbpe__encode_pieces(simdbpe_encoder *e, const uint8_t *s, size_t len, size_t *n);
#if defined(SIMDBPE_HAVE_X86_KERNELS)
simdbpe_status simdbpe__encode_pieces_avx2(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                          size_t *n);
#endif

#endif
