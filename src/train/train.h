/*
 * train.h - the trainer's internal pieces (src/train/).
 *
 *   wordtab.c  word -> count hash tables, one per counting thread, merged
 *              into one when counting ends
 *   feed.c     streaming input: batches cut at safe points, split between
 *              threads, validated, pre-tokenized and counted
 *   merge.c    the merge loop: pair table with pair -> words index, max-heap
 *              with lazy re-validation, incremental count updates
 *   output.c   vocab.json / merges.txt / special_tokens, written atomically
 *   trainer.c  the public object: options, lifetime, results
 *
 * Invariants:
 *   - token ids 0..255 are the bytes in GPT-2 order (sorted by the code point
 *     that spells each byte in vocab.json); merged tokens follow in creation
 *     order; specials that are not already tokens come last;
 *   - counts are uint64_t and exact at every step (no stale counts kept
 *     outside the heap, where entries are re-validated when popped).
 */
#ifndef SIMDBPE_TRAIN_INTERNAL_H
#define SIMDBPE_TRAIN_INTERNAL_H

#include <pthread.h>

#include "../common/bytelevel.h"
#include "../common/common.h"
#include "simdbpe_train.h"

struct simdbpe__kernels;

/* ------------------------------------------------------------ wordtab.c */

/*
 * Zeroed memory for the big randomly-accessed tables (word tables, pair
 * table, words). From 2 MiB up it is mapped 2 MiB-aligned and advised as
 * huge pages (Linux THP in "madvise" mode), which removes most page faults
 * and TLB misses; below that it is calloc. Free with the same size.
 */
void *simdbpe__big_calloc(size_t bytes);
void simdbpe__big_free(void *p, size_t bytes);

/*
 * One unique word. Words of up to 16 bytes are kept in the slot itself
 * (k0, k1: the bytes zero-padded, little-endian), so finding one touches
 * one cache line; longer words keep their bytes in the table's arena
 * (k0 = offset). count == 0 marks an empty slot.
 */
typedef struct simdbpe__word_slot {
    uint64_t k0, k1;
    uint64_t count;
    uint32_t len;
    uint32_t hash32;
} simdbpe__word_slot;

#define SIMDBPE__SHORT_WORD 16

typedef struct simdbpe__wordtab {
    simdbpe__word_slot *slots;
    size_t mask; /* capacity - 1, capacity a power of two */
    size_t n;    /* words held */
    uint8_t *arena;
    size_t arena_len, arena_cap;
} simdbpe__wordtab;

int simdbpe__wordtab_init(simdbpe__wordtab *t, size_t capacity);
void simdbpe__wordtab_free(simdbpe__wordtab *t);
/* Adds `count` to word s[0..len). Returns 0, or -1 when out of memory. */
int simdbpe__wordtab_add(simdbpe__wordtab *t, const uint8_t *s, size_t len, uint64_t count);
/* The same for a short word given as its zero-padded bytes. */
int simdbpe__wordtab_add_short(simdbpe__wordtab *t, uint64_t k0, uint64_t k1, uint32_t len,
                               uint64_t count);
/* Adds every word of `src` into `dst`. Returns 0 or -1 (out of memory). */
int simdbpe__wordtab_merge(simdbpe__wordtab *dst, const simdbpe__wordtab *src);
/* The bytes of the word in slot w. */
static inline const uint8_t *simdbpe__word_bytes(const simdbpe__wordtab *t,
                                                 const simdbpe__word_slot *w)
{
    return w->len <= SIMDBPE__SHORT_WORD ? (const uint8_t *)&w->k0 : t->arena + w->k0;
}

/* The hash of a short word (a multiply-xorshift mix of its two words). */
static inline uint64_t simdbpe__short_hash(uint64_t k0, uint64_t k1, uint64_t len)
{
    uint64_t h = ((k0 ^ len) * 0x9E3779B97F4A7C15ULL ^ k1) * 0xC2B2AE3D27D4EB4FULL;
    return h ^ (h >> 29);
}

/* Loads a word of len <= 16 bytes zero-padded into w[0..1]; `room` bytes
 * from s may be read. */
static inline void simdbpe__load_short(const uint8_t *s, size_t len, size_t room, uint64_t w[2])
{
    w[0] = w[1] = 0;
    if (room >= 16) {
        /* Little-endian: the bytes past len are the high bytes; clear them. */
        memcpy(w, s, 16);
        if (len < 8) {
            w[0] &= ((uint64_t)1 << (8 * len)) - 1;
            w[1] = 0;
        } else if (len == 8) {
            w[1] = 0;
        } else if (len < 16) {
            w[1] &= ((uint64_t)1 << (8 * (len - 8))) - 1;
        }
    } else {
        memcpy(w, s, len);
    }
}

/*
 * The hot cache in front of a word table: a direct-mapped table of short
 * words that counts in place; a word it evicts has its count added to the
 * word table. Most pre-tokens are frequent short words, so most counts
 * never leave the cache, and the big table is touched only on misses.
 * A cache has 2^bits slots, bits from SIMDBPE__HOT_MIN_BITS (what a small
 * input needs) up to SIMDBPE__HOT_BITS (a batch of megabytes): the feeder
 * sizes it for the bytes a thread counts at once (feed.c). Which words it
 * holds never changes a count, only where the count is kept meanwhile.
 */
#define SIMDBPE__HOT_MIN_BITS 8
#define SIMDBPE__HOT_BITS 15

typedef struct simdbpe__hot_slot {
    uint64_t k0, k1;
    uint32_t len; /* 0 = empty */
    uint32_t count;
} simdbpe__hot_slot;

/* Moves every count held in the cache of `slots` slots into the table and
 * empties it. Returns 0 or -1 (out of memory). */
