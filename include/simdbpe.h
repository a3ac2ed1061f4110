/*
 * simdbpe.h - the public API of simdbpe, an exact byte-level BPE encoder.
 *
 * simdbpe turns UTF-8 text into token ids exactly as HF `tokenizers` (GPT-2
 * `tokenizer.json` semantics) and tiktoken `gpt2` do, and turns ids back
 * into bytes.
 *
 * Objects:
 *   simdbpe_model    immutable once loaded; safe to share between threads.
 *   simdbpe_encoder  per-thread scratch (pre-token cache, merge heap, output
 *                    buffer) bound to one model; never share one between
 *                    threads.
 *
 * Conventions:
 *   - Every function that can fail returns a simdbpe_status; SIMDBPE_OK is 0.
 *   - Results are written through out-parameters.
 *   - A simdbpe_error (optional, may be NULL) receives where the failure is
 *     (byte offset, line, index) and a one-line message.
 *   - The library never prints, never exits and never aborts on bad input.
 *   - *_free(NULL) is a no-op.
 */
#ifndef SIMDBPE_H
#define SIMDBPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version, defined here only: CMake and python/setup.py read these
 * three lines. */
#define SIMDBPE_VERSION_MAJOR 0
#define SIMDBPE_VERSION_MINOR 1
#define SIMDBPE_VERSION_PATCH 0
#define SIMDBPE__STRINGIFY(x) #x
#define SIMDBPE__VERSION_TEXT(a, b, c) \
    SIMDBPE__STRINGIFY(a) "." SIMDBPE__STRINGIFY(b) "." SIMDBPE__STRINGIFY(c)
#define SIMDBPE_VERSION_STRING \
    SIMDBPE__VERSION_TEXT(SIMDBPE_VERSION_MAJOR, SIMDBPE_VERSION_MINOR, SIMDBPE_VERSION_PATCH)

/* Marks the functions of the public API: the only symbols the shared
 * library exports (the library is built with hidden visibility). */
#ifndef SIMDBPE_API
#if defined(__GNUC__) || defined(__clang__)
#define SIMDBPE_API __attribute__((visibility("default")))
#else
#define SIMDBPE_API
#endif
#endif

/* Returns SIMDBPE_VERSION_STRING of the library actually linked. */
SIMDBPE_API const char *simdbpe_version(void);

/* Releases memory the library handed to the caller (batch ids and offsets,
 * a merge's message); NULL is a no-op. */
SIMDBPE_API void simdbpe_free(void *p);

/*
 * Status codes, generated from one list so the enum, simdbpe_strerror() and
 * simdbpe_status_name() cannot drift apart. Values are explicit and are
 * never renumbered.
 */
#define SIMDBPE_STATUS_LIST(X)                                                 \
    X(OK, 0, "success")                                                        \
    X(ERR_NOMEM, 1, "out of memory")                                           \
    X(ERR_INVALID_ARG, 2, "invalid argument")                                  \
    X(ERR_IO, 3, "cannot read or write a file")                                \
    X(ERR_INVALID_UTF8, 4, "invalid UTF-8 in input text")                      \
    X(ERR_SPECIAL_TOKEN, 5, "disallowed special token in input text")          \
    X(ERR_TOKEN_ID, 6, "token id out of range")                                \
    X(ERR_BUFFER_TOO_SMALL, 7, "output buffer too small")                      \
    X(ERR_VOCAB, 8, "malformed vocabulary (vocab.json)")                       \
    X(ERR_MERGES, 9, "malformed merges (merges.txt)")                          \
    X(ERR_SPECIALS, 10, "malformed special tokens list")                       \
    X(ERR_MODEL_FILE, 11, "malformed or corrupted compiled model file")        \
    X(ERR_TOO_LARGE, 12, "input exceeds an internal size limit")               \
    X(ERR_UNSUPPORTED, 13, "unsupported model or option")                      \
    X(ERR_CANCELLED, 14, "cancelled by the caller")

