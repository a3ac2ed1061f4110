/*
 * loader.h - building models from text formats (internal): what the
 * loaders of vocab.json + merges.txt (load.c, vocab.c), tokenizer.json
 * (load_hf.c) and .tiktoken files (load_tiktoken.c) share with the builder
 * (build.c).
 *
 * Every loader turns its format into a build spec (the tokens as a list
 * of strings with ids, the added tokens, how to read the merges, the
 * pre-tokenizer and flags) and calls simdbpe__build, which checks it,
 * builds the tables and returns the model as a compiled image. Nothing is
 * half-loaded: on any error everything is freed and the error names the
 * file, key or line.
 */
#ifndef SIMDBPE_LOADER_H
#define SIMDBPE_LOADER_H

#include <jansson.h>

#include "model.h"
#include "normalizer.h"

/* The largest id + 1 any loader accepts (dense per-id arrays). A test
 * builds load_hf.c with a small one to reach its error paths. */
#ifndef MAX_VOCAB_ID
#define MAX_VOCAB_ID (1u << 24)
#endif

/* The slots of an open-addressing table for n keys: a power of two, at
 * least 2n (and 16). */
static inline uint64_t simdbpe__table_size_for(uint64_t n)
{
    uint64_t size = 16;
    while (size < n * 2)
        size *= 2;
    return size;
}

typedef struct pending_merge {
    uint32_t left, right, id;
} pending_merge;

/* every token's bytes -> id while loading (resolving merges) */
typedef struct bytes_slot {
    uint32_t id; /* SIMDBPE__NO_ID when empty */
    uint32_t hash32;
} bytes_slot;

typedef struct loader {
    simdbpe_model *m;
    /* every token's bytes -> id (added tokens excluded), for resolving merges */
    bytes_slot *all;
    uint64_t all_mask;
    pending_merge *merges;
    size_t n_merges, cap_merges;
} loader;

/* An added token as a loader reads it. */
typedef struct special_text {
    const uint8_t *s; /* the text it is matched by (and found by in vocab.json) */
    size_t len;
    uint32_t id;    /* given (tokenizer.json, .tiktoken) or found by text (vocab.json) */
    uint32_t flags; /* SIMDBPE__ADDED_*, and ADDED_IN_VOCAB */
} special_text;

/* A loader's flag of an added token (not kept in the model): it is also a
 * token of the BPE vocabulary (tokenizer.json's model.vocab), so a merge
 * may make it, as HF's BPE does; the other added tokens are their text
 * only. */
#define ADDED_IN_VOCAB 0x100u

/* A vocabulary as a list of (key, id): the keys' UTF-8 bytes back to back.
 * Keys are byte-level strings, except those of added tokens (their text). */
typedef struct vocab_list {
    char *keys;
    size_t *key_off; /* count + 1 */
    uint32_t *ids;
    size_t count;
    size_t cap_ids, cap_keys; /* room in ids (key_off: one more) and keys; 0: exact */
} vocab_list;

void simdbpe__vocab_list_free(vocab_list *v);

/* The vocabulary object `root` as a list; `len` bounds the keys' total
 * size; `what` names it in errors ("vocab.json"). */
simdbpe_status simdbpe__vocab_from_json(const json_t *root, size_t len, const char *what,
                                        vocab_list *v, simdbpe_error *err);

/* Appends (key, id) to a list (empty, or from simdbpe__vocab_from_json).
 * Returns SIMDBPE_OK or SIMDBPE_ERR_NOMEM. */
simdbpe_status simdbpe__vocab_append(vocab_list *v, const char *key, size_t klen, uint32_t id);

/* The first byte whose byte-level character is no key of `v`, or -1. */
int simdbpe__vocab_missing_byte(const vocab_list *v);

/* vocab.json's text (after a byte order mark, if any) as a list; errors
 * name "vocab.json" and the line and column. */
