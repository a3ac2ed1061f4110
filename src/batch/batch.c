/*
 * batch.c - many documents encoded on a pool (simdbpe_batch.h).
 *
 * A call runs in two steps on the pool:
 *
 *   1. encode: consecutive documents are grouped into tasks of about
 *      `target` bytes; a worker encodes a task's documents one by one with
 *      its own encoder and appends the ids to its own arena, writing each
 *      document's count into offsets[d + 1] (distinct slots, no lock).
 *   2. place: after a prefix sum over offsets, each task's ids are copied
 *      from the arena of the worker that ran it to ids + offsets[first].
 *
 *   worker arenas:  w0 [t0 ids][t3 ids]      w1 [t1 ids][t2 ids]
 *   flat output:    [t0 ids][t1 ids][t2 ids][t3 ids]   (tasks in order)
 *
 * Which worker ran which task changes from run to run; the output does not,
 * because every document is encoded whole and alone. A failing document is
 * recorded if it comes before the one recorded so far (fail_doc), and tasks
 * wholly after a recorded failure are skipped, so the error reported is the
 * first failing document in input order for any thread count.
 */
#include "simdbpe_batch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Task sizes: a few tasks per worker for balance, bounded both ways. */
#define TASK_MIN_BYTES (16u << 10)
#define TASK_MAX_BYTES (1u << 20)
#define TASKS_PER_WORKER 8
/* Bytes an empty document counts as when grouping (the call's overhead). */
#define DOC_WEIGHT 64
/* An arena larger than this (in ids) is released after the call. */
#define ARENA_KEEP (4u << 20)
/* Below this many ids the place step runs on the calling thread. */
#define PLACE_PARALLEL_IDS (1u << 20)

typedef struct worker {
    simdbpe_encoder *enc;
    uint32_t *buf;
    size_t len, cap; /* in ids */
} worker;

struct simdbpe_batch {
    const simdbpe_model *model;
    simdbpe_pool *pool;
    int own_pool;
    unsigned cache_mb;
    pthread_mutex_t mu; /* one call at a time */
    worker *workers;    /* one per pool worker */
};

typedef struct task {
    size_t first, end; /* documents [first, end) */
    size_t start, n;   /* ids in the arena of `worker` */
    unsigned worker;
} task;

typedef struct run {
    simdbpe_batch *b;
    const char *const *texts;
    const size_t *lens;
    const simdbpe_encode_options *opts;
    task *tasks;
    size_t *offsets;
    uint32_t *out;
    atomic_size_t fail_doc; /* SIZE_MAX: none yet */
    pthread_mutex_t fail_mu;
    simdbpe_status fail_st;
    simdbpe_error fail_err;
} run;

simdbpe_status simdbpe_batch_new(const simdbpe_model *model, const simdbpe_batch_options *opts,
                                 simdbpe_batch **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out || !model)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "batch: no model or no place for the result");
    *out = NULL;
    simdbpe_batch *b = calloc(1, sizeof *b);
    if (!b)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "batch: out of memory");
    b->model = model;
    if (opts && opts->pool) {
        b->pool = opts->pool;
    } else {
        simdbpe_status st = simdbpe_pool_new(opts ? opts->threads : 0, &b->pool, err);
        if (st != SIMDBPE_OK) {
            free(b);
            return st;
        }
        b->own_pool = 1;
    }
    unsigned n = simdbpe_pool_threads(b->pool);
    b->cache_mb = opts ? opts->cache_mb : 0;
    b->workers = calloc(n, sizeof *b->workers);
    if (!b->workers) {
        simdbpe_batch_free(b);
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "batch: out of memory");
    }
    pthread_mutex_init(&b->mu, NULL);
    *out = b;
    return SIMDBPE_OK;
}

unsigned simdbpe_batch_threads(const simdbpe_batch *batch)
{
    return batch ? simdbpe_pool_threads(batch->pool) : 0;
}

void simdbpe_batch_free(simdbpe_batch *b)
{
    if (!b)
        return;
    if (b->workers) {
        for (unsigned i = 0; i < simdbpe_pool_threads(b->pool); i++) {
            simdbpe_encoder_free(b->workers[i].enc);
            free(b->workers[i].buf);
        }
        free(b->workers);
        pthread_mutex_destroy(&b->mu);
    }
    if (b->own_pool)
        simdbpe_pool_free(b->pool);
    free(b);
}

