/*
 * pool.c - the library's thread pool (simdbpe_batch.h).
 *
 * A run hands out task numbers from one atomic counter; worker 0 is the
 * caller, workers 1..N-1 are threads started once and parked on a
 * condition variable between runs. A run is announced by bumping
 * `generation` under `mu`; each helper that takes part decrements `busy`
 * when the counter is exhausted, and the caller waits for busy == 0.
 * `run_mu` keeps runs from different callers apart.
 */
#include "simdbpe_batch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

/* More workers than this is a caller's mistake, not a machine. */
#define MAX_THREADS 1024u

typedef struct helper {
    struct simdbpe_pool *pool;
    unsigned id;
    pthread_t tid;
} helper;

struct simdbpe_pool {
    unsigned threads;
    helper *helpers; /* threads - 1 of them */
    pthread_mutex_t run_mu;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    uint64_t generation; /* under mu */
    int stop;            /* under mu */
    unsigned busy;       /* helpers still in the current run, under mu */
    /* The current run: written by the caller before it bumps generation,
     * read by helpers after they see the new generation (under mu). */
    simdbpe_pool_task_fn fn;
    void *user;
    size_t n_tasks;
    unsigned workers;
    atomic_size_t next;
};

static void drain(simdbpe_pool *p, unsigned worker)
{
    for (;;) {
        size_t t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (t >= p->n_tasks)
            return;
        p->fn(p->user, t, worker);
    }
}

static void *helper_main(void *arg)
{
    helper *h = arg;
    simdbpe_pool *p = h->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        if (h->id >= p->workers)
            continue; /* not part of this run */
        pthread_mutex_unlock(&p->mu);
        drain(p, h->id);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > (long)MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

/* Stops and joins the first `started` helpers, then frees the pool. */
static void pool_destroy(simdbpe_pool *p, unsigned started)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(p->helpers[i].tid, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->run_mu);
    free(p->helpers);
    free(p);
}

simdbpe_status simdbpe_pool_new(unsigned threads, simdbpe_pool **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "pool: no place for the result");
    *out = NULL;
    if (threads == 0)
        threads = online_cpus();
    if (threads > MAX_THREADS)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "pool: %u threads is more than %u", threads, MAX_THREADS);
    simdbpe_pool *p = calloc(1, sizeof *p);
    helper *hs = calloc(threads, sizeof *hs); /* threads - 1 used; never 0 bytes */
    if (!p || !hs) {
        free(p);
        free(hs);
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "pool: out of memory");
    }
    p->threads = threads;
    p->helpers = hs;
    pthread_mutex_init(&p->run_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    for (unsigned i = 0; i + 1 < threads; i++) {
        hs[i].pool = p;
        hs[i].id = i + 1;
        if (pthread_create(&hs[i].tid, NULL, helper_main, &hs[i]) != 0) {
            pool_destroy(p, i);
            return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                 "pool: cannot start thread %u of %u", i + 2, threads);
        }
    }
    *out = p;
    return SIMDBPE_OK;
}

unsigned simdbpe_pool_threads(const simdbpe_pool *pool)
{
    return pool ? pool->threads : 0;
}

void simdbpe_pool_free(simdbpe_pool *pool)
{
    if (pool)
        pool_destroy(pool, pool->threads - 1);
}

void simdbpe_pool_run(simdbpe_pool *p, size_t n_tasks, unsigned workers,
                      simdbpe_pool_task_fn fn, void *user)
{
    if (!p || !fn || n_tasks == 0)
        return;
    if (workers == 0 || workers > p->threads)
        workers = p->threads;
    if (workers > n_tasks)
        workers = (unsigned)n_tasks;
    pthread_mutex_lock(&p->run_mu);
    p->fn = fn;
    p->user = user;
    p->n_tasks = n_tasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    if (workers > 1) {
        pthread_mutex_lock(&p->mu);
        p->workers = workers;
        p->busy = workers - 1;
        p->generation++;
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    drain(p, 0);
    if (workers > 1) {
        pthread_mutex_lock(&p->mu);
        while (p->busy)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_unlock(&p->run_mu);
}