int simdbpe__hot_flush(simdbpe__hot_slot *hot, size_t slots, simdbpe__wordtab *t);
/* Evicts slot `h` into the table and puts the word there with count 1. */
int simdbpe__hot_replace(simdbpe__hot_slot *h, simdbpe__wordtab *t, uint64_t k0, uint64_t k1,
                         uint32_t len);

/* Counts one occurrence of word s[0..len) through a cache of 2^hot_bits
 * slots; `room` bytes from s may be read (at least len). Returns 0 or -1
 * (out of memory). */
static inline int simdbpe__count_word(simdbpe__hot_slot *hot, unsigned hot_bits,
                                      simdbpe__wordtab *t, const uint8_t *s, size_t len,
                                      size_t room)
{
    if (len > SIMDBPE__SHORT_WORD)
        return simdbpe__wordtab_add(t, s, len, 1);
    uint64_t w[2];
    simdbpe__load_short(s, len, room, w);
    uint64_t h = simdbpe__short_hash(w[0], w[1], len);
    simdbpe__hot_slot *e = &hot[h >> (64 - hot_bits)];
    if (e->k0 == w[0] && e->k1 == w[1] && e->len == len && e->count < UINT32_MAX) {
        e->count++;
        return 0;
    }
    return simdbpe__hot_replace(e, t, w[0], w[1], (uint32_t)len);
}

/* --------------------------------------------------------------- merge.c */

typedef struct simdbpe__merge_rec {
    uint32_t left, right, id;
    uint64_t count;
} simdbpe__merge_rec;

/* The result of training: tokens (bytes, merged, specials) and merges. */
typedef struct simdbpe__train_result {
    uint8_t *blob;     /* token bytes */
    uint64_t *tok_off; /* n_tokens + 1 offsets into blob */
    uint32_t n_tokens; /* ids with bytes: 256 + merged + specials kept */
    uint32_t n_regular; /* ids below this are bytes and merged tokens */
    simdbpe__merge_rec *merges;
    size_t n_merges;
    uint32_t *special_ids; /* per distinct special, the id it got */
} simdbpe__train_result;

/* The special tokens, deduplicated, in the order given. */
typedef struct simdbpe__train_special {
    uint8_t *text;
    size_t len;
    uint8_t *bl;     /* the bytes the text spells in the byte-level alphabet, */
    size_t bl_len;   /* or NULL if it is not a byte-level string */
} simdbpe__train_special;

typedef struct simdbpe__merge_config {
    uint32_t vocab_size;
    uint64_t min_frequency;
    const simdbpe__train_special *specials;
    size_t n_specials;
    uint64_t bytes_fed;
    uint64_t unique_words; /* all of them, for progress reports */
    simdbpe_train_progress_fn progress;
    void *progress_user;
} simdbpe__merge_config;

/* Runs the merge loop on the words of `words` (which it may empty to save
 * memory) and fills `res`. */
simdbpe_status simdbpe__train_merge(simdbpe__wordtab *words, const simdbpe__merge_config *cfg,
                                    simdbpe__train_result *res, simdbpe_error *err);
void simdbpe__train_result_free(simdbpe__train_result *res);


/* ---------------------------------------------------------------- feed.c */

/* What feeding needs to know from the trainer; lives inside it. */
typedef struct simdbpe__feeder {
    simdbpe_train_mode mode;
    uint8_t pretok; /* simdbpe__pretok_kind */
    const struct simdbpe__pretok_family *family; /* its record */
    const uint8_t *sep; /* documents mode separator, or NULL */
    size_t sep_len;
    simdbpe_utf8_policy errors;
    const struct simdbpe__kernels *k;
    unsigned threads;
    simdbpe_pool *pool;     /* runs the counting tasks (not owned) */
    simdbpe__wordtab *tabs; /* one per thread */
    simdbpe__hot_slot *hot; /* 2^hot_bits slots per thread, in front of tabs */
    unsigned hot_bits;      /* 0 until the first bytes are counted */

    uint8_t *buf; /* bytes of the current stream not yet counted */
    size_t buf_len, buf_cap;
    size_t batch; /* process when buf_len reaches this */
    uint64_t stream_off;  /* stream offset of buf[0] */
    uint64_t stream_line; /* newlines in the stream before buf[0] */
    uint64_t bytes_fed;   /* over all streams */
    uint64_t bytes_counted; /* over all streams (sizes the hot caches) */
    int stream_open;      /* bytes were fed since the last end of stream */
    int sequences;        /* any sequence was counted */

    simdbpe_train_progress_fn progress;
    void *progress_user;
    double last_report;
} simdbpe__feeder;

simdbpe_status simdbpe__feeder_init(simdbpe__feeder *f);
void simdbpe__feeder_free(simdbpe__feeder *f);
simdbpe_status simdbpe__feeder_feed(simdbpe__feeder *f, const uint8_t *data, size_t len,
                                    simdbpe_error *err);
simdbpe_status simdbpe__feeder_end_stream(simdbpe__feeder *f, simdbpe_error *err);
/* Merges the per-thread tables into tabs[0]. */
simdbpe_status simdbpe__feeder_collect(simdbpe__feeder *f, simdbpe_error *err);

/* A monotonic clock in seconds, for progress pacing. */
double simdbpe__train_now(void);

/* ------------------------------------------------------------- trainer.c */

struct simdbpe_trainer {
    simdbpe_train_options opts;  /* strings point into the trainer's copies */
    simdbpe__train_special *specials; /* distinct, in the order given */
    size_t n_specials;
    uint8_t *sep;
    simdbpe__feeder feed;
    simdbpe_pool *own_pool; /* when the options gave none */
    int failed;  /* a feeding error stopped the trainer */
    int trained;
    uint64_t unique_words;
    simdbpe__train_result res;
};

#endif
