/*
 * simdbpe_dataset.h - encoding whole datasets: a list of files in, token
 * files in the layouts training code reads out, on all cores.
 *
 * Kept apart from simdbpe.h, as simdbpe_batch.h is; it depends on
 * simdbpe.h (model, encode options, statuses, simdbpe_error) and on
 * simdbpe_batch.h (the thread pool). The `simdbpe encode` and
 * `simdbpe merge` commands are thin layers over it.
 *
 * Inputs: paths ("-" is standard input), each plain, gzip or zstd
 * (recognised by their first bytes), read as streams. Documents are whole
 * files, the parts between a separator, lines, or one JSON object per line
 * (the string at a key). Outputs: text ids, raw u16/u32, llm.c shards,
 * Megatron .bin/.idx, datatrove .ds (tools/DATASET.md has the layouts).
 *
 * Use: simdbpe_dataset_new (options) -> simdbpe_dataset_prepare (inputs)
 * -> simdbpe_dataset_run -> simdbpe_dataset_result_of -> simdbpe_dataset_free,
 * or simdbpe_dataset_encode_files for all of it in one call.
 *
 * Invariants:
 *   - The output is byte-identical for any number of threads: batches are
 *     numbered when read and written in that order.
 *   - Nothing appears under a final output name before the run succeeds:
 *     files are written under NAME.tmp.XXXXXX and renamed at the end; a
 *     failed run removes them. A run holds an exclusive lock on OUTPUT.lock
 *     (another run writing the same output gets SIMDBPE_ERR_IO).
 *   - Memory is bounded by the batch size and the thread count, not by the
 *     input size.
 *   - The library never prints: skipped documents and notices go to a
 *     callback and into the result; failures are a status, a simdbpe_error
 *     and the full message (simdbpe_dataset_message).
 *
 * Errors: a bad document stops the run (unless skip_errors) with the first
 * failure in input order whatever the thread count. err->index is the
 * input's index in `paths` (SIMDBPE_NO_POSITION when no input is at fault),
 * err->line its 1-based line and err->byte_offset the byte offset in the
 * decompressed file (text inputs) or in the JSON value (jsonl), where they
 * apply. Misused options are SIMDBPE_ERR_INVALID_ARG, unreadable inputs and
 * unwritable outputs SIMDBPE_ERR_IO, bad documents the encoder's status (or
 * SIMDBPE_ERR_INVALID_ARG for a malformed JSON record; a damaged .gz/.zst
 * stream is SIMDBPE_ERR_IO). Messages name options by their fields here,
 * in backquotes (`json_key`, `output_format`, `output`, ...), which the
 * command-line tool and the Python package turn into their own spellings
 * (--json-key; json_key=).
 *
 * Sharding: with world_size > 0 the run is rank `rank` of `world_size`: it
 * encodes input files i with i % world_size == rank into
 * OUTPUT.RRRRR-of-WWWWW (+ the format's suffixes), then writes the
 * completion marker OUTPUT.RRRRR-of-WWWWW.done (JSON: format, dtype, eot,
 * the shard's files with their counts). A rank whose marker exists does
 * nothing (simdbpe_dataset_already_done). simdbpe_dataset_merge joins the
 * shards.
 */
#ifndef SIMDBPE_DATASET_H
#define SIMDBPE_DATASET_H

#include "simdbpe.h"
#include "simdbpe_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum simdbpe_input_format {
    SIMDBPE_INPUT_TEXT = 0,  /* a document per file, or per doc_separator */
    SIMDBPE_INPUT_LINES = 1, /* a document per line (without \n or \r\n) */
    SIMDBPE_INPUT_JSONL = 2  /* a JSON object per line; the string at json_key */
} simdbpe_input_format;

