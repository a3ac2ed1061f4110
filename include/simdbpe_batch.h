/*
 * simdbpe_batch.h - a thread pool, and batch encoding of many documents on it.
 *
 * Kept apart from simdbpe.h: programs that encode one text at a time never
 * see it. It depends on simdbpe.h for the model, the options, the statuses
 * and simdbpe_error.
 *
 * Objects:
 *   simdbpe_pool   N worker threads (the calling thread is worker 0, so N-1
 *                  threads are started) that run numbered tasks. Meant to be
 *                  the one pool of a program: the batch encoder runs on it,
 *                  and any stage that splits its work into tasks can.
 *   simdbpe_batch  a model, a pool (its own or a borrowed one) and one
 *                  encoder per worker, created once and reused across calls
 *                  so that the encoders' piece caches stay warm.
 *
 * Output: one flat array of ids and n_docs + 1 offsets; the ids of document
 * i are ids[offsets[i] .. offsets[i+1]). The result is the same for any
 * number of threads: each document is encoded whole by one encoder, and an
 * encoder's result never depends on what it encoded before.
 *
 * Errors: the first failing document in input order is reported, whatever
 * the thread count: err->index is its index, err->byte_offset the offset in
 * that document (as simdbpe_encode gives it), and err->message starts with
 * "document N: ".
 */
#ifndef SIMDBPE_BATCH_H
#define SIMDBPE_BATCH_H

#include "simdbpe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ pool */

typedef struct simdbpe_pool simdbpe_pool;

/* A pool of `threads` workers (0: the number of online CPUs); starts
 * threads - 1 threads, which sleep until there is work. */
SIMDBPE_API simdbpe_status simdbpe_pool_new(unsigned threads, simdbpe_pool **out,
                                            simdbpe_error *err);

/* The number of workers, the calling thread included. */
SIMDBPE_API unsigned simdbpe_pool_threads(const simdbpe_pool *pool);

/* Stops and joins the threads. The pool must be idle. */
SIMDBPE_API void simdbpe_pool_free(simdbpe_pool *pool);

/* A task: `task` is its number, `worker` (0 .. workers-1) the worker running
 * it, so callers can keep state per worker without locks. */
typedef void (*simdbpe_pool_task_fn)(void *user, size_t task, unsigned worker);

/*
 * Runs fn(user, t, w) once for every t in [0, n_tasks) on the first
 * `workers` workers (0 or more than the pool has: all of them) and returns
 * when every task has finished. Tasks are handed out in increasing order,
 * each to whichever worker is free, so the order in which they finish is
 * not fixed; a task that must stop the others records that in `user`.
 * One run at a time per pool: a second caller waits until the first run
 * is over. `fn` must not run the same pool (it would wait for itself).
 */
SIMDBPE_API void simdbpe_pool_run(simdbpe_pool *pool, size_t n_tasks, unsigned workers,
                                  simdbpe_pool_task_fn fn, void *user);

/* ---------------------------------------------------------------- batch */

typedef struct simdbpe_batch simdbpe_batch;

typedef struct simdbpe_batch_options {
    /* Workers of the batch's own pool (0: the number of online CPUs);
     * ignored when `pool` is set. */
    unsigned threads;
    /* A pool to run on instead of an own one; it must outlive the batch. */
    simdbpe_pool *pool;
    /* Each encoder's cache_mb (see simdbpe_encoder_options); 0: the
     * encoder's default. */
    unsigned cache_mb;
} simdbpe_batch_options;

/* The defaults, for declaring options (see SIMDBPE_ENCODE_OPTIONS_INIT). */
#define SIMDBPE_BATCH_OPTIONS_INIT {0, NULL, 0}

/* A batch encoder for `model`, which must outlive it; `opts` may be NULL
 * (own pool on every CPU, default caches). Encoders are made on first use. */
SIMDBPE_API simdbpe_status simdbpe_batch_new(const simdbpe_model *model,
                                             const simdbpe_batch_options *opts, simdbpe_batch **out,
                                             simdbpe_error *err);

/* The number of workers of the batch's pool. */
SIMDBPE_API unsigned simdbpe_batch_threads(const simdbpe_batch *batch);

SIMDBPE_API void simdbpe_batch_free(simdbpe_batch *batch);

/*
 * Encodes texts[0 .. n_docs), each of lens[i] bytes, on up to `threads`
 * workers (0: all of the pool's). `opts` as for simdbpe_encode (NULL: text
 * specials, strict UTF-8).
 *
 * On success *ids (*n_ids ids) and *offsets (n_docs + 1 entries, offsets[0]
 * is 0 and offsets[n_docs] is *n_ids) are new arrays that the caller owns
 * and releases with simdbpe_free(). n_docs may be 0 (then *n_ids is 0 and
 * *offsets holds one 0). On failure nothing is returned (*ids and *offsets
 * are NULL) and `err` names the first failing document (see above).
 *
 * Calls on one batch from several threads are safe: they take turns.
 */
SIMDBPE_API simdbpe_status simdbpe_batch_encode(simdbpe_batch *batch, const char *const *texts,
                                                const size_t *lens, size_t n_docs,
                                                const simdbpe_encode_options *opts,
                                                unsigned threads, uint32_t **ids, size_t *n_ids,
                                                size_t **offsets, simdbpe_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SIMDBPE_BATCH_H */
