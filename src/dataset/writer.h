/*
 * writer.h - token outputs: one interface, one file per format.
 *
 *   text       one line of decimal ids per document (stdout or -o FILE)
 *   u16, u32   little-endian ids, no header (stdout or -o FILE); nanoGPT's
 *              .bin is u16 with --eot append
 *   count      "N\tFILE[:LINE]" per document and "N\ttotal" (simdbpe count)
 *   llmc       llm.c shards: -o PREFIX -> PREFIX_{val|train}_{i:06d}.bin,
 *              each a header of 256 int32 (magic 20240520, version 1, token
 *              count; u32: 20240801, version 7) then the ids; shard 0 is val
 *   megatron   -o PREFIX -> PREFIX.bin (the ids) + PREFIX.idx (MMIDIDX)
 *   datatrove  -o PREFIX -> PREFIX.ds, PREFIX.ds.index, PREFIX.ds.metadata
 *
 * The ordered writer calls begin_doc, ids (any number of times), end_doc
 * for every document in input order, then finish (everything is written
 * under temporary names), then commit (renamed into place) or discard.
 * writer.c adds the end-of-text id for --eot prepend/append; the formats
 * only see ids. All file output goes through outfile.h, so nothing appears
 * under a final name before commit.
 */
#ifndef SIMDBPE_WRITER_H
#define SIMDBPE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "outfile.h"

typedef struct writer_config {
    simdbpe_output_format format;
    const char *output;        /* -o: a file or a prefix; NULL = stdout */
    unsigned width;            /* bytes per id: 2 or 4 (binary formats) */
    simdbpe_eot eot;
    uint32_t eot_id;
    uint64_t shard_tokens;     /* llmc */
    const char *model_name;    /* datatrove metadata */
    char *const *files;        /* count: input names */
    int count_lines;           /* count: print FILE:LINE */
    outlock *lock;             /* the run's locks (llmc: each shard's is taken when it is
                                * opened; shards an earlier run left are removed at commit
                                * if the run holds theirs), or NULL */
} writer_config;

typedef struct writer writer;

typedef struct writer_ops {
    int (*begin_doc)(writer *w);
    int (*ids)(writer *w, const uint32_t *ids, size_t n);
    /* doc_tokens: the document's ids, EOTs included */
    int (*end_doc)(writer *w, uint64_t doc_tokens, uint32_t file, uint64_t line);
    int (*finish)(writer *w);
    int (*commit)(writer *w);
    void (*discard)(writer *w);
    void (*destroy)(writer *w);
} writer_ops;

struct writer {
    const writer_ops *ops;
    writer_config cfg;
    uint64_t doc_tokens;
    int open_err;       /* set by a constructor that could not open a file */
    char err_path[512]; /* the file a failure concerns */
    char notice[700];   /* what commit did besides renaming ("" if nothing) */
};

/*
 * Creates the writer for cfg->format and opens its first files. Returns 0,
 * or an errno value with w->err_path naming the file (then *out is NULL
 * and `err_path` is filled).
 */
int simdbpe__writer_open(writer **out, const writer_config *cfg, char *err_path, size_t cap);

/* These return 0 or an errno value (then w->err_path says which file). */
int simdbpe__writer_begin_doc(writer *w);
int simdbpe__writer_ids(writer *w, const uint32_t *ids, size_t n);
/* *tokens gets the document's ids as written, EOT included. */
int simdbpe__writer_end_doc(writer *w, uint32_t file, uint64_t line, uint64_t *tokens);
int simdbpe__writer_finish(writer *w);
int simdbpe__writer_commit(writer *w);
void simdbpe__writer_discard(writer *w);
void simdbpe__writer_free(writer *w);

/* ---- for the format files */
writer *simdbpe__writer_text_new(const writer_config *cfg); /* text, u16, u32, count */
writer *simdbpe__writer_llmc_new(const writer_config *cfg);
writer *simdbpe__writer_megatron_new(const writer_config *cfg);
writer *simdbpe__writer_datatrove_new(const writer_config *cfg);

/* Writes ids as little-endian `width`-byte integers. */
void simdbpe__writer_put_ids(outfile *o, unsigned width, const uint32_t *ids, size_t n);

/* Opens `path` into *o, or records the failure in w->err_path. */
int simdbpe__writer_open_file(writer *w, outfile *o, const char *path);
/* Records which file failed (for the message) and returns e. */
int simdbpe__writer_fail(writer *w, const char *path, int e);

/* "PREFIX" + "suffix", malloc'ed; NULL when out of memory. */
char *simdbpe__writer_path(const char *prefix, const char *suffix);

/* The final names of the files a run with `cfg` writes (llmc: the first
 * shard's, and those of the shards under the prefix now, which an earlier
 * run left and commit removes unless they are written again), malloc'ed
 * with the array; NULL for standard output. Returns 0 or ENOMEM. */
int simdbpe__writer_final_names(const writer_config *cfg, char ***names, size_t *n);

/* Whether `name` is an llm.c shard under `prefix`: PREFIX_val_NNNNNN.bin or
 * PREFIX_train_NNNNNN.bin (llm.c reads every file those globs match). */
int simdbpe__writer_llmc_is_shard(const char *prefix, const char *name);

#endif
