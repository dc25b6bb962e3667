/* pool.c - worker threads for the local steps of a minibatch (and for tokenising).
 *
 * threads - 1 workers wait for a job; slda_pool_run hands them one over
 * [0, n), the calling thread works too, and items are claimed through an
 * atomic counter. slda_pool_run_pre has the calling thread run one other
 * task first (the previous minibatch's global step, train.c) while the
 * workers start on the items. Which thread runs an item does not change its
 * result: every document's randomness is seeded from the document's index,
 * and results are merged in document order by the caller. So the items can
 * be claimed in any order: slda_pool_run_longest hands out the costliest
 * first (documents by tokens, messages by bytes), leaving the short ones for
 * the end, when a thread still running a long one would keep the others
 * waiting.
 *
 * Hand-over. A minibatch of 32 documents is about a millisecond of work per
 * thread, and waking a thread blocked on a condition variable costs tens of
 * microseconds, twice per minibatch. So a worker that finished polls the
 * job generation SPIN_ROUNDS times before it blocks, and the caller polls
 * the count of busy workers as long before it waits. Publication: the job's
 * fields are written before the generation is stored (release) and read
 * after it is loaded (acquire); a worker's results before its decrement of
 * busy (release), read by the caller after it sees busy at 0 (acquire). The
 * blocking paths check their condition under the mutex that the other side
 * takes to signal, so no wake-up is lost.
 */
#include "model.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#ifndef SLDA_POOL_SPIN
#define SLDA_POOL_SPIN 2000 /* polls, each with a pause: tens of microseconds */
#endif

typedef struct slda_pool_s {
    uint32_t nthreads; /* including the caller */
    pthread_t *tids;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    atomic_uint_fast64_t generation;
    atomic_uint busy;
    atomic_int quit;
    size_t n;
    const uint32_t *order; /* item claimed k-th, or NULL: index order */
    atomic_size_t next;
    void (*job)(size_t, uint32_t, void *);
    void *opaque;
} slda_pool_t;

typedef struct worker_arg_s {
    slda_pool_t *pool;
    uint32_t index;
} worker_arg_t;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void drain(slda_pool_t *pool, uint32_t worker)
{
    size_t k;
    while ((k = atomic_fetch_add(&pool->next, 1)) < pool->n)
        pool->job(pool->order ? pool->order[k] : k, worker, pool->opaque);
}

/* The next generation after seen (or seen when quitting). */
static uint64_t wait_job(slda_pool_t *pool, uint64_t seen)
{
    for (int r = 0; r < SLDA_POOL_SPIN; r++) {
        if (atomic_load_explicit(&pool->generation, memory_order_acquire) != seen ||
            atomic_load(&pool->quit))
            return atomic_load_explicit(&pool->generation, memory_order_acquire);
        cpu_relax();
    }
    pthread_mutex_lock(&pool->mu);
    while (!atomic_load(&pool->quit) &&
           atomic_load_explicit(&pool->generation, memory_order_acquire) == seen)
        pthread_cond_wait(&pool->go, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    return atomic_load_explicit(&pool->generation, memory_order_acquire);
}

static void *worker_main(void *arg)
{
    worker_arg_t *wa = arg;
    slda_pool_t *pool = wa->pool;
    uint32_t index = wa->index;
    uint64_t seen = 0;
    free(wa);
    for (;;) {
        seen = wait_job(pool, seen);
        if (atomic_load(&pool->quit))
            break;
        drain(pool, index);
        if (atomic_fetch_sub_explicit(&pool->busy, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool->mu);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->mu);
        }
    }
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
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->busy, 0);
    atomic_init(&pool->quit, 0);
    atomic_init(&pool->next, 0);
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
    atomic_store(&pool->quit, 1);
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

/* The items in order (NULL: index order) on the pool, pre on this thread
 * first. */
static void run(slda_model_t *model, size_t n, const uint32_t *order,
                void (*job)(size_t, uint32_t, void *), void (*pre)(void *), void *opaque)
{
    slda_pool_t *pool = model->pool;
    if (!pool || n < 2) {
        if (pre)
            pre(opaque);
        for (size_t i = 0; i < n; i++)
            job(i, 0, opaque);
        return;
    }
    pool->job = job;
    pool->opaque = opaque;
    pool->n = n;
    pool->order = order;
    atomic_store(&pool->next, 0);
    atomic_store(&pool->busy, pool->nthreads - 1);
    pthread_mutex_lock(&pool->mu);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    if (pre)
        pre(opaque);
    drain(pool, 0);
    for (int r = 0; r < SLDA_POOL_SPIN; r++) {
        if (atomic_load_explicit(&pool->busy, memory_order_acquire) == 0)
            return;
        cpu_relax();
    }
    pthread_mutex_lock(&pool->mu);
    while (atomic_load_explicit(&pool->busy, memory_order_acquire) > 0)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

void slda_pool_run_pre(slda_model_t *model, size_t n, void (*job)(size_t, uint32_t, void *),
                       void (*pre)(void *), void *opaque)
{
    run(model, n, NULL, job, pre, opaque);
}

typedef struct claim_key_s {
    uint64_t cost;
    size_t index;
} claim_key_t;

static int claim_cmp(const void *a, const void *b)
{
    const claim_key_t *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void slda_pool_run_longest(slda_model_t *model, size_t n,
                           uint64_t (*cost)(size_t i, void *opaque),
                           void (*job)(size_t i, uint32_t worker, void *opaque),
                           void (*pre)(void *opaque), void *opaque)
{
    if (!model->pool || n < 2) {
        run(model, n, NULL, job, pre, opaque);
        return;
    }
    claim_key_t *key = slda_xmalloc(n * sizeof *key);
    uint32_t *order = slda_xmalloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++)
        key[i] = (claim_key_t){cost(i, opaque), i};
    qsort(key, n, sizeof *key, claim_cmp);
    for (size_t k = 0; k < n; k++)
        order[k] = (uint32_t)key[k].index;
    free(key);
    run(model, n, order, job, pre, opaque);
    free(order);
}
