/*
 * dataset.h - the object behind simdbpe_dataset.h, shared by dataset.c
 * (options, checks, inputs) and dataset_run.c (the run, its outputs and
 * marker).
 *
 * Life of a run: new (options checked, strings copied) -> prepare (inputs
 * checked and split by rank, output names fixed, outputs that are inputs
 * refused, marker read) -> run (lock, writer, pipeline, commit, marker).
 * Every failure leaves its whole message in `message`.
 */
#ifndef SIMDBPE_DATASET_INTERNAL_H
#define SIMDBPE_DATASET_INTERNAL_H

#include "simdbpe_dataset.h"

#include "files.h"
#include "outfile.h"
#include "pipeline.h"
#include "writer.h"

struct simdbpe_dataset {
    const simdbpe_model *model;
    simdbpe_dataset_options opts;
    char *output, *model_name, *json_key, *eot_token; /* copies */
    writer_config cfg;
    job j;
    file_list all;     /* every input, as given */
    file_list mine;    /* this rank's (paths shared with `all`) */
    uint64_t *index;   /* mine[k] is all[index[k]] */
    char *base;        /* output name with the rank's part */
    char *marker_path; /* sharded runs */
    int prepared, done, ran;
    outlock lock;
    writer *w;
    run_totals t;
    simdbpe_dataset_result res;
    char *message;
};

/* Records a failure: the whole message in ds->message (ds may be NULL),
 * the rest in err (may be NULL). Returns st. */
simdbpe_status simdbpe__ds_fail(simdbpe_dataset *ds, simdbpe_error *err, simdbpe_status st,
                                uint64_t index, uint64_t line, uint64_t byte_offset,
                                const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* The CPUs this process may use (its affinity mask), at least 1. */
int simdbpe__ds_cpus(void);

/* The dtype as markers spell it: "u16", "u32" or "text". */
const char *simdbpe__ds_dtype_name(const writer_config *cfg);

#endif
