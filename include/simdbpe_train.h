/*
 * simdbpe_train.h - training new byte-level BPE vocabularies (GPT-2 layout).
 *
 * Kept apart from simdbpe.h (as zstd keeps its dictionary trainer in
 * zdict.h): programs that only encode never see it. It depends on simdbpe.h
 * for simdbpe_status, simdbpe_error and simdbpe_utf8_policy only.
 *
 * What the trainer computes is what HF tokenizers' BpeTrainer computes for
 * byte-level BPE with the GPT-2 pre-tokenizer (add_prefix_space=false):
 *
 *   - the words are the GPT-2 pre-tokens of every sequence, each unique
 *     word counted once with its frequency;
 *   - the alphabet is all 256 bytes; a word starts as one symbol per byte;
 *   - pair counts include overlapping occurrences ("aaa" holds (a,a) twice)
 *     and are exact 64-bit counts;
 *   - the next merge is the pair with the highest count; on equal counts the
 *     smallest (left id, right id), ids being GPT-2's: 0-255 the bytes in
 *     GPT-2 order, then merged tokens in the order they were made;
 *   - a merge whose result already is a token reuses that token's id (with
 *     exact counts this happens only when a special token is spelled like
 *     the merged token: merges alone never make the same token twice);
 *   - training stops when the vocabulary (bytes + merged tokens + special
 *     tokens) reaches vocab_size, when no pair is left, or when the best
 *     pair occurs fewer than min_frequency times;
 *   - no token is longer than 1024 bytes, the limit simdbpe_model_open()
 *     enforces (one constant for both, SIMDBPE__MAX_TOKEN_BYTES): a pair
 *     whose merge would be longer is never chosen, so every trained model
 *     loads (HF's trainer has no default limit and would merge on).
 *
 * Use:
 *
 *   simdbpe_train_options o;
 *   simdbpe_train_options_init(&o);
 *   o.vocab_size = 30000;
 *   simdbpe_trainer *t;
 *   simdbpe_trainer_new(&o, &t, &err);
 *   for each file:  simdbpe_trainer_feed(t, chunk, len, &err) ...
 *                   simdbpe_trainer_end_stream(t, &err);
 *   simdbpe_trainer_train(t, &err);
 *   simdbpe_trainer_save(t, "out-dir", &err);
 *   simdbpe_trainer_free(t);
 *
 * A trainer is one object used by one thread at a time; it runs its own
 * worker threads inside feed() and train(). Memory is bounded by the table
 * of unique words (plus one input batch per thread), never by the corpus.
 */
#ifndef SIMDBPE_TRAIN_H
#define SIMDBPE_TRAIN_H

#include "simdbpe.h"
#include "simdbpe_batch.h" /* simdbpe_pool */

