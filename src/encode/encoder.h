/*
 * encoder.h - the encoder's state and tables (internal): shared by
 * encoder.c (creating encoders; UTF-8, special tokens) and the piece path
 * (pieces.inc.h), which encodes the pre-tokens of a stretch of text.
 *
 * A piece's ids come from the first of these that has them:
 *   hot tables   per encoder, direct-mapped: pieces of up to 16 bytes of up
 *                to six ids, or whose ids are their bytes'; looked up for
 *                every piece, with no branch (pass 1 of encode_chunk);
 *   warm tables  their second level, lines of two or four entries;
 *   whole-token map  the model's: the piece is one token BPE yields whole;
 *   caches       pieces no hot slot holds: up to 16 bytes and 11 ids, up to
 *                48 bytes and 16 ids (long), up to 1 KB (big, in an arena);
 *   BPE          on the piece, or on its parts between places no merge spans.
 * Every table is bounded: a new entry replaces an old one, and an entry
 * found is the piece's ids (its key is the whole piece: up to 16 bytes as
 * two zero-padded words, longer ones as a hash and the bytes). The lookups
 * past the hot tables are prefetched for all of a chunk's pieces before
 * the first is needed (encode_chunk).
 *
 * Sizes: hot 2 + 0.5 MB, caches 1 + 0.25 + 2.25 MB, warm 1.5 MB at first
 * and 24 MB once filled (simdbpe_encoder_options.cache_mb: 3 to 96 MB).
 * Larger tables make text seen again faster, a fresh encoder's one pass
 * slower (fresh pages) and encoders on several threads compete for the
 * CPU's shared cache (the command-line tool gives each 12 MB when it runs
 * more than one); bench/README.md has the measurements.
 */
#ifndef SIMDBPE_ENCODER_H
#define SIMDBPE_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kernels/kernels.h"
#include "../model/model.h"
#include "../pretok/pretok.h"

#define CACHE_BITS 14
#define CACHE_SLOTS (1u << CACHE_BITS)
#define CACHE_IDS 11
#define CACHE_IN_LONG 0xFF /* a cache slot's n_ids: the ids are in the long cache */

/* Pieces longer than 16 bytes or of more than 11 ids (long words in
 * non-Latin scripts, runs of symbols in code) go to a second cache with
 * two-line entries: the whole key up to 48 bytes, up to 16 ids. A piece
 * of up to 16 bytes is looked up there only if its slot in the first
 * cache says so (CACHE_IN_LONG): the line is not prefetched for such
 * pieces, and reading it on every miss of the first cache showed in
 * profiles of multilingual text. */
#define LONG_BITS 11
#define LONG_KEY 48
#define LONG_IDS 16

typedef struct long_slot {
    uint64_t h; /* the piece hash */
    uint8_t key[LONG_KEY];
    uint32_t ids[LONG_IDS];
    uint8_t len; /* 0 = empty */
    uint8_t n_ids;
    uint8_t used; /* found here since it was put here (see long_put) */
    uint8_t unused[5];
} long_slot;

/* Pieces of 49..BIG_KEY bytes, and pieces pushed out of their long slot
 * after they were found there (see long_put), go to the big cache:
 * direct-mapped slots that give where in an arena the piece's bytes and
 * then its ids are. The arena is filled in order; when the next entry
 * does not fit, every slot is emptied and it is filled again from its
 * start. Such pieces (runs of dashes and table borders in English, long
 * comment rules and runs of symbols in code) would otherwise run BPE
 * again on every pass over a corpus, each call far dearer than a
 * lookup. */
#define BIG_BITS 14
#define BIG_SLOTS ((size_t)1 << BIG_BITS)
#define BIG_KEY 1024
#define BIG_ARENA ((size_t)2 << 20)

typedef struct big_slot {
    uint64_t h;    /* the piece hash */
    uint32_t at;   /* its bytes at arena[at], its ids after them (4-byte aligned) */
    uint16_t len;  /* 0 = empty */
    uint16_t n_ids;
} big_slot;