typedef enum simdbpe_output_format {
    SIMDBPE_OUTPUT_TEXT = 0,      /* a line of decimal ids per document */
    SIMDBPE_OUTPUT_U16 = 1,       /* little-endian ids, no header (nanoGPT) */
    SIMDBPE_OUTPUT_U32 = 2,
    SIMDBPE_OUTPUT_LLMC = 3,      /* OUTPUT_val_000000.bin, OUTPUT_train_000001.bin, ... */
    SIMDBPE_OUTPUT_MEGATRON = 4,  /* OUTPUT.bin + OUTPUT.idx */
    SIMDBPE_OUTPUT_DATATROVE = 5, /* OUTPUT.ds, .ds.index, .ds.metadata */
    SIMDBPE_OUTPUT_COUNT = 6      /* "N\tFILE[:LINE]" per document, then "N\ttotal" */
} simdbpe_output_format;

typedef enum simdbpe_eot {
    SIMDBPE_EOT_DEFAULT = 0, /* the format's: prepend for llmc, append for megatron
                              * and datatrove, none for the others */
    SIMDBPE_EOT_NONE = 1,
    SIMDBPE_EOT_APPEND = 2,  /* <|endoftext|> after each document */
    SIMDBPE_EOT_PREPEND = 3  /* <|endoftext|> before each document */
} simdbpe_eot;

/*
 * The names of the input formats, output formats and end-of-text modes, as
 * `simdbpe encode` and `simdbpe merge` take them, the Python package's
 * encode_files takes them and completion markers record them:
 *
 *   input formats   text lines jsonl
 *   output formats  text u16 u32 llmc megatron datatrove count
 *   eot             default none append prepend
 *
 * The *_name functions give a value's name, or NULL for a value that is
 * none (the values count up from 0, so a loop from 0 lists them all); the
 * *_of functions the value of a name, or SIMDBPE_ERR_INVALID_ARG for a name
 * that is none.
 */
SIMDBPE_API const char *simdbpe_input_format_name(simdbpe_input_format format);
SIMDBPE_API simdbpe_status simdbpe_input_format_of(const char *name, simdbpe_input_format *out);
SIMDBPE_API const char *simdbpe_output_format_name(simdbpe_output_format format);
SIMDBPE_API simdbpe_status simdbpe_output_format_of(const char *name, simdbpe_output_format *out);
SIMDBPE_API const char *simdbpe_eot_name(simdbpe_eot eot);
SIMDBPE_API simdbpe_status simdbpe_eot_of(const char *name, simdbpe_eot *out);

/* What a run reports besides its result. */
typedef enum simdbpe_dataset_event {
    /* A document skipped (skip_errors): "FILE: line L: reason". */
    SIMDBPE_DATASET_SKIPPED = 0,
    /* Something done on the way, e.g. "removed 2 temporary files left by an
     * interrupted run (out.bin.tmp.a1B2c3, ...)". */
    SIMDBPE_DATASET_NOTICE = 1
} simdbpe_dataset_event;

/* Called from the thread writing the output, one call at a time. */
typedef void (*simdbpe_dataset_message_fn)(void *user, simdbpe_dataset_event event,
                                           const char *text);
/* After each batch is written: raw (compressed, as stored) bytes read,
 * decompressed bytes written, documents written so far. Returns 0 to go
 * on; anything else stops the run with SIMDBPE_ERR_CANCELLED, which, as
 * any failure, leaves no output under its final name (a batch is 128 KiB
 * by default: the run stops within one). */
typedef int (*simdbpe_dataset_progress_fn)(void *user, uint64_t raw_bytes, uint64_t bytes,
                                           uint64_t documents);

