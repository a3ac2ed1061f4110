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

#include "../common/common.h"
#include "simdbpe_train.h"

struct simdbpe__kernels;

/* ------------------------------------------------------------ wordtab.c */

/* One unique word: its bytes are arena[off .. off+len). count == 0 marks
 * an empty slot. */
typedef struct simdbpe__word_slot {
    uint64_t count;
    uint64_t off;
    uint32_t len;
    uint32_t hash32;
} simdbpe__word_slot;

typedef struct simdbpe__wordtab {
    simdbpe__word_slot *slots;
    size_t mask; /* capacity - 1, capacity a power of two */
    size_t n;    /* words held */
    uint8_t *arena;
    size_t arena_len, arena_cap;
} simdbpe__wordtab;

int simdbpe__wordtab_init(simdbpe__wordtab *t, size_t capacity);
void simdbpe__wordtab_free(simdbpe__wordtab *t);
/* Adds `count` to word s[0..len) (hash = simdbpe__hash_bytes(s, len)).
 * Returns 0, or -1 when out of memory. */
int simdbpe__wordtab_add(simdbpe__wordtab *t, const uint8_t *s, size_t len, uint64_t hash,
                         uint64_t count);
/* Adds every word of `src` into `dst`. Returns 0 or -1 (out of memory). */
int simdbpe__wordtab_merge(simdbpe__wordtab *dst, const simdbpe__wordtab *src);

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
    simdbpe_train_progress_fn progress;
    void *progress_user;
} simdbpe__merge_config;

/* Runs the merge loop on the words of `words` (which it may empty to save
 * memory) and fills `res`. */
simdbpe_status simdbpe__train_merge(simdbpe__wordtab *words, const simdbpe__merge_config *cfg,
                                    simdbpe__train_result *res, simdbpe_error *err);
void simdbpe__train_result_free(simdbpe__train_result *res);

/* The GPT-2 id of byte b (0..255) and its inverse. */
uint32_t simdbpe__train_byte_id(uint8_t b);
uint8_t simdbpe__train_id_byte(uint32_t id);

/* ---------------------------------------------------------------- feed.c */

/* What feeding needs to know from the trainer; lives inside it. */
typedef struct simdbpe__feeder {
    simdbpe_train_mode mode;
    const uint8_t *sep; /* documents mode separator, or NULL */
    size_t sep_len;
    simdbpe_utf8_policy errors;
    const struct simdbpe__kernels *k;
    unsigned threads;
    simdbpe__wordtab *tabs; /* one per thread */

    uint8_t *buf; /* bytes of the current stream not yet counted */
    size_t buf_len, buf_cap;
    size_t batch; /* process when buf_len reaches this */
    uint64_t stream_off;  /* stream offset of buf[0] */
    uint64_t stream_line; /* newlines in the stream before buf[0] */
    uint64_t bytes_fed;   /* over all streams */
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
    int failed;  /* a feeding error stopped the trainer */
    int trained;
    uint64_t unique_words;
    simdbpe__train_result res;
};

/* -------------------------------------------------------------- output.c */

/* The byte-level spelling of byte b as UTF-8 (1 or 2 bytes) in out[0..]. */
size_t simdbpe__bytelevel_utf8(uint8_t b, uint8_t out[2]);

#endif