typedef enum simdbpe_status {
#define SIMDBPE__STATUS_ENUM(name, value, text) SIMDBPE_##name = value,
    SIMDBPE_STATUS_LIST(SIMDBPE__STATUS_ENUM)
#undef SIMDBPE__STATUS_ENUM
} simdbpe_status;

/* A static, human-readable description of a status ("invalid UTF-8 ..."). */
SIMDBPE_API const char *simdbpe_strerror(simdbpe_status status);
/* The status' name without prefix ("ERR_INVALID_UTF8"). */
SIMDBPE_API const char *simdbpe_status_name(simdbpe_status status);

#define SIMDBPE_NO_POSITION UINT64_MAX

/*
 * Where a failure happened. Fields that do not apply are SIMDBPE_NO_POSITION
 * (byte_offset, index) or 0 (line). `message` is a complete sentence-like
 * line such as "merges.txt line 12: token \"Ġx\" is not in vocab.json".
 */
typedef struct simdbpe_error {
    simdbpe_status status;
    uint64_t byte_offset; /* into the input text or the file being parsed */
    uint64_t line;        /* 1-based line of the file being parsed */
    uint64_t index;       /* e.g. the position of a bad id in an id array */
    char message[256];
} simdbpe_error;

/* ------------------------------------------------------------------ model */

typedef struct simdbpe_model simdbpe_model;

/* The GPT-2 model embedded in the library (no files needed). */
SIMDBPE_API simdbpe_status simdbpe_model_load_gpt2(simdbpe_model **out, simdbpe_error *err);

/*
 * A model from the contents of vocab.json and merges.txt (GPT-2 layout: keys
 * in the byte-level alphabet; merges.txt lines "left right", an optional
 * first line "#version: ..."). Token ids come from vocab.json and merge ranks
 * from the line order of merges.txt, so ids need not be 256 + rank.
 *
 * `specials` is the text of a special-token list (one token per line, the
 * literal text of the token; each must be in vocab.json) or NULL. With NULL,
 * "<|endoftext|>" is the special token if vocab.json has it.
 */
SIMDBPE_API simdbpe_status simdbpe_model_load_memory(const char *vocab_json, size_t vocab_len,
                                                     const char *merges_txt, size_t merges_len,
                                                     const char *specials, size_t specials_len,
                                                     simdbpe_model **out, simdbpe_error *err);

/*
 * A model from the contents of an HF tokenizers `tokenizer.json` (a
 * byte-level BPE model). Its pre-tokenizer is one of the families this
 * library scans itself (GPT-2, cl100k/Llama-3, Qwen2, o200k, DeepSeek-V3,
 * Tekken/Nemotron, Kimi K2), recognised from its exact Split patterns, or other
 * Splits run by Oniguruma ("regex"); a pattern that cannot be run exactly
 * is SIMDBPE_ERR_UNSUPPORTED with the pattern quoted. Honoured: the NFC
 * normalizer, ignore_merges, every added token (special or not: see
 * simdbpe_encode), the post-processor's ids (encode option
 * add_special_tokens).
 */
SIMDBPE_API simdbpe_status simdbpe_model_load_hf_json(const char *json, size_t len,
                                                      simdbpe_model **out, simdbpe_error *err);

/*
 * A model from a tiktoken rank file (`NAME.tiktoken`: base64 token, rank).
 * `encoding` names the encoding it belongs to ("r50k_base", "p50k_base",
 * "cl100k_base", "o200k_base"), which gives its pre-tokenizer and special
 * tokens; NULL recognises OpenAI's files by their contents.
 */
SIMDBPE_API simdbpe_status simdbpe_model_load_tiktoken(const char *data, size_t len,
                                                       const char *encoding, simdbpe_model **out,
                                                       simdbpe_error *err);