typedef struct simdbpe_dataset_options {
    simdbpe_input_format input_format;
    const char *json_key;      /* jsonl: "text" when NULL; "a.b" = nested */
    const char *doc_separator; /* text: bytes between documents, or NULL */
    size_t doc_separator_len;
    simdbpe_encode_options encode; /* specials, UTF-8 policy, add_special_tokens */
    int skip_errors;               /* drop a bad document instead of stopping */

    simdbpe_output_format output_format;
    const char *output;      /* a file or a prefix; NULL or "-": standard output
                              * (text, u16, u32 and count only) */
    simdbpe_eot eot;
    const char *eot_token;   /* the end-of-text token: the text of one of the model's
                              * added tokens, or an id in decimal; NULL: the model's
                              * own (simdbpe_model_eot: <|endoftext|>, else its EOS) */
    unsigned dtype_bytes;    /* 2 or 4; 0: u16 when the vocabulary fits (megatron:
                              * fewer than 65,500 ids) */
    uint64_t shard_tokens;   /* llmc: tokens per shard (0: 100,000,000) */
    const char *model_name;  /* datatrove's metadata (NULL: "gpt2") */

    unsigned threads;        /* encoders (0: the CPUs this process may use); never
                              * more than the input (when its size is known) has
                              * batches for */
    simdbpe_pool *pool;      /* run on this pool instead of an own one */
    unsigned cache_mb;       /* each encoder's (simdbpe_encoder_options; 0: its default) */
    size_t batch_bytes;      /* input bytes per batch, 16 .. 1 GiB (0: 128 KiB) */
    long rank, world_size;   /* world_size 0: not sharded */

    simdbpe_dataset_message_fn on_message; /* may be NULL */
    simdbpe_dataset_progress_fn on_progress; /* may be NULL */
    void *user;              /* passed to both */
} simdbpe_dataset_options;

/* Fills `o` with the defaults (all zero but rank/world_size). */
SIMDBPE_API void simdbpe_dataset_options_init(simdbpe_dataset_options *o);

/* One input file's share of the result. */
typedef struct simdbpe_dataset_file {
    uint64_t documents, tokens, skipped;
} simdbpe_dataset_file;

/* What a run did (valid after simdbpe_dataset_run succeeded). */
typedef struct simdbpe_dataset_result {
    uint64_t documents, tokens;
    uint64_t bytes;      /* decompressed input bytes */
    uint64_t text_bytes; /* bytes of document text encoded */
    uint64_t skipped;
    uint64_t cuts;       /* times a long document was cut into pieces */
    const char *const *skipped_documents; /* the first ones, "FILE: line L: reason" */
    size_t n_skipped_documents;
    const simdbpe_dataset_file *files; /* this run's inputs, in order */
    size_t n_files;
    double seconds;
    const char *kernel;  /* the encoders' kernel set */
    unsigned threads;    /* encoders used */
    unsigned cache_mb;   /* each encoder's budget (simdbpe_encoder_options), as applied */
    simdbpe_output_format output_format;
    unsigned dtype_bytes;
    simdbpe_eot eot;     /* as applied (never DEFAULT) */
    uint32_t eot_id;     /* the end-of-text id, when eot is not NONE */
    uint64_t input_size; /* known total size of this run's inputs, 0 if unknown */
} simdbpe_dataset_result;

typedef struct simdbpe_dataset simdbpe_dataset;

/*
 * A run of `model` (which must outlive it) with `opts` (NULL: the
 * defaults; its strings are copied). Checks the options against each other
 * and the model: a misused option is SIMDBPE_ERR_INVALID_ARG, an option the
 * model cannot serve (u16 ids for a large vocabulary, an end-of-text id it
 * lacks) SIMDBPE_ERR_UNSUPPORTED. Nothing is read or written.
 */
SIMDBPE_API simdbpe_status simdbpe_dataset_new(const simdbpe_model *model,
                                               const simdbpe_dataset_options *opts,
                                               simdbpe_dataset **out, simdbpe_error *err);

/*
 * Gives the run its inputs, paths[0 .. n_paths) (copied; every rank gets
 * the same full list), once. Checks that every input can be read now (so
 * that a typo fails at once, not hours later: SIMDBPE_ERR_IO), that
 * standard input is read once and not by several ranks and that no output
 * would overwrite an input (SIMDBPE_ERR_INVALID_ARG), selects the rank's
 * files and, for a sharded run, reads its marker. Nothing is written.
 */
