/*
 * dataset_run.c - a dataset run: the output lock, the writer, the
 * pipeline on the pool, then the outputs renamed into place and the
 * rank's marker (see dataset.h).
 */
#include "dataset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marker.h"

static simdbpe_status write_marker(simdbpe_dataset *ds, simdbpe_error *err)
{
    const run_totals *t = &ds->t;
    marker m;
    memset(&m, 0, sizeof m);
    m.format = (char *)simdbpe_output_format_name(ds->cfg.format);
    m.dtype = (char *)simdbpe__ds_dtype_name(&ds->cfg);
    m.eot = (char *)simdbpe_eot_name(ds->cfg.eot);
    m.rank = ds->opts.rank;
    m.world = ds->opts.world_size;
    m.total_files = ds->all.n;
    char list[17];
    simdbpe__marker_input_list(ds->all.paths, ds->all.n, list);
    m.input_list = list;
    m.docs = t->docs;
    m.tokens = t->tokens;
    m.skipped = t->skipped;
    m.n_files = ds->mine.n;
    m.files = calloc(ds->mine.n ? ds->mine.n : 1, sizeof *m.files);
    int e = ENOMEM;
    if (m.files) {
        for (size_t i = 0; i < ds->mine.n; i++) {
            m.files[i].index = ds->index[i];
            m.files[i].path = ds->mine.paths[i];
            m.files[i].docs = t->files[i].docs;
            m.files[i].tokens = t->files[i].tokens;
            m.files[i].skipped = t->files[i].skipped;
        }
        e = simdbpe__marker_write(ds->marker_path, &m);
        free(m.files);
    }
    if (!e)
        return SIMDBPE_OK;
    return simdbpe__ds_fail(ds, err, e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO,
                            SIMDBPE_NO_POSITION, 0, SIMDBPE_NO_POSITION, "%s: %s",
                            ds->marker_path, strerror(e));
}

/* Finishes the outputs, renames them into place, then the marker. */
static simdbpe_status complete(simdbpe_dataset *ds, simdbpe_error *err)
{
    int e = simdbpe__writer_finish(ds->w);
    if (!e)
        e = simdbpe__writer_commit(ds->w);
    if (!e && ds->w->notice[0] && ds->opts.on_message)
        ds->opts.on_message(ds->opts.user, SIMDBPE_DATASET_NOTICE, ds->w->notice);
    if (e) {
        simdbpe__ds_fail(ds, err, e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO,
                         SIMDBPE_NO_POSITION, 0, SIMDBPE_NO_POSITION, "cannot write %s: %s",
                         ds->w->err_path, strerror(e));
        simdbpe__writer_discard(ds->w);
        return err ? err->status : SIMDBPE_ERR_IO;
    }
    return ds->marker_path ? write_marker(ds, err) : SIMDBPE_OK;
}

/* No more workers than the CPUs the process may use, nor than the input
 * has batches for: each costs an encoder (its tables: 6 MB, growing to
 * the cache size) and two batches in flight, and more than the CPUs run
 * no faster (--threads 1000 took 4.2 GB for 36 bytes; 64 workers, 751 MB
 * for 12 MB). The batch bound allows for the small first batches
 * (64 KB) and for inputs that decompress to 16 times their size; unknown
 * sizes (stdin) bound nothing. A caller's pool has the threads it has.
 * Every encoder keeps the caller's budget (or the library's default)
 * whatever their number: with less, a worker's table fills early in a
 * large input and it goes back to BPE for pieces it has seen (two threads
 * with 12 MB each took twice one thread's CPU on 1.35 GB). */
static void limit_threads(simdbpe_dataset *ds)
{
    int cpus = simdbpe__ds_cpus();
    if (!ds->opts.pool && ds->j.threads > cpus)
        ds->j.threads = cpus;
    uint64_t total = simdbpe__files_total_size(&ds->mine);
    uint64_t unit = ds->j.batch_bytes < (64u << 10) ? ds->j.batch_bytes : 64u << 10;
    if (!total || total > UINT64_MAX / 16)
        return;
    uint64_t batches = total * 16 / unit + 1;
    if ((uint64_t)ds->j.threads > batches)
        ds->j.threads = (int)batches;
}

/* Takes the lock of every final file the run writes or removes (and of
 * its marker), removes what a killed run left, and opens the writer. */
static simdbpe_status open_outputs(simdbpe_dataset *ds, simdbpe_error *err)
{
    const char *out = ds->cfg.output;
    char err_path[512];
    char **names;
    size_t n;
    int e = simdbpe__writer_final_names(&ds->cfg, &names, &n);
    if (e)
        return simdbpe__ds_fail(ds, err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                SIMDBPE_NO_POSITION, "out of memory");
    /* Another failure than EBUSY (a missing directory) is reported by the
     * writer, which names its own file; the lock's is said only if it
     * alone fails. */
    int lock_err = 0;
    const char *lock_file = NULL;
    for (size_t i = 0; i <= n && !lock_err; i++) {
        const char *name = i < n ? names[i] : ds->marker_path;
        if (name && (lock_err = simdbpe__outlock_take(&ds->lock, name)) != 0)
            lock_file = name;
    }
    simdbpe_status st = SIMDBPE_OK;
    if (lock_err == EBUSY)
        st = simdbpe__ds_fail(ds, err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                              SIMDBPE_NO_POSITION,
                              "another run is writing %s (it holds its lock, %s.lock): wait for "
                              "it to end, or choose another `output`",
                              lock_file, lock_file);
    char lock_name[600];
    snprintf(lock_name, sizeof lock_name, "%s.lock", lock_file ? lock_file : "");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (st)
        return st;
    if (!lock_err)
        simdbpe__outlock_remove_stale(&ds->lock, out, ds->opts.on_message, ds->opts.user);
    ds->cfg.lock = &ds->lock;
    e = simdbpe__writer_open(&ds->w, &ds->cfg, err_path, sizeof err_path);
    if (e)
        return simdbpe__ds_fail(ds, err, e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO,
                                SIMDBPE_NO_POSITION, 0, SIMDBPE_NO_POSITION, "%s: %s", err_path,
                                strerror(e));
    if (lock_err) {
        simdbpe__writer_discard(ds->w);
        return simdbpe__ds_fail(ds, err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                                SIMDBPE_NO_POSITION, "%s: %s", lock_name, strerror(lock_err));
    }
    return SIMDBPE_OK;
}