/*
 * A model from a rank file with what tiktoken's Encoding(name, pat_str,
 * mergeable_ranks, special_tokens) takes besides the ranks:
 *   encoding     as above (its pre-tokenizer and special tokens), or NULL;
 *   pat_str      the pre-tokenizer's regex, instead of the encoding's: the
 *                pattern of one of the families this library implements,
 *                as tiktoken spells it (r50k_base/gpt2, cl100k_base,
 *                o200k_base; older spellings too) or as tokenizer.json's
 *                Split does (simdbpe_model_pattern); any other is
 *                SIMDBPE_ERR_UNSUPPORTED with the pattern quoted. (tiktoken
 *                0.14's cl100k_base pattern keeps whitespace that ends a
 *                text whole, where the family cuts it after its last line
 *                break: it is accepted with ranks that cannot tell the
 *                two apart, i.e. without a token that holds a line break
 *                followed by other whitespace.)
 *   special_*    the special tokens (texts, UTF-8, and ids; n_specials of
 *                them), instead of the encoding's; special_texts NULL and
 *                n_specials 0: the encoding's, or none.
 */
typedef struct simdbpe_tiktoken_options {
    const char *encoding;
    const char *pat_str;
    const char *const *special_texts;
    const uint32_t *special_ids;
    size_t n_specials;
} simdbpe_tiktoken_options;

/* The defaults (see SIMDBPE_ENCODE_OPTIONS_INIT): nothing given, as
 * simdbpe_model_load_tiktoken(data, len, NULL, ...). */
#define SIMDBPE_TIKTOKEN_OPTIONS_INIT {NULL, NULL, NULL, NULL, 0}

SIMDBPE_API simdbpe_status simdbpe_model_load_tiktoken_with(const char *data, size_t len,
                                                            const simdbpe_tiktoken_options *opts,
                                                            simdbpe_model **out,
                                                            simdbpe_error *err);

/*
 * Opens a model by name or path, tried in this order:
 *   a name                 a model embedded in the library: "gpt2" (=
 *                          "r50k_base"), "p50k_base", "cl100k_base",
 *                          "o200k_base" (simdbpe_model_name_at lists them);
 *   a path that exists:
 *     a compiled model     FILE.sbpe (see below), mapped into memory;
 *     a tokenizer.json     any file name (a *.json name or JSON contents);
 *     a .tiktoken file     one of OpenAI's rank files;
 *     a directory          DIR/tokenizer.json if there is one, else
 *                          DIR/vocab.json + DIR/merges.txt (GPT-2's
 *                          pre-tokenizer) and, if present,
 *                          DIR/special_tokens (one token per line);
 *   ORG/NAME[@REVISION]    any other name that is a Hugging Face repo id
 *                          with an organisation: the repo's tokenizer.json
 *                          in the local Hugging Face cache
 *                          (simdbpe_model_find_pretrained).
 * Errors name the file in err->message, or the places looked in.
 */
SIMDBPE_API simdbpe_status simdbpe_model_open(const char *name_or_path, simdbpe_model **out,
                                              simdbpe_error *err);

/*
 * The path simdbpe_model_open(name_or_path) reads: NULL for a name
 * embedded in the library, the name itself for a path that exists, the
 * cached tokenizer.json for ORG/NAME[@REVISION]; or simdbpe_model_open's
 * error, without reading any model. *path is released with simdbpe_free.
 */
SIMDBPE_API simdbpe_status simdbpe_model_locate(const char *name_or_path, char **path,
                                                simdbpe_error *err);