/* The hot tables: pieces of 1..8 bytes (keyed by their inverted bytes,
 * see hot_lo; 16 bytes a slot) and of 9..16 bytes (two words, 32 bytes a
 * slot) that encode to up to three ids, in 2 MB + 512 KB. A larger table
 * misses less and a smaller one stays nearer the core; these sizes were
 * the fastest measured (bench/README.md lists the others). Their value
 * packs the ids, the length (for moving entries; lookups need only the
 * key) and the number of ids:
 * val = id0 | id1 << B | id2 << 2B | (len - 1) << 54 | more << 58 | n_ids << 62,
 * B the id width of the encoder's piece path: 16 for a vocabulary of up
 * to 2^16 ids, as GPT-2's (the ids go out with one vector store,
 * emit_hot); 18 for larger ones (cl100k, o200k, Llama-3: two stores),
 * whose ids at or above 2^16 would otherwise keep their pieces out of
 * these tables. A piece with an id that does not fit is not kept here.
 * Nearly every piece of text is served from here.
 *
 * The 32-byte slots also hold pieces of 4..6 ids, of any length up to 16
 * (a piece of up to 8 bytes with hi = 0): `more` is set, n_ids is 3 and
 * the slot's fourth word holds the rest, packed like a value without a
 * length. A fifth of multilingual pieces (a short Cyrillic or CJK word is
 * 4-6 byte-level ids) and some runs of symbols in code are such pieces.
 *
 * A piece of more ids whose ids are those of its bytes, one each (no
 * merge applies anywhere in it: a newline and the next line's
 * indentation, 230 K pieces a pass over the code corpus), has a value
 * that says so (HOT_BYTES), in the table of its length: its ids are
 * written from its bytes. */
#define HOT_BITS 17
#define HOT16_BITS 14
#define HOT_LEN 8
#define HOT_LEN_SHIFT 54
#define HOT_MORE_BIT 58
#define HOT_MORE ((uint64_t)1 << HOT_MORE_BIT) /* the ids go on in the slot's `more` word */
/* With HOT_MORE and n_ids 0: the piece's ids are its bytes' ids (see hot_val) */
#define HOT_BYTES ((uint64_t)1 << 59)
#define HOT_N_SHIFT 62

/* The warm tables: 2^b entries of 16 bytes in lines of 4 and 2^b of 32
 * bytes in lines of 2, 48 * 2^b bytes (see the top of the file). b is
 * the encoder's warm_bits: WARM_BITS (8 + 16 MB) by default, 16..21
 * (3..96 MB) as simdbpe_encoder_options.cache_mb asks. An encoder starts
 * with b = WARM_START_BITS (0.5 + 1 MB) and moves to the full tables once
 * it has put as many entries in them as they hold: a short job does not
 * pay for faulting in pages it barely uses. */
#define WARM_BITS 19
#define WARM_MIN_BITS 16
#define WARM_MAX_BITS 21
#define WARM_START_BITS 15
#define WARM_WAYS 4
#define WARM16_WAYS 2

/* The most pieces that end in one chunk of the pre-tokenizer (one per
 * byte). */
#define MAX_PIECES (SIMDBPE__PRETOK_CHUNK * 64)

/* The whole-token map answers the general path's pieces while the hot
 * and warm tables are filling: most pieces are tokens. Once they are
 * full, the warm tables answer nearly all, and the few that get past
 * them (words seen once, parts of long words) are seldom tokens: a
 * second multilingual pass found 300 of its 900 K general-path pieces in
 * the map, English 1.5 K of 900 K. Preparing every piece's lookup (a
 * hash, a pilot, a slot: prefetched in two steps) then costs more than
 * it saves, so the map is only used while more than one general-path
 * piece in WHOLE_SHARE gets past the warm tables and encodes to one id
 * (what the map would answer: it holds exactly the tokens BPE yields
 * whole), counted over windows of WHOLE_WINDOW pieces. Ids do not
 * change: a piece not looked up in the map goes to the caches and BPE.
 * While the map is not used, the parts of cut pieces are looked up in
 * the warm tables too when the hot ones miss, and put there (encode_part):
 * a second multilingual pass ran BPE on 20 K parts that had lost their
 * hot slot. While the tables fill, that lookup would miss and cost a
 * pass over new text more than it saves. */
#define WHOLE_WINDOW 4096
#define WHOLE_SHARE 128

typedef struct hot_slot {
    uint64_t key, val; /* val 0 = empty */
} hot_slot;

typedef struct hot16_slot {
    uint64_t lo, hi, val, more;
} hot16_slot;

/* One cache line. */
typedef struct cache_slot {
    uint64_t lo, hi; /* the piece, zero-padded */
    uint32_t ids[CACHE_IDS];
    uint8_t len; /* 0 = empty */
    uint8_t n_ids;
    uint16_t unused;
} cache_slot;

/* A piece that takes the general path: its key (first 16 bytes as two
 * zero-padded words), its hash and the whole-token slot it would be in. */
typedef struct piece_key {
    uint64_t lo, hi, h;
    const simdbpe__whole_slot *slot; /* NULL if the model has no whole map */
    size_t a, b;                     /* the piece is s[a..b) */
    size_t i;                        /* its place among the chunk's pieces */
} piece_key;

/* The arrays of encode_chunk, in the encoder: on the stack they made an
 * 84 KB frame, too close to the 128 KB of some C libraries' threads. */