/* The pipeline on the caller's pool or an own one. */
static simdbpe_status encode(simdbpe_dataset *ds, simdbpe_error *err)
{
    simdbpe_pool *own = NULL;
    ds->j.pool = ds->opts.pool;
    if (!ds->j.pool) {
        simdbpe_status st = simdbpe_pool_new((unsigned)ds->j.threads, &own, err);
        if (st) {
            simdbpe__writer_discard(ds->w);
            return simdbpe__ds_fail(ds, err, st, SIMDBPE_NO_POSITION, 0, SIMDBPE_NO_POSITION,
                                    "%s", err ? err->message : simdbpe_strerror(st));
        }
        ds->j.pool = own;
    }
    run_failure f;
    int rc = simdbpe__pipeline_run(&ds->j, ds->w, &ds->t, &f);
    simdbpe_pool_free(own);
    ds->j.pool = NULL;
    if (!rc)
        return SIMDBPE_OK;
    simdbpe__writer_discard(ds->w);
    simdbpe_status st = f.message ? f.status : SIMDBPE_ERR_NOMEM;
    /* The pipeline's file index is in this rank's list; err's in `paths`. */
    uint64_t file = f.file < ds->mine.n ? ds->index[f.file] : SIMDBPE_NO_POSITION;
    simdbpe__ds_fail(ds, err, st, file, f.line, f.byte_offset, "%s",
                     f.message ? f.message : "out of memory");
    free(f.message);
    return st;
}

/* The totals in the public form. */
static simdbpe_status fill_result(simdbpe_dataset *ds, simdbpe_error *err)
{
    const run_totals *t = &ds->t;
    simdbpe_dataset_result *r = &ds->res;
    const char **skips = calloc(t->n_skips ? t->n_skips : 1, sizeof *skips);
    if (!skips)
        return simdbpe__ds_fail(ds, err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                SIMDBPE_NO_POSITION, "out of memory");
    for (size_t i = 0; i < t->n_skips; i++)
        skips[i] = t->skips[i].what;
    r->documents = t->docs;
    r->tokens = t->tokens;
    r->bytes = t->in_bytes;
    r->text_bytes = t->text_bytes;
    r->skipped = t->skipped;
    r->cuts = t->cuts;
    r->skipped_documents = skips;
    r->n_skipped_documents = t->n_skips;
    /* The two structs have the same three counters in the same order. */
    r->files = (const simdbpe_dataset_file *)t->files;
    r->n_files = ds->mine.n;
    r->seconds = t->seconds;
    r->kernel = t->kernel;
    r->threads = (unsigned)ds->j.threads;
    r->cache_mb = ds->j.cache_mb ? ds->j.cache_mb : SIMDBPE_CACHE_MB_DEFAULT;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_dataset_run(simdbpe_dataset *ds, simdbpe_error *err)
{
    if (ds->ran || !ds->prepared)
        return simdbpe__ds_fail(ds, err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                                SIMDBPE_NO_POSITION,
                                ds->ran ? "a dataset object runs once" : "no inputs given");
    if (ds->done)
        return SIMDBPE_OK;
    simdbpe_status st;
    ds->ran = 1;
    ds->j.files = ds->mine.paths;
    ds->j.n_files = ds->mine.n;
    limit_threads(ds);
    ds->cfg.files = ds->mine.paths;
    ds->res.output_format = (simdbpe_output_format)ds->cfg.format;
    ds->res.dtype_bytes = ds->cfg.width;
    ds->res.eot = (simdbpe_eot)(ds->cfg.eot + 1);
    ds->res.eot_id = ds->cfg.eot_id;
    st = open_outputs(ds, err);
    if (!st)
        st = encode(ds, err);
    if (!st)
        st = complete(ds, err);
    if (!st)
        st = fill_result(ds, err);
    if (!st && err) {
        err->status = SIMDBPE_OK;
        err->message[0] = '\0';
    }
    return st;
}

simdbpe_status simdbpe_dataset_encode_files(const simdbpe_model *model,
                                            const simdbpe_dataset_options *opts,
                                            const char *const *paths, size_t n_paths,
                                            simdbpe_dataset_result *result, simdbpe_error *err)
{
    simdbpe_dataset *ds;
    simdbpe_status st = simdbpe_dataset_new(model, opts, &ds, err);
    if (st)
        return st;
    st = simdbpe_dataset_prepare(ds, paths, n_paths, err);
    if (!st)
        st = simdbpe_dataset_run(ds, err);
    if (!st && result) {
        *result = ds->res;
        result->skipped_documents = NULL;
        result->files = NULL;
        result->kernel = NULL;
    }
    simdbpe_dataset_free(ds);
    return st;
}