SIMDBPE_API simdbpe_status simdbpe_dataset_prepare(simdbpe_dataset *ds, const char *const *paths,
                                                   size_t n_paths, simdbpe_error *err);

/* 1 when this rank's marker says it is finished: run does nothing. */
SIMDBPE_API int simdbpe_dataset_already_done(const simdbpe_dataset *ds);

/* The marker path of a sharded run, else NULL. */
SIMDBPE_API const char *simdbpe_dataset_marker_path(const simdbpe_dataset *ds);

/* The input (of the full list) that is the same file as `path` (by device
 * and inode), or NULL: for callers with outputs of their own. */
SIMDBPE_API const char *simdbpe_dataset_same_input(const simdbpe_dataset *ds, const char *path);

/* 1 when `path` names a file the prepared run writes (an output, a shard,
 * the marker: by canonical name, whether it exists yet or not), else 0:
 * for callers with files of their own (a summary, an input list) that the
 * run must not replace. */
SIMDBPE_API int simdbpe_dataset_is_output(const simdbpe_dataset *ds, const char *path);

/*
 * Encodes the prepared run: takes the output lock, writes everything under
 * temporary names, renames it into place, then writes the marker. Once per
 * object; nothing when the rank is already done.
 */
SIMDBPE_API simdbpe_status simdbpe_dataset_run(simdbpe_dataset *ds, simdbpe_error *err);

/* new + prepare + run + free: the whole run in one call. `result` (may be
 * NULL) gets the totals but for the pointers, which die with the run. On
 * failure err->message holds the first 255 bytes of the message. */
SIMDBPE_API simdbpe_status simdbpe_dataset_encode_files(const simdbpe_model *model,
                                                        const simdbpe_dataset_options *opts,
                                                        const char *const *paths, size_t n_paths,
                                                        simdbpe_dataset_result *result,
                                                        simdbpe_error *err);

/* The totals (after a successful run; zero before). */
SIMDBPE_API const simdbpe_dataset_result *simdbpe_dataset_result_of(const simdbpe_dataset *ds);

/* The whole message of the last failure (err->message holds at most 255
 * bytes of it); "" when there was none. */
SIMDBPE_API const char *simdbpe_dataset_message(const simdbpe_dataset *ds);

SIMDBPE_API void simdbpe_dataset_free(simdbpe_dataset *ds);

/* ------------------------------------------------------------------ merge */

typedef struct simdbpe_merge_options {
    simdbpe_output_format format; /* MEGATRON, U16, U32 or TEXT (llm.c and datatrove
                                   * parts are read as they are) */
    const char *output;           /* OUT: a prefix (megatron) or a file */
    simdbpe_dataset_message_fn on_message; /* notices; may be NULL */
    void *user;
} simdbpe_merge_options;

typedef struct simdbpe_merge_result {
    size_t parts;
    uint64_t documents, tokens;
    int in_file_order; /* 1: the parts' markers put documents back in the order of
                        * the original input files; 0: concatenated as given */
    char *message;     /* after a failure, its whole message (release it with
                        * simdbpe_free); else NULL */
} simdbpe_merge_result;

/*
 * One dataset from parts[0 .. n_parts): what each rank of a sharded run
 * wrote (a Megatron prefix, or a raw file), or any Megatron/raw datasets.
 * With n_parts 0 the parts are found as OUTPUT.RRRRR-of-WWWWW.done. With
 * completion markers the parts must be all ranks of one run, and the result
 * is byte-identical to a single-process run; without them the parts are
 * concatenated in the order given. Every part is checked before anything
 * is written; the output appears under its name only when complete. An
 * output that is a part's file is SIMDBPE_ERR_INVALID_ARG, a bad or missing
 * part SIMDBPE_ERR_IO. `result` may be NULL.
 */
SIMDBPE_API simdbpe_status simdbpe_dataset_merge(const simdbpe_merge_options *opts,
                                                 const char *const *parts, size_t n_parts,
                                                 simdbpe_merge_result *result, simdbpe_error *err);