/*
 * The tokenizer.json of a Hugging Face repo in the local cache, found as
 * huggingface_hub lays it out; nothing is downloaded (HF_HUB_OFFLINE makes
 * no difference). The cache is $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE,
 * else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
 * ~/.cache/huggingface/hub; the file is
 * CACHE/models--ORG--NAME/snapshots/COMMIT/tokenizer.json (usually a link
 * into blobs/), where COMMIT is `revision` if it is a commit (40 lowercase
 * hex digits), else what CACHE/models--ORG--NAME/refs/REVISION names.
 *   repo_id   "ORG/NAME" or "NAME", optionally "@REVISION" appended when
 *             `revision` is NULL;
 *   revision  a branch, tag or commit; NULL: the one in repo_id, else
 *             "main".
 * *path (released with simdbpe_free) is the snapshot's tokenizer.json.
 * Errors: SIMDBPE_ERR_INVALID_ARG for a malformed repo id or revision
 * (byte_offset: where in it); SIMDBPE_ERR_IO when the repo, the revision,
 * the snapshot or the file is not cached, or a ref is not a commit
 * (byte_offset: where in the ref file); SIMDBPE_ERR_UNSUPPORTED when the
 * snapshot has only vocab.json + merges.txt or tokenizer.model. The
 * message names the path that was missing and what chose the cache.
 */
SIMDBPE_API simdbpe_status simdbpe_model_find_pretrained(const char *repo_id,
                                                         const char *revision, char **path,
                                                         simdbpe_error *err);

/*
 * A model from a model file's contents held in memory (e.g. decompressed
 * by the caller): a tokenizer.json (a JSON object), one of OpenAI's
 * .tiktoken rank files, or a compiled model image (copied). `name` (may
 * be NULL) names the contents in messages; a name ending in .json or
 * .tiktoken says which it is, as simdbpe_model_open reads names.
 */
SIMDBPE_API simdbpe_status simdbpe_model_load_buffer(const char *data, size_t len, const char *name,
                                                     simdbpe_model **out, simdbpe_error *err);

SIMDBPE_API void simdbpe_model_free(simdbpe_model *model);

/*
 * Compiled models (.sbpe): one versioned little-endian image holding the
 * token bytes, minimal perfect hashes for merges and whole tokens, the
 * specials and flags, with a checksum. Loading one is an mmap plus checks,
 * no parsing. simdbpe_model_open() also accepts such a file (a regular file
 * named *.sbpe or starting with the format's magic).
 *
 * simdbpe_model_compiled_size() is the size of the image;
 * simdbpe_model_compile() writes it into `out` (capacity `cap`; if too
 * small, SIMDBPE_ERR_BUFFER_TOO_SMALL with the size needed in *out_len).
 * simdbpe_model_save() writes it to `path` (under a temporary name renamed
 * into place when complete). simdbpe_model_load_compiled() opens a copy of
 * an image held in memory; simdbpe_model_load_file() maps a file. Both
 * check the magic, version, sizes, checksum and every table entry: a
 * corrupted or truncated image is SIMDBPE_ERR_MODEL_FILE, never a crash.
 */
SIMDBPE_API size_t simdbpe_model_compiled_size(const simdbpe_model *model);
SIMDBPE_API simdbpe_status simdbpe_model_compile(const simdbpe_model *model, void *out, size_t cap,
                                                 size_t *out_len, simdbpe_error *err);
SIMDBPE_API simdbpe_status simdbpe_model_save(const simdbpe_model *model, const char *path,
                                              simdbpe_error *err);
SIMDBPE_API simdbpe_status simdbpe_model_load_compiled(const void *data, size_t len,
                                                       simdbpe_model **out, simdbpe_error *err);
SIMDBPE_API simdbpe_status simdbpe_model_load_file(const char *path, simdbpe_model **out,
                                                   simdbpe_error *err);

/* The i-th name simdbpe_model_open knows without a file, or NULL past the
 * last. */
SIMDBPE_API const char *simdbpe_model_name_at(size_t i);

/* The model's pre-tokenizer family: one of simdbpe_pretokenizer_name_at's
 * names ("gpt2", "cl100k", "qwen2", "o200k", "deepseek_v3", "tekken",
 * "kimi"), or "regex" for a tokenizer.json whose Split regexes no scanner
 * implements (run by Oniguruma as HF tokenizers runs them; the trainer
 * does not take it). */
SIMDBPE_API const char *simdbpe_model_pretokenizer(const simdbpe_model *model);