struct chunk_work {
    uint64_t val[MAX_PIECES];    /* pass-1 value of each piece, 0 = general path */
    uint64_t more[MAX_PIECES];   /* its slot's `more` word, where val has HOT_MORE */
    size_t ends[MAX_PIECES];     /* where it ends */
    uint16_t missed[MAX_PIECES]; /* the pieces pass 1 did not find */
    uint16_t by_len[3][MAX_PIECES]; /* those of up to 8 bytes, 9-16, longer */
    piece_key keys[MAX_PIECES];  /* of the general-path pieces, in order */
};

/* Encodes the pre-tokens of s[0..len) (no special tokens), appending
 * their ids to e->out after the first *n; see pieces.inc.h. */
typedef simdbpe_status (*simdbpe__pieces_fn)(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                             size_t *n);

struct simdbpe_encoder {
    const simdbpe_model *m;
    const simdbpe__kernels *k;
    uint32_t *out;
    size_t out_cap;
    void *out_map; /* out's own mapping once it is large, else NULL: out is in the tables */
    size_t out_map_len;
    bool out_borrowed; /* out is the caller's malloc'd array (simdbpe_encode_append) */
    uint8_t *clean; /* replace mode: the repaired text */
    size_t clean_cap;
    uint8_t *norm; /* the normalized stretch (NFC models; common/nfc.c) */
    size_t norm_cap;
    simdbpe__bpe_scratch scratch;
    cache_slot *cache;
    long_slot *long_cache;
    big_slot *big;
    uint8_t *big_arena;
    size_t big_used; /* bytes of the arena in use */
    size_t big_resets; /* times it was emptied (for tests) */
    hot_slot *hot;
    hot16_slot *hot16;
    simdbpe__byte_pair *byte_pairs; /* BPE's table of them (model.h) */
    void *tables; /* the mapping holding the seven above */
    size_t tables_len;
    /* The warm tables, in a mapping of their own (warm_map) */
    hot_slot *warm;
    hot16_slot *warm16;
    size_t warm_lines, warm16_lines; /* lines in each, powers of two */
    size_t warm_room; /* entries to put before the tables grow; SIZE_MAX: they have */
    unsigned warm_bits; /* the full tables' b (see WARM_BITS) */
    void *warm_map;
    size_t warm_map_len;
    struct chunk_work *work; /* encode_chunk's arrays (88 KB, in the tables: not on the stack) */
    /* Whether the general path looks pieces up in the whole-token map
     * (see WHOLE_WINDOW), and its count of pieces and of pieces of one id
     * in the current window. */
    bool whole_ahead;
    uint32_t window_pieces, window_ones;
    /* the piece path built for the encoder's kernel set (see below) */
    simdbpe__pieces_fn encode_pieces;
};

/* Gives e->out room for `need` ids, keeping the first n (those written:
 * n may be past the old room, where the piece path writes aside). */
simdbpe_status simdbpe__grow_out(simdbpe_encoder *e, size_t n, size_t need);

/* Makes room for `more` ids after the first `n`. */
static inline simdbpe_status reserve_out(simdbpe_encoder *e, size_t n, size_t more)
{
    if (SIMDBPE_LIKELY(n + more <= e->out_cap))
        return SIMDBPE_OK;
    return simdbpe__grow_out(e, n, n + more);
}

/* The NFC of *text[0..*len) (valid UTF-8): unchanged, or *text and *len
 * set to the normalized copy in e->norm (common/nfc.c). */
simdbpe_status simdbpe__nfc(simdbpe_encoder *e, const uint8_t **text, size_t *len);

/* Maps warm tables of 2^bits entries of each size (zeroed) and points e
 * at them; false if out of memory (e is left as it was). */
bool simdbpe__map_warm(simdbpe_encoder *e, unsigned bits);

/* Unmaps a region of simdbpe__map_warm's (or the encoder's other tables). */
void simdbpe__unmap_tables(void *base, size_t mapped);

/*
 * The piece path, built from pieces.inc.h for the baseline CPU
 * (pieces.c), and for AVX2 with BMI1 and BMI2 (pieces_avx2.c, x86 builds
 * only), which an encoder uses when its kernel set is the AVX2 one: the
 * same code, with gcc free to use tzcnt, blsr, andn, shlx and three-operand
 * vector instructions (fewer instructions a piece); and each once more
 * with 18-bit ids in the hot values (_wide), for vocabularies of more than
 * 2^16 ids.
 */
simdbpe_status simdbpe__encode_pieces(simdbpe_encoder *e, const uint8_t *s, size_t len, size_t *n);
simdbpe_status simdbpe__encode_pieces_wide(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                          size_t *n);
#if defined(SIMDBPE_HAVE_X86_KERNELS)
simdbpe_status simdbpe__encode_pieces_avx2(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                          size_t *n);
simdbpe_status simdbpe__encode_pieces_wide_avx2(simdbpe_encoder *e, const uint8_t *s, size_t len,
                                               size_t *n);
#endif

#endif