/* Records document d's failure if no earlier document has failed. */
static void record_failure(run *r, size_t d, simdbpe_status st, const simdbpe_error *e)
{
    pthread_mutex_lock(&r->fail_mu);
    if (d < atomic_load(&r->fail_doc)) {
        atomic_store(&r->fail_doc, d);
        r->fail_st = st;
        r->fail_err.status = st;
        r->fail_err.byte_offset = e ? e->byte_offset : SIMDBPE_NO_POSITION;
        r->fail_err.line = 0;
        r->fail_err.index = d;
        snprintf(r->fail_err.message, sizeof r->fail_err.message, "document %zu: %.200s", d,
                 e ? e->message : simdbpe_strerror(st));
    }
    pthread_mutex_unlock(&r->fail_mu);
}

static simdbpe_status ensure_encoder(simdbpe_batch *b, worker *w)
{
    if (w->enc)
        return SIMDBPE_OK;
    simdbpe_encoder_options eo = SIMDBPE_ENCODER_OPTIONS_INIT;
    eo.cache_mb = b->cache_mb;
    return simdbpe_encoder_new_with(b->model, &eo, &w->enc, NULL);
}

/* Appends n ids to the worker's arena; -1 when out of memory. */
static int arena_append(worker *w, const uint32_t *ids, size_t n)
{
    if (simdbpe__grow((void **)&w->buf, &w->cap, w->len + n, sizeof *w->buf))
        return -1;
    if (n)
        memcpy(w->buf + w->len, ids, n * sizeof *ids);
    w->len += n;
    return 0;
}

static void encode_task(void *user, size_t t, unsigned wi)
{
    run *r = user;
    task *tk = &r->tasks[t];
    worker *w = &r->b->workers[wi];
    tk->worker = wi;
    tk->start = w->len;
    tk->n = 0;
    if (tk->first > atomic_load_explicit(&r->fail_doc, memory_order_relaxed))
        return; /* an earlier document failed: this output is never used */
    simdbpe_status st = ensure_encoder(r->b, w);
    if (st != SIMDBPE_OK) {
        record_failure(r, tk->first, st, NULL);
        return;
    }
    simdbpe_error e;
    for (size_t d = tk->first; d < tk->end; d++) {
        const uint32_t *ids;
        size_t n;
        st = simdbpe_encode(w->enc, r->texts[d] ? r->texts[d] : "", r->lens[d], r->opts, &ids, &n, &e);
        if (st == SIMDBPE_OK && arena_append(w, ids, n))
            st = simdbpe__fail(&e, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                               "out of memory for the batch's ids");
        if (st != SIMDBPE_OK) {
            record_failure(r, d, st, &e);
            return;
        }
        r->offsets[d + 1] = n;
    }
    tk->n = w->len - tk->start;
}

static void place_task(void *user, size_t t, unsigned wi)
{
    (void)wi;
    run *r = user;
    const task *tk = &r->tasks[t];
    if (tk->n)
        memcpy(r->out + r->offsets[tk->first], r->b->workers[tk->worker].buf + tk->start,
               tk->n * sizeof *r->out);
}

/* Groups documents into tasks; returns the task count (0: out of memory). */
static size_t make_tasks(const size_t *lens, size_t n_docs, unsigned workers, task **out)
{
    size_t total = 0;
    for (size_t d = 0; d < n_docs; d++)
        total += lens[d] + DOC_WEIGHT;
    size_t target = total / ((size_t)workers * TASKS_PER_WORKER);
    target = target < TASK_MIN_BYTES ? TASK_MIN_BYTES
             : target > TASK_MAX_BYTES ? TASK_MAX_BYTES
                                       : target;
    size_t cap = total / target + 2; /* every task but the last holds >= target */
    if (cap > n_docs)
        cap = n_docs;
    task *tasks = calloc(cap, sizeof *tasks);
    if (!tasks)
        return 0;
    size_t nt = 0, acc = 0;
    tasks[0].first = 0;
    for (size_t d = 0; d < n_docs; d++) {
        acc += lens[d] + DOC_WEIGHT;
        if (acc >= target || d + 1 == n_docs) {
            tasks[nt].end = d + 1;
            if (++nt < cap)
                tasks[nt].first = d + 1;
            acc = 0;
        }
    }
    *out = tasks;
    return nt;
}