/* The i-th pre-tokenizer family this library implements (i from 0), or
 * NULL past the last: the names simdbpe_model_pretokenizer returns and the
 * trainer's pre_tokenizer option takes. */
SIMDBPE_API const char *simdbpe_pretokenizer_name_at(size_t i);

/* The regex of the model's pre-tokenizer: the Split pattern of its
 * family as tokenizer.json spells it (what the family's scanner does
 * exactly; tiktoken's regex module runs it too), the model's own pattern
 * for the "regex" family, or NULL for several Splits (DeepSeek-V3). */
SIMDBPE_API const char *simdbpe_model_pattern(const simdbpe_model *model);

/* Number of ids: one more than the largest id. */
SIMDBPE_API uint32_t simdbpe_model_vocab_size(const simdbpe_model *model);

/* The bytes of token `id`; SIMDBPE_ERR_TOKEN_ID when it has none. */
SIMDBPE_API simdbpe_status simdbpe_model_token_bytes(const simdbpe_model *model, uint32_t id,
                                                     const uint8_t **bytes, size_t *len);

/* The id of the special token with this exact text; ERR_INVALID_ARG if none. */
SIMDBPE_API simdbpe_status simdbpe_model_special_id(const simdbpe_model *model, const char *text,
                                                    size_t len, uint32_t *id);

/*
 * The model's end-of-text token, the one a dataset puts between documents:
 * <|endoftext|> if the model has it; else the last id its post-processor
 * adds after a document (an EOS of a TemplateProcessing); else the first
 * special token among <|end_of_text|> (Llama-3), <｜end▁of▁sentence｜>
 * (DeepSeek-V3), </s> and <eos>. SIMDBPE_ERR_UNSUPPORTED if none of these.
 * (A tokenizer.json does not name its EOS; tokenizer_config.json does.)
 */
SIMDBPE_API simdbpe_status simdbpe_model_eot(const simdbpe_model *model, uint32_t *id);

/* How many added tokens the model has (special tokens and HF's other
 * added_tokens alike), and the i-th one's id and text. */
SIMDBPE_API size_t simdbpe_model_special_count(const simdbpe_model *model);
SIMDBPE_API simdbpe_status simdbpe_model_special_at(const simdbpe_model *model, size_t i,
                                                    uint32_t *id, const char **text, size_t *len);

/* What the i-th added token is (0 past the last): */
#define SIMDBPE_ADDED_SPECIAL 1u    /* special: matched in text as the encode options'
                                     * `special` says, skipped by HF's decode with
                                     * skip_special_tokens; the others are always matched */
#define SIMDBPE_ADDED_NORMALIZED 2u /* matched in the normalized text (HF "normalized") */
#define SIMDBPE_ADDED_IN_VOCAB 4u   /* also a token of the BPE vocabulary (tokenizer.json's
                                     * model.vocab, vocab.json), not only added */
SIMDBPE_API unsigned simdbpe_model_special_flags(const simdbpe_model *model, size_t i);

/*
 * A copy of `model` with more added tokens, as HF tokenizers'
 * Tokenizer.add_tokens (flags 0 or SIMDBPE_ADDED_NORMALIZED) and
 * add_special_tokens (SIMDBPE_ADDED_SPECIAL) give them: a text that is an
 * added token or a vocabulary token keeps its id, a new one gets the next
 * id after the vocabulary and the added tokens; a token given again with
 * the same flags is not counted. *n_added (may be NULL) is HF's count.
 * The new model is built as a loaded one is (as long), and `model` stays
 * as it was.
 */
typedef struct simdbpe_added_token {
    const char *text; /* UTF-8, `len` bytes */
    size_t len;
    unsigned flags; /* SIMDBPE_ADDED_SPECIAL, SIMDBPE_ADDED_NORMALIZED */
} simdbpe_added_token;

SIMDBPE_API simdbpe_status simdbpe_model_add_tokens(const simdbpe_model *model,
                                                    const simdbpe_added_token *tokens, size_t n,
                                                    simdbpe_model **out, size_t *n_added,
                                                    simdbpe_error *err);

