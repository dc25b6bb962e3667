/* pool.c - worker threads for the local steps of a minibatch.
 *
 * threads - 1 workers wait on a condition variable; slda_pool_run hands them
 * a job over [0, n), the calling thread works too, and items are claimed
 * through an atomic counter. slda_pool_run_pre has the calling thread run
 * one other task first (the previous minibatch's global step, train.c)
 * while the workers start on the items. Which thread runs an item does not change its
 * result: every document's randomness is seeded from the document's index,
 * and results are merged in document order by the caller.
 */
#include "model.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct slda_pool_s {
    uint32_t nthreads; /* including the caller */
    pthread_t *tids;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    uint64_t generation;
    uint32_t busy;
    int quit;
    size_t n;
    atomic_size_t next;
    void (*job)(size_t, uint32_t, void *);
    void *opaque;
} slda_pool_t;

typedef struct worker_arg_s {
    slda_pool_t *pool;
    uint32_t index;
} worker_arg_t;

static void drain(slda_pool_t *pool, uint32_t worker)
{
    size_t i;
    while ((i = atomic_fetch_add(&pool->next, 1)) < pool->n)
        pool->job(i, worker, pool->opaque);
}

static void *worker_main(void *arg)
{
    worker_arg_t *wa = arg;
    slda_pool_t *pool = wa->pool;
    uint32_t index = wa->index;
    uint64_t seen = 0;
    free(wa);
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->quit && pool->generation == seen)
            pthread_cond_wait(&pool->go, &pool->mu);
        if (pool->quit)
            break;
        seen = pool->generation;
        pthread_mutex_unlock(&pool->mu);
        drain(pool, index);
        pthread_mutex_lock(&pool->mu);
        if (--pool->busy == 0)
            pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

slda_err_t slda_pool_start(slda_model_t *model, char *errstr, size_t errstr_size)
{
    uint32_t nt = model->p.threads ? model->p.threads : 1;
    if (nt <= 1)
        return SLDA_OK;
    slda_pool_t *pool = slda_xcalloc(1, sizeof *pool);
    pool->nthreads = nt;
    pool->tids = slda_xcalloc(nt, sizeof *pool->tids);
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->go, NULL);
    pthread_cond_init(&pool->done, NULL);
    model->pool = pool;
    for (uint32_t i = 1; i < nt; i++) {
        worker_arg_t *wa = slda_xmalloc(sizeof *wa);
        wa->pool = pool;
        wa->index = i;
        if (pthread_create(&pool->tids[i], NULL, worker_main, wa) != 0) {
            free(wa);
            pool->nthreads = i;
            slda_pool_stop(model);
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "property \"threads\": cannot start thread %u", i);
        }
    }
    return SLDA_OK;
}

void slda_pool_stop(slda_model_t *model)
{
    slda_pool_t *pool = model->pool;
    if (!pool)
        return;
    pthread_mutex_lock(&pool->mu);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    for (uint32_t i = 1; i < pool->nthreads; i++)
        pthread_join(pool->tids[i], NULL);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->go);
    pthread_cond_destroy(&pool->done);
    free(pool->tids);
    free(pool);
    model->pool = NULL;
}

uint32_t slda_pool_threads(const slda_model_t *model)
{
    return model->pool ? model->pool->nthreads : 1;
}

void slda_pool_run(slda_model_t *model, size_t n, void (*job)(size_t, uint32_t, void *),
                   void *opaque)
{
    slda_pool_run_pre(model, n, job, NULL, opaque);
}

void slda_pool_run_pre(slda_model_t *model, size_t n, void (*job)(size_t, uint32_t, void *),
                       void (*pre)(void *), void *opaque)
{
    slda_pool_t *pool = model->pool;
    if (!pool || n < 2) {
        if (pre)
            pre(opaque);
        for (size_t i = 0; i < n; i++)
            job(i, 0, opaque);
        return;
    }
    pthread_mutex_lock(&pool->mu);
    pool->job = job;
    pool->opaque = opaque;
    pool->n = n;
    atomic_store(&pool->next, 0);
    pool->busy = pool->nthreads - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    if (pre)
        pre(opaque);
    drain(pool, 0);
    pthread_mutex_lock(&pool->mu);
    while (pool->busy > 0)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}