simdbpe_status simdbpe__vocab_parse(const char *json, size_t len, vocab_list *v,
                                    simdbpe_error *err);

typedef struct simdbpe__build_spec {
    const char *vocab_name; /* names the vocabulary's source in errors */
    vocab_list vocab;       /* taken over (freed) by simdbpe__build */
    special_text *added;    /* not taken over */
    size_t n_added;
    int added_required; /* an added token without an id is an error (else skipped) */
    int added_in_vocab; /* every added token is a vocabulary token (vocab.json's) */
    /* Reads the merges in rank order with simdbpe__loader_merge*: called
     * once the tokens and the bytes -> id table are in place. */
    simdbpe_status (*merges)(loader *ld, void *ctx, simdbpe_error *err);
    void *merges_ctx;
    uint8_t pretok, normalizer, ignore_merges;
    /* SentencePiece-style (model.h's SIMDBPE__SP_*): tokens and merges are
     * their literal strings, not byte-level ones */
    uint32_t sp;
    uint8_t sp_strip;
    const char *unk; /* the unk_token's text, or NULL */
    /* The generic family's Splits as the image stores them (regex.h); not
     * taken over. */
    const uint8_t *splits;
    size_t splits_len;
    /* normalizer SIMDBPE__NORM_CHAIN: the chain's image (normalizer.h);
     * not taken over. */
    const uint8_t *nz_image;
    size_t nz_len;
    uint8_t n_prefix, n_suffix;
    uint32_t prefix[SIMDBPE__MAX_AFFIX], suffix[SIMDBPE__MAX_AFFIX];
    char *notice; /* malloc'd, for the model (simdbpe_model_notice); taken over */
} simdbpe__build_spec;

simdbpe_status simdbpe__build(simdbpe__build_spec *spec, simdbpe_model **out,
                              simdbpe_error *err);

/* The text an added token with "normalized": true is matched by: its
 * content under the model's whole normalizer (the chain nz if not NULL,
 * else the Unicode form, then a SentencePiece-style model's word markers),
 * as HF builds its trie of them. *text, *len unchanged, or set to a
 * malloc'd copy in *out (NULL otherwise; the caller frees it). SIMDBPE_OK,
 * SIMDBPE_ERR_NOMEM, or SIMDBPE_ERR_TOO_LARGE (a Replace's regex gave
 * up). */
simdbpe_status simdbpe__added_normal_form(uint8_t normalizer, const simdbpe__normalizer *nz,
                                          uint32_t sp, uint8_t **out, const uint8_t **text,
                                          size_t *len);

/*
 * The next merge, of the byte-level strings a and b. `what`, `line` and
 * `close` say where it was read ("merges.txt line " 3 "", "tokenizer.json:
 * model.merges[" 2 "]"), `at` its byte offset or SIMDBPE_NO_POSITION, and
 * `vocab_name` the vocabulary's source, in errors.
 */
simdbpe_status simdbpe__loader_add_merge(loader *ld, const uint8_t *a, size_t alen,
                                         const uint8_t *b, size_t blen, const char *what,
                                         uint64_t line, const char *close, uint64_t at,
                                         const char *vocab_name, simdbpe_error *err);
/* The next merge (rank = the number added before it), by ids. */
simdbpe_status simdbpe__loader_merge(loader *ld, uint32_t left, uint32_t right, uint32_t id,
                                     simdbpe_error *err);
/* The next merge, by its two byte-level strings; errors say "WHAT INDEX". */
simdbpe_status simdbpe__loader_merge_strings(loader *ld, const uint8_t *a, size_t alen,
                                             const uint8_t *b, size_t blen, const char *what,
                                             uint64_t index, simdbpe_error *err);
/* The id of the (non-added) token whose bytes are s[0..len), or
 * SIMDBPE__NO_ID. */
uint32_t simdbpe__loader_find(const loader *ld, const uint8_t *s, size_t len);

#endif