/*
 * What the file the model was loaded from asks for that simdbpe does not
 * apply and that does not change the ids of encoding a text (a
 * tokenizer.json's "truncation" and "padding": settings of HF's encode
 * calls), as one sentence for the caller to show once; "" when there is
 * nothing to say (and for compiled models, which do not keep it). Fields
 * that would change the ids are refused when the model is loaded. Valid as
 * long as the model.
 */
SIMDBPE_API const char *simdbpe_model_notice(const simdbpe_model *model);

/*
 * Whether encoding a pre-token that is itself a token may emit that token
 * directly. The model decides this when it is built, by encoding every token
 * on its own bytes; 1 for GPT-2.
 */
SIMDBPE_API int simdbpe_model_whole_token_exact(const simdbpe_model *model);

/* ---------------------------------------------------------------- encoder */

typedef enum simdbpe_special_policy {
    SIMDBPE_SPECIAL_AS_TEXT = 0, /* specials are ordinary text (encode_ordinary) */
    SIMDBPE_SPECIAL_ALLOW = 1,   /* occurrences of the model's specials -> their ids */
    SIMDBPE_SPECIAL_ERROR = 2    /* an occurrence is SIMDBPE_ERR_SPECIAL_TOKEN */
} simdbpe_special_policy;

typedef enum simdbpe_utf8_policy {
    SIMDBPE_UTF8_STRICT = 0, /* invalid UTF-8 is SIMDBPE_ERR_INVALID_UTF8 */
    SIMDBPE_UTF8_REPLACE = 1 /* each maximal invalid subpart becomes U+FFFD */
} simdbpe_utf8_policy;

#define SIMDBPE_ADD_PREFIX 2
#define SIMDBPE_ADD_SUFFIX 4

typedef struct simdbpe_encode_options {
    simdbpe_special_policy special;
    simdbpe_utf8_policy errors;
    /* Non-zero: add the ids the model's post-processor puts around a
     * document (HF `add_special_tokens=True`: Llama-3.1's BOS
     * <|begin_of_text|>); most models have none. For a document encoded in
     * parts (simdbpe_cut_find): SIMDBPE_ADD_PREFIX adds only those before,
     * SIMDBPE_ADD_SUFFIX only those after. */
    int add_special_tokens;
} simdbpe_encode_options;

/* The defaults (specials as text, strict UTF-8, nothing added). Declare
 * options with it and then change fields, never field by field from
 * nothing: a field left out is stack garbage, and a field added later
 * gets its default here.
 *   simdbpe_encode_options o = SIMDBPE_ENCODE_OPTIONS_INIT;
 *   o.special = SIMDBPE_SPECIAL_ALLOW; */
#define SIMDBPE_ENCODE_OPTIONS_INIT {SIMDBPE_SPECIAL_AS_TEXT, SIMDBPE_UTF8_STRICT, 0}

typedef struct simdbpe_encoder simdbpe_encoder;

/* An encoder for `model`, which must outlive it. An encoder is for one
 * thread at a time. It finds pieces among the model's whole tokens and
 * keeps those it encodes; after a few thousand of them, in a copy of the
 * model's table of its whole tokens (built once, when an encoder first
 * needs it, and shared: 4 MB for GPT-2, 16 MB for o200k_base), which grows
 * as it keeps more (see simdbpe_encoder_new_with). Fails with
 * SIMDBPE_ERR_UNSUPPORTED when the environment variable SIMDBPE_KERNEL
 * names a kernel set this CPU lacks. */
SIMDBPE_API simdbpe_status simdbpe_encoder_new(const simdbpe_model *model, simdbpe_encoder **out,
                                               simdbpe_error *err);