static simdbpe_status check_args(const char *const *texts, const size_t *lens, size_t n_docs,
                                 uint32_t **ids, size_t *n_ids, size_t **offsets,
                                 simdbpe_error *err)
{
    if (!ids || !n_ids || !offsets || (n_docs && (!texts || !lens)))
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "batch: missing texts, lengths or result pointers");
    for (size_t d = 0; d < n_docs; d++) {
        if (!texts[d] && lens[d]) {
            simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                          "document %zu: NULL text of %zu bytes", d, lens[d]);
            err ? (void)(err->index = d) : (void)0;
            return SIMDBPE_ERR_INVALID_ARG;
        }
    }
    return SIMDBPE_OK;
}

/* Runs both steps; the caller holds b->mu. */
static simdbpe_status encode_locked(run *r, size_t n_docs, unsigned threads, size_t *n_ids,
                                    simdbpe_error *err)
{
    simdbpe_batch *b = r->b;
    unsigned pool_n = simdbpe_pool_threads(b->pool);
    unsigned workers = threads == 0 || threads > pool_n ? pool_n : threads;
    size_t nt = make_tasks(r->lens, n_docs, workers, &r->tasks);
    if (!nt)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "batch: out of memory");
    for (unsigned i = 0; i < pool_n; i++)
        b->workers[i].len = 0;
    simdbpe_pool_run(b->pool, nt, workers, encode_task, r);
    if (atomic_load(&r->fail_doc) != SIZE_MAX) {
        if (err)
            *err = r->fail_err;
        return r->fail_st;
    }
    for (size_t d = 0; d < n_docs; d++)
        r->offsets[d + 1] += r->offsets[d];
    *n_ids = r->offsets[n_docs];
    r->out = malloc((*n_ids ? *n_ids : 1) * sizeof *r->out);
    if (!r->out)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "batch: out of memory for %zu ids", *n_ids);
    simdbpe_pool_run(b->pool, nt, *n_ids >= PLACE_PARALLEL_IDS ? workers : 1, place_task, r);
    return SIMDBPE_OK;
}

/* Releases arenas that one large call grew, so a batch does not keep them. */
static void trim_arenas(simdbpe_batch *b)
{
    for (unsigned i = 0; i < simdbpe_pool_threads(b->pool); i++) {
        worker *w = &b->workers[i];
        if (w->cap > ARENA_KEEP) {
            free(w->buf);
            w->buf = NULL;
            w->cap = 0;
        }
        w->len = 0;
    }
}

simdbpe_status simdbpe_batch_encode(simdbpe_batch *b, const char *const *texts,
                                    const size_t *lens, size_t n_docs,
                                    const simdbpe_encode_options *opts, unsigned threads,
                                    uint32_t **ids, size_t *n_ids, size_t **offsets,
                                    simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!b)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "batch: no batch");
    simdbpe_status st = check_args(texts, lens, n_docs, ids, n_ids, offsets, err);
    if (st != SIMDBPE_OK)
        return st;
    *ids = NULL;
    *offsets = NULL;
    *n_ids = 0;
    run r = {.b = b, .texts = texts, .lens = lens, .opts = opts, .fail_st = SIMDBPE_OK};
    atomic_init(&r.fail_doc, SIZE_MAX);
    r.offsets = calloc(n_docs + 1, sizeof *r.offsets);
    if (!r.offsets)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "batch: out of memory for %zu offsets", n_docs + 1);
    if (n_docs == 0) {
        *offsets = r.offsets;
        *ids = malloc(sizeof **ids);
        if (*ids)
            return SIMDBPE_OK;
        free(r.offsets);
        *offsets = NULL;
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "batch: out of memory");
    }
    pthread_mutex_init(&r.fail_mu, NULL);
    pthread_mutex_lock(&b->mu);
    st = encode_locked(&r, n_docs, threads, n_ids, err);
    trim_arenas(b);
    pthread_mutex_unlock(&b->mu);
    pthread_mutex_destroy(&r.fail_mu);
    free(r.tasks);
    if (st != SIMDBPE_OK) {
        free(r.offsets);
        free(r.out);
        *n_ids = 0;
        return st;
    }
    *ids = r.out;
    *offsets = r.offsets;
    return SIMDBPE_OK;
}