#ifdef __cplusplus
extern "C" {
#endif

/* How fed text is cut into the sequences the pre-tokenizer sees. */
typedef enum simdbpe_train_mode {
    /* Each line, with its '\n', is a sequence (HF's train-from-files). */
    SIMDBPE_TRAIN_LINES = 0,
    /* Each stream is one document, or, with a separator, each stretch
     * between separators (the separator belongs to no document). */
    SIMDBPE_TRAIN_DOCUMENTS = 1
} simdbpe_train_mode;

typedef enum simdbpe_train_stage {
    SIMDBPE_TRAIN_COUNTING = 0, /* pre-tokenizing and counting words */
    SIMDBPE_TRAIN_MERGING = 1   /* computing merges */
} simdbpe_train_stage;

/* A snapshot handed to the progress callback. */
typedef struct simdbpe_train_progress {
    simdbpe_train_stage stage;
    uint64_t bytes;         /* bytes fed so far (all streams) */
    uint64_t unique_words;  /* merging: unique words in the corpus */
    uint64_t merges_done;   /* merging: merges made so far */
    uint64_t merges_target; /* merging: the most merges vocab_size allows */
    uint64_t last_count;    /* merging: the count of the latest merge */
} simdbpe_train_progress;

/* Called from the thread that calls feed() / train(), a few times a
 * second at most; it must not call back into the trainer. */
typedef void (*simdbpe_train_progress_fn)(const simdbpe_train_progress *p, void *user);

typedef struct simdbpe_train_options {
    uint32_t vocab_size;      /* every token counts: 256 bytes + merged + specials */
    uint64_t min_frequency;   /* stop when the best pair occurs fewer times; 0 = 1 */
    const char *const *specials; /* special tokens (UTF-8 text, no '\n'); may be NULL */
    size_t n_specials;
    simdbpe_train_mode mode;
    const char *doc_separator; /* documents mode: separator bytes, or NULL */
    size_t doc_separator_len;
    unsigned threads;          /* worker threads; 0 = one per online CPU */
    /* A pool to count words on (simdbpe_batch.h), e.g. the one the
     * program encodes on; it must outlive the trainer, and `threads` is
     * then ignored. NULL: the trainer starts its own. */
    simdbpe_pool *pool;
    simdbpe_utf8_policy errors; /* strict: invalid UTF-8 fails; replace: U+FFFD */
    simdbpe_train_progress_fn progress; /* may be NULL */
    void *progress_user;
    /* The pre-tokenizer family the words come from: "gpt2" (NULL),
     * "cl100k" (Llama-3), "qwen2", "o200k", "deepseek_v3", "tekken" or
     * "kimi". No normalizer is applied. */
    const char *pre_tokenizer;
} simdbpe_train_options;

/* Defaults: vocab_size 30000, no minimum frequency, no specials, lines
 * mode, no separator, one thread per CPU, strict UTF-8, no progress. */
SIMDBPE_API void simdbpe_train_options_init(simdbpe_train_options *opts);

typedef struct simdbpe_trainer simdbpe_trainer;

/*
 * A trainer with a copy of `opts` (strings are copied too). Fails with
 * SIMDBPE_ERR_INVALID_ARG (and a message) when vocab_size is below 256 +
 * the number of distinct special tokens, or a special token is empty, has
 * '\n' or is not valid UTF-8.
 */
SIMDBPE_API simdbpe_status simdbpe_trainer_new(const simdbpe_train_options *opts,
                                               simdbpe_trainer **out, simdbpe_error *err);
SIMDBPE_API void simdbpe_trainer_free(simdbpe_trainer *t);

/*
 * Feeds the next `len` bytes of the current stream (typically a file). The
 * bytes may be cut anywhere, even inside a UTF-8 character; nothing needs to
 * be kept by the caller. On SIMDBPE_ERR_INVALID_UTF8 (strict mode),
 * err->byte_offset is the offset of the first invalid byte from the start
 * of the stream and err->line its 1-based line. After an error the trainer
 * accepts nothing more but can still be freed.
 */
SIMDBPE_API simdbpe_status simdbpe_trainer_feed(simdbpe_trainer *t, const void *data, size_t len,
                                                simdbpe_error *err);

/* Ends the current stream: its last line or document is complete. The next
 * feed() starts a new stream at offset 0, line 1. */
SIMDBPE_API simdbpe_status simdbpe_trainer_end_stream(simdbpe_trainer *t, simdbpe_error *err);

/*
 * Computes the merges (ends the current stream first). Fails with
 * SIMDBPE_ERR_INVALID_ARG ("empty corpus") if no text was fed. Called once.
 */
SIMDBPE_API simdbpe_status simdbpe_trainer_train(simdbpe_trainer *t, simdbpe_error *err);

/* ---- results, valid after simdbpe_trainer_train() ---- */

/* Number of ids: 256 + merged tokens + specials that are not already tokens. */
SIMDBPE_API uint32_t simdbpe_trainer_vocab_size(const simdbpe_trainer *t);
/* Number of merges (one more line each in merges.txt). */
SIMDBPE_API size_t simdbpe_trainer_merge_count(const simdbpe_trainer *t);
/* Unique words counted (after train()). */
SIMDBPE_API uint64_t simdbpe_trainer_unique_words(const simdbpe_trainer *t);

/* The i-th merge: its pair, the id of the token it makes and the pair's
 * count when it was chosen. */
SIMDBPE_API simdbpe_status simdbpe_trainer_merge_at(const simdbpe_trainer *t, size_t i,
                                                    uint32_t *left, uint32_t *right, uint32_t *id,
                                                    uint64_t *count);

/* The bytes of token `id` (for a special token, its text). */
SIMDBPE_API simdbpe_status simdbpe_trainer_token_bytes(const simdbpe_trainer *t, uint32_t id,
                                                       const uint8_t **bytes, size_t *len);

/*
 * The files, in memory: vocab.json (compact JSON object, byte-level keys;
 * integer-like keys first in numeric order, then the others in id order,
 * as JavaScript's JSON.stringify writes an object filled in id order) and
 * merges.txt ("#version: 0.2" then "left right" per merge). Writes into
 * `out` (capacity `cap`) and the size into *out_len; if `cap` is too small
 * returns SIMDBPE_ERR_BUFFER_TOO_SMALL with the size needed in *out_len.
 */
SIMDBPE_API simdbpe_status simdbpe_trainer_vocab_json(const simdbpe_trainer *t, char *out,
                                                      size_t cap, size_t *out_len);
SIMDBPE_API simdbpe_status simdbpe_trainer_merges_txt(const simdbpe_trainer *t, char *out,
                                                      size_t cap, size_t *out_len);

/* The trained vocabulary as an HF tokenizers `tokenizer.json`: the same
 * vocabulary and merges, the trainer's pre-tokenizer (a ByteLevel with
 * GPT-2's regex, or the family's Split patterns then ByteLevel), the
 * specials as special added tokens; HF tokenizers loads it and encodes as
 * simdbpe does. Same buffer contract as simdbpe_trainer_vocab_json. */
SIMDBPE_API simdbpe_status simdbpe_trainer_tokenizer_json(const simdbpe_trainer *t, char *out,
                                                          size_t cap, size_t *out_len);

/*
 * Writes DIR/vocab.json, DIR/merges.txt, DIR/tokenizer.json and, when
 * there are special tokens, DIR/special_tokens (one per line), all under
 * temporary names first, then renamed into place, so that a failed write
 * (a full disk) leaves an older model in DIR as it was; an older
 * special_tokens is removed when there are none. Creates DIR if it does
 * not exist (not its parents). The result loads with
 * simdbpe_model_open(DIR).
 */
SIMDBPE_API simdbpe_status simdbpe_trainer_save(const simdbpe_trainer *t, const char *dir,
                                                simdbpe_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SIMDBPE_TRAIN_H */