typedef struct simdbpe_encoder_options {
    /* The most MB the encoder's tables of the pieces it has encoded grow
     * to (0: SIMDBPE_CACHE_MB_DEFAULT; at most 65536): two thirds for its
     * piece table (whole powers of two, never smaller than the model's),
     * the rest for longer pieces. It forgets nothing: once the budget is spent, pieces it
     * has not kept are encoded from scratch each time they come. A larger
     * budget makes text it sees again faster (over a large corpus nearly
     * every piece has been seen before); the tables grow as they fill, so
     * a short job never pays for the budget. */
    unsigned cache_mb;
} simdbpe_encoder_options;

/* The budget of an encoder whose options say 0: a piece table of up to
 * 2^21 buckets (two million pieces at one a bucket, three filled on;
 * one pass over bench/'s 1.35 GB file meets 1.6-1.8 million) and 128 MB
 * for longer pieces. */
#define SIMDBPE_CACHE_MB_DEFAULT 256

/* The defaults, for declaring options (see SIMDBPE_ENCODE_OPTIONS_INIT). */
#define SIMDBPE_ENCODER_OPTIONS_INIT {0}

/* simdbpe_encoder_new with options; `opts` may be NULL (the defaults). */
SIMDBPE_API simdbpe_status simdbpe_encoder_new_with(const simdbpe_model *model,
                                                    const simdbpe_encoder_options *opts,
                                                    simdbpe_encoder **out, simdbpe_error *err);
SIMDBPE_API void simdbpe_encoder_free(simdbpe_encoder *enc);

/*
 * Encodes one document. On success *ids points at *n_ids ids owned by the
 * encoder, valid until the next call on it. `opts` may be NULL (text
 * specials, strict UTF-8). On ERR_INVALID_UTF8 and ERR_SPECIAL_TOKEN,
 * err->byte_offset is the offset in `text` of the first offending byte.
 */
SIMDBPE_API simdbpe_status simdbpe_encode(simdbpe_encoder *enc, const char *text, size_t len,
                                          const simdbpe_encode_options *opts, const uint32_t **ids,
                                          size_t *n_ids, simdbpe_error *err);

/*
 * simdbpe_encode, appending the ids to an array the caller owns: they go
 * to (*ids)[*n_ids..], and the encoder grows the array with realloc as it
 * writes (*cap is its room in ids; *ids may be NULL with *cap 0), so a
 * document's ids are held once, not in the encoder and again in the
 * caller's array. On success *n_ids is the new count; on failure it is
 * unchanged, and *ids and *cap say where the array is now (it may have
 * grown). The caller frees *ids with free(). Room for up to two ids a byte
 * of the document's longest pre-token may be reserved past the ids
 * (allocated, mostly never touched).
 */
SIMDBPE_API simdbpe_status simdbpe_encode_append(simdbpe_encoder *enc, const char *text, size_t len,
                                                 const simdbpe_encode_options *opts, uint32_t **ids,
                                                 size_t *cap, size_t *n_ids, simdbpe_error *err);

/* Where a token came from: the bytes text[start..end) of the text given,
 * and the piece of it the token is part of: the text's added tokens and
 * pre-tokens, in order, are pieces 0, 1, ... (HF tokenizers' word ids);
 * SIMDBPE_NO_PIECE for an id the post-processor adds. */
typedef struct simdbpe_span {
    size_t start, end;
    size_t piece;
} simdbpe_span;

#define SIMDBPE_NO_PIECE ((size_t)-1)