/* -------------------------------------------------------------- utilities */

/*
 * Input arguments as `simdbpe encode` takes them, into paths: "-" is
 * standard input; "@LIST" the paths LIST names, one a line (blank lines
 * ignored); an argument with *, ? or [ that is no file's name a glob
 * pattern, its matches in sorted order; anything else a path. No argument
 * at all is standard input. A list naming no file and a pattern matching
 * none are errors (a typo never means "no input"): SIMDBPE_ERR_INVALID_ARG
 * or SIMDBPE_ERR_IO, the argument in the message. *paths (malloc'd, with
 * its strings) is released with simdbpe_dataset_inputs_free.
 */
SIMDBPE_API simdbpe_status simdbpe_dataset_expand_inputs(const char *const *args, size_t n_args,
                                                         char ***paths, size_t *n_paths,
                                                         simdbpe_error *err);
SIMDBPE_API void simdbpe_dataset_inputs_free(char **paths, size_t n);

/*
 * One input read as the engine reads it: "-" is standard input, gzip and
 * zstd are recognised by their first bytes and decompressed as a stream
 * (a fixed buffer, whatever the file size).
 */
typedef struct simdbpe_dataset_input simdbpe_dataset_input;

/* SIMDBPE_ERR_IO (err->message: strerror's words) when it cannot be opened. */
SIMDBPE_API simdbpe_status simdbpe_dataset_input_open(const char *path, simdbpe_dataset_input **out,
                                                      simdbpe_error *err);
/* Up to `cap` decompressed bytes into buf: their count, 0 at the end, or -1
 * with the reason in err (e.g. "truncated gzip stream: unexpected end of
 * file"; the bytes decoded before it were delivered). */
SIMDBPE_API long simdbpe_dataset_input_read(simdbpe_dataset_input *in, void *buf, size_t cap,
                                            simdbpe_error *err);
/* NULL is a no-op. */
SIMDBPE_API void simdbpe_dataset_input_close(simdbpe_dataset_input *in);

/*
 * A file of the caller's that appears under its name only when complete,
 * as the outputs do (e.g. a summary written after a run, opened before it
 * so that a path that cannot be written fails before any work). Written
 * under PATH.tmp.XXXXXX; commit renames it into place; discard (or free
 * without commit) removes it. A failure's err->message is the reason
 * (strerror's words), for the caller to put after the file's name. PATH
 * NULL or "-" is standard output, written in place, as is an existing path
 * that is not a regular file (/dev/null, a FIFO).
 */
typedef struct simdbpe_dataset_file_out simdbpe_dataset_file_out;

SIMDBPE_API simdbpe_status simdbpe_dataset_file_open(const char *path,
                                                     simdbpe_dataset_file_out **out,
                                                     simdbpe_error *err);
/* Buffered; the first failure is reported by commit. */
SIMDBPE_API void simdbpe_dataset_file_write(simdbpe_dataset_file_out *f, const void *data,
                                            size_t len);
SIMDBPE_API simdbpe_status simdbpe_dataset_file_commit(simdbpe_dataset_file_out *f,
                                                       simdbpe_error *err);
/* Removes the file unless it was committed, and frees; NULL is a no-op. */
SIMDBPE_API void simdbpe_dataset_file_discard(simdbpe_dataset_file_out *f);

/*
 * Removes every temporary output and lock of the runs and merges in
 * progress in this process, so that none is left behind when it dies:
 * async-signal-safe, for a program's handler of SIGINT, SIGTERM, SIGHUP
 * and SIGPIPE, which then ends the program (the CLI's does). The library
 * installs no handler; while it renames a set of outputs into place it
 * holds those four signals back in the renaming thread, so that such a
 * handler never sees a set half in place.
 */
SIMDBPE_API void simdbpe_dataset_remove_temporaries(void);

#ifdef __cplusplus
}
#endif
#endif /* SIMDBPE_DATASET_H */
