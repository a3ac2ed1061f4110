/*
 * pipeline.h - dataset encoding: inputs -> batches -> N encoders -> one
 * ordered writer.
 *
 *   files --reader--> batch 0, batch 1, ...   (one thread at a time reads)
 *   batch k --worker--> ids of batch k        (any thread; one encoder each)
 *   batches in order --writer--> outputs      (one thread at a time writes)
 *
 * There are no extra reader or writer threads: N workers, the tasks of one
 * simdbpe_pool run, each loop "write the next batch in order if it is
 * ready, else (worker 0) read ahead, else encode a filled batch". With
 * N = 1 this is a plain sequential loop on the calling thread, so a
 * "1 thread" run really uses one core. Batches are numbered when read
 * and written in that order, so the output does not depend on N or on
 * timing.
 *
 * A batch holds whole documents, or pieces of a long document cut at safe
 * pre-token boundaries (simdbpe_cut_find), so the ids of the pieces concatenate to
 * the ids of the document. At most `2 * threads + 2` batches exist at once,
 * which bounds memory whatever the input size.
 */
#ifndef SIMDBPE_PIPELINE_H
#define SIMDBPE_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "simdbpe.h"
#include "simdbpe_dataset.h"

#include "reader_jsonl.h"

/* What one run does; fixed before the threads start. */
typedef struct job {
    const simdbpe_model *model;
    simdbpe_encode_options enc;
    simdbpe_input_format mode;
    const unsigned char *sep; /* SIMDBPE_INPUT_TEXT: document separator, or NULL */
    size_t sep_len;
    jsonl_key key;            /* SIMDBPE_INPUT_JSONL */
    int skip_errors;          /* --on-error skip */
    int hold_docs;            /* hold a cut document until its end (output that a failure
                                 cannot take back: standard output) */
    simdbpe_dataset_message_fn on_message; /* skipped documents; may be NULL */
    simdbpe_dataset_progress_fn on_progress; /* may be NULL */
    void *user;
    size_t batch_bytes;       /* target input bytes per batch */
    char **files;             /* this run's inputs ("-" = stdin) */
    size_t n_files;
    int threads;
    simdbpe_pool *pool;       /* runs the threads (at least one worker) */
    unsigned cache_mb;        /* each encoder's (simdbpe_encoder_options) */
} job;

enum { SEG_TEXT, SEG_JSON, SEG_FAIL };

/* A document, or a piece of one, in a batch's buffer. */
typedef struct seg {
    size_t off, len;   /* in batch->buf */
    uint64_t file_off; /* where it starts in the decompressed file */
    uint64_t line;     /* 1-based line of the file where it starts */
    uint64_t doc_off;  /* where it starts in its document */
    uint32_t file;     /* index in job->files */
    uint8_t kind;      /* SEG_*; SEG_FAIL: an input problem (message set) */
    uint8_t begin;     /* first piece of its document */
    uint8_t end;       /* last piece of its document */
    uint8_t failed;    /* set by the worker (or SEG_FAIL) */
    uint8_t fatal;     /* SEG_FAIL of a whole file (a broken compressed
                        * stream): ends the run even with --on-error skip */
    uint32_t msg;      /* 1 + index in batch->msgs when failed */
    int err_status;    /* when failed: the simdbpe_status, */
    uint64_t err_line; /* the line (0: none) */
    uint64_t err_off;  /* and byte offset (SIMDBPE_NO_POSITION: none) */
    size_t ntok;       /* its ids in batch->ids, in segment order */
    uint64_t text_bytes; /* bytes of document text it encoded */
} seg;

typedef struct batch {
    uint64_t seq;
    char *buf;
    size_t len, cap;
    seg *segs;
    size_t nsegs, segcap;
    uint32_t *ids;
    size_t nids, idcap;
    char **msgs;
    size_t nmsgs, msgcap;
    uint64_t in_bytes; /* decompressed input bytes this batch consumed */
    uint64_t raw_pos;  /* raw input bytes consumed by the reader so far */
    struct batch *next_free;
} batch;

/* Adds a segment (zeroed but for the given fields); NULL when out of memory. */
seg *simdbpe__batch_add_seg(batch *b, size_t off, size_t len, uint8_t kind);
/* Attaches a message to a segment and marks it failed. Returns 0 or -1. */
int simdbpe__batch_fail_seg(batch *b, seg *s, const char *msg);
/* Makes room for `extra` more bytes in b->buf. Returns 0 or -1. */
int simdbpe__batch_reserve(batch *b, size_t extra);

struct writer;

/* Per-input-file results, for the summary and the completion marker. */
typedef struct file_stats {
    uint64_t docs, tokens, skipped;
} file_stats;

typedef struct skip_record {
    char *what; /* "FILE: line L: reason" */
} skip_record;

/* What a run did. */
typedef struct run_totals {
    uint64_t docs, tokens, text_bytes, in_bytes, skipped;
    uint64_t cuts;      /* documents were cut into pieces this many times */
    skip_record *skips; /* the first MAX_SKIP_LIST skipped documents */
    size_t n_skips;
    file_stats *files;  /* job->n_files entries */
    double seconds;
    const char *kernel; /* the encoders' kernel set */
} run_totals;

#define MAX_SKIP_LIST 1000

/* How messages name an input: "<stdin>" for "-", else the path itself. */
static inline const char *simdbpe__display_name(const char *path)
{
    return path[0] == '-' && path[1] == '\0' ? "<stdin>" : path;
}

/* Seconds on a monotonic clock. */
double simdbpe__now(void);

/* Why a run stopped: simdbpe_error's fields and the whole message. */
typedef struct run_failure {
    simdbpe_status status;
    uint64_t file;        /* index in job->files, or SIMDBPE_NO_POSITION */
    uint64_t line;        /* 0: none */
    uint64_t byte_offset; /* SIMDBPE_NO_POSITION: none */
    char *message;        /* malloc'ed */
} run_failure;

/*
 * Runs the job into `w`. Returns 0 on success; otherwise -1 with the
 * reason in `f` (the first bad document in input order, or a write error).
 * On success `t` holds the totals (free with simdbpe__run_totals_free()).
 */
int simdbpe__pipeline_run(const job *j, struct writer *w, run_totals *t, run_failure *f);
void simdbpe__run_totals_free(run_totals *t);

#endif