/*
 * simdbpe_encode, and where each id comes from in `text`: (*spans)[i] is
 * the span of (*ids)[i]. *ids is as simdbpe_encode's (the encoder's); the
 * spans are malloc'd: release them with free(). They are HF tokenizers'
 * offsets (its Rust API's, in bytes; its Python API gives the same spans
 * counted in characters):
 *   - A token's span covers whole characters: where a token starts or
 *     ends inside a multi-byte character (byte-level BPE cuts some, e.g.
 *     an emoji into two tokens), its span takes in that whole character,
 *     so the spans of the tokens that share a character overlap (both
 *     cover it). The exact byte boundaries are the running sum of the
 *     token lengths (simdbpe_model_token_bytes) where the text is not
 *     normalized.
 *   - With the NFC normalizer the spans are in the text as given, not as
 *     normalized: a character that NFC composed from several is aligned
 *     to the first of them, one it decomposed into several (and did not
 *     compose again) to the character it came from, as HF aligns them.
 *   - A normalizer chain's steps align as HF's do: Lowercase's characters
 *     (two for U+0130) take the character lowercased; Strip drops text;
 *     a Replace's content takes the span of the match's last character
 *     (an empty match's: the one before it; at the start of the text
 *     between added tokens, an empty span there);
 *     Prepend's, the first character's.
 *   - SentencePiece-style models: a word marker for a space spans the
 *     space; one put before a stretch or pre-token (Prepend, Metaspace)
 *     spans its first character; each <0xNN> token of a character spans
 *     the whole character; the unknown token, the characters it stands
 *     for.
 *   - Ids the post-processor adds (add_special_tokens) have the empty
 *     span [0, 0) and no piece; an added token in the text, its text.
 *   - With SIMDBPE_UTF8_REPLACE, a U+FFFD that replaced an ill-formed
 *     sequence spans that sequence.
 */
SIMDBPE_API simdbpe_status simdbpe_encode_offsets(simdbpe_encoder *enc, const char *text,
                                                  size_t len, const simdbpe_encode_options *opts,
                                                  const uint32_t **ids, simdbpe_span **spans,
                                                  size_t *n_ids, simdbpe_error *err);

/*
 * Where a long document may be cut so that encoding its parts one after the
 * other, with the same options, gives exactly the ids of encoding it whole:
 * the largest p in [lo, hi] (0 < p < len), or SIMDBPE_NO_CUT. text[0..len)
 * may be only the beginning of the document: p is decided from bytes before
 * len, and is a cut of any document that begins so. Cut points lie between
 * pre-tokens at a few shapes of characters (a space, a digit or punctuation
 * after a non-space; src/pretok/cuts.c), never inside an added token the
 * options match or an ill-formed sequence. With add_special_tokens, encode
 * the first part with SIMDBPE_ADD_PREFIX and the last with SIMDBPE_ADD_SUFFIX
 * (the others with 0), so that the ids around the document appear once.
 */
#define SIMDBPE_NO_CUT ((size_t)-1)
SIMDBPE_API size_t simdbpe_cut_find(const simdbpe_model *model, const simdbpe_encode_options *opts,
                                    const char *text, size_t len, size_t lo, size_t hi);

/* The name of the kernel set the encoder uses ("scalar", "sse42", "avx2"). */
SIMDBPE_API const char *simdbpe_encoder_kernel_name(const simdbpe_encoder *enc);

/* ---------------------------------------------------------------- decoder */

/*
 * Writes the concatenated bytes of `ids` into `out` (capacity `cap`) and the
 * number of bytes into *out_len (a SentencePiece-style model: the text its
 * tokenizer.json's decoder gives, as HF's decode does). If `cap` is too small, returns
 * SIMDBPE_ERR_BUFFER_TOO_SMALL with the size needed in *out_len. A bad id is
 * SIMDBPE_ERR_TOKEN_ID with err->index its position. The output may end
 * inside a multi-byte character: decoding gives bytes, not text.
 */
SIMDBPE_API simdbpe_status simdbpe_decode(const simdbpe_model *model, const uint32_t *ids,
                                          size_t n_ids, uint8_t *out, size_t cap, size_t *out_len,
                                          simdbpe_error *err);

/* 1 if decoding ids is the concatenation of decoding each id (byte-level
 * models: a long sequence may be decoded in parts), 0 if a decoder chain
 * joins tokens (SentencePiece-style models: byte fallback runs, Strip at
 * the start), so a sequence must be decoded whole. */
SIMDBPE_API int simdbpe_model_decodes_per_token(const simdbpe_model *model);

#ifdef __cplusplus
}
#endif
#endif /* SIMDBPE_H */
