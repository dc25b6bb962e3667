/* pool.c - worker threads running the items of one job at a time (local steps, tokenising).
 *
 * threads - 1 workers wait for a job; slda_pool_run hands them one over
 * [0, n), the calling thread works too, and items are claimed through one
 * atomic word (Claims, below). slda_pool_run_pre has the calling thread run
 * one other task first (the previous minibatch's global step, train.c) while
 * the workers start on the items. Which thread runs an item does not change its
 * result: every document's randomness is seeded from the document's index,
 * and results are merged in document order by the caller. So the items can
 * be claimed in any order: slda_pool_run_longest hands out the costliest
 * first (documents by tokens, messages by bytes), leaving the short ones for
 * the end, when a thread still running a long one would keep the others
 * waiting.
 *
 * Hand-over. A minibatch of 32 documents is about a millisecond of work per
 * thread, and waking a thread blocked on a condition variable costs tens of
 * microseconds, twice per minibatch. So a worker that finished polls for
 * the next job SLDA_POOL_SPIN times before it blocks, and the caller polls
 * the count of finished items as long before it waits. Not with more threads
 * than CPUs the process may run on (sched_getaffinity): a thread polling
 * there holds a CPU that a thread with work needs; they block at once (KOS,
 * K=100, three threads on two CPUs: 0.158 -> 0.145 s; two threads 0.128 s).
 *
 * Claims. One word holds the job's generation (high 32 bits) and the count of
 * its items still to claim (low 32 bits); a thread claims item n - left by a
 * compare-and-swap that decrements it. The caller waits for its n items to
 * finish, not for the workers: a worker still asleep when the last item is
 * claimed (a service thread does serial work between minibatches for longer
 * than a worker polls) claims nothing, and the caller goes on without it. It
 * may wake later, and then claims from whatever job is current. Why that is
 * safe: an item claimed is not finished yet, so the caller cannot yet
 * rewrite the job's fields, and the generation in the word makes a
 * claim against a job that has since ended fail. Publication: the fields are
 * written before the word is stored (release), and read after a claim
 * (acquire, the CAS continues the store's release sequence); an item's results
 * before its increment of done (release), read by the caller after it sees
 * done at n (acquire). The blocking paths check their condition under the
 * mutex that the other side takes to signal, so no wake-up is lost.
 */
#include "core/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#ifndef SLDA_POOL_SPIN
#define SLDA_POOL_SPIN 2000 /* polls, each with a pause: tens of microseconds */
#endif

struct slda_pool_s {
    uint32_t nthreads; /* including the caller */
    int spin;          /* polls before blocking: SLDA_POOL_SPIN, or 0 (more threads than CPUs) */
    pthread_t *tids;
    pthread_mutex_t mu;
    pthread_cond_t go, done_cv;
    atomic_uint_fast64_t claim; /* generation << 32 | items left to claim */
    atomic_size_t done;         /* items of the current job finished */
    atomic_int quit;
    size_t n;
    const uint32_t *order; /* item claimed k-th, or NULL: index order */
    void (*job)(size_t, uint32_t, void *);
    void *opaque;
};

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

static inline uint64_t generation_of(uint64_t word)
{
    return word >> 32;
}

/* Claim an item of the current job: its claim position in *k and the job's
 * item count in *n; 0 when every item is claimed. */
static int claim(slda_pool_t *pool, size_t *k, size_t *n)
{
    uint64_t w = atomic_load_explicit(&pool->claim, memory_order_acquire);
    while ((uint32_t)w != 0) {
        if (atomic_compare_exchange_weak_explicit(&pool->claim, &w, w - 1,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *n = pool->n;
            *k = *n - (uint32_t)w;
            return 1;
        }
    }
    return 0;
}

/* Run items until none is left to claim; worker 0 is the caller, which waits
 * for the last item itself, so only the workers signal it. */
static void drain(slda_pool_t *pool, uint32_t worker)
{
    size_t k, n;
    while (claim(pool, &k, &n)) {
        pool->job(pool->order ? pool->order[k] : k, worker, pool->opaque);
        if (atomic_fetch_add_explicit(&pool->done, 1, memory_order_acq_rel) + 1 == n &&
            worker) {
            pthread_mutex_lock(&pool->mu);
            pthread_cond_signal(&pool->done_cv);
            pthread_mutex_unlock(&pool->mu);
        }
    }
}

/* The generation of the next job after seen (or any when quitting). */
static uint64_t wait_job(slda_pool_t *pool, uint64_t seen)
{
    for (int r = 0; r < pool->spin; r++) {
        uint64_t g = generation_of(atomic_load_explicit(&pool->claim, memory_order_acquire));
        if (g != seen || atomic_load(&pool->quit))
            return g;
        cpu_relax();
    }
    pthread_mutex_lock(&pool->mu);
    while (!atomic_load(&pool->quit) &&
           generation_of(atomic_load_explicit(&pool->claim, memory_order_acquire)) == seen)
        pthread_cond_wait(&pool->go, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    return generation_of(atomic_load_explicit(&pool->claim, memory_order_acquire));
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
    }
    return NULL;
}

slda_err_t slda_pool_new(uint32_t nthreads, slda_pool_t **out, char *errstr, size_t errstr_size)
{
    uint32_t nt = nthreads ? nthreads : 1;
    *out = NULL;
    if (nt <= 1)
        return SLDA_OK;
    slda_pool_t *pool = slda_xcalloc(1, sizeof *pool);
    pool->nthreads = nt;
    cpu_set_t cpus;
    pool->spin = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && (uint32_t)CPU_COUNT(&cpus) < nt
                     ? 0
                     : SLDA_POOL_SPIN;
    pool->tids = slda_xcalloc(nt, sizeof *pool->tids);
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->go, NULL);
    pthread_cond_init(&pool->done_cv, NULL);
    atomic_init(&pool->claim, 0);
    atomic_init(&pool->done, 0);
    atomic_init(&pool->quit, 0);
    for (uint32_t i = 1; i < nt; i++) {
        worker_arg_t *wa = slda_xmalloc(sizeof *wa);
        wa->pool = pool;
        wa->index = i;
        if (pthread_create(&pool->tids[i], NULL, worker_main, wa) != 0) {
            free(wa);
            pool->nthreads = i;
            slda_pool_destroy(pool);
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "property \"threads\": cannot start thread %u", i);
        }
    }
    *out = pool;
    return SLDA_OK;
}

void slda_pool_destroy(slda_pool_t *pool)
{
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
    pthread_cond_destroy(&pool->done_cv);
    free(pool->tids);
    free(pool);
}

int slda_pool_spins(const slda_pool_t *pool)
{
    return pool && pool->spin > 0;
}

uint32_t slda_pool_threads(const slda_pool_t *pool)
{
    return pool ? pool->nthreads : 1;
}

void slda_pool_run(slda_pool_t *pool, size_t n, void (*job)(size_t, uint32_t, void *),
                   void *opaque)
{
    slda_pool_run_pre(pool, n, job, NULL, opaque);
}

/* The items in order (NULL: index order) on the pool, pre on this thread
 * first. */
static void run(slda_pool_t *pool, size_t n, const uint32_t *order,
                void (*job)(size_t, uint32_t, void *), void (*pre)(void *), void *opaque)
{
    if (!pool || n < 2 || n > UINT32_MAX) { /* more than 2^32 items: never seen, serial */
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
    atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
    uint64_t g = generation_of(atomic_load_explicit(&pool->claim, memory_order_relaxed)) + 1;
    pthread_mutex_lock(&pool->mu);
    atomic_store_explicit(&pool->claim, (g & 0xffffffffu) << 32 | n, memory_order_release);
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    if (pre)
        pre(opaque);
    drain(pool, 0);
    for (int r = 0; r < pool->spin; r++) {
        if (atomic_load_explicit(&pool->done, memory_order_acquire) == n)
            return;
        cpu_relax();
    }
    pthread_mutex_lock(&pool->mu);
    while (atomic_load_explicit(&pool->done, memory_order_acquire) < n)
        pthread_cond_wait(&pool->done_cv, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

void slda_pool_run_pre(slda_pool_t *pool, size_t n, void (*job)(size_t, uint32_t, void *),
                       void (*pre)(void *), void *opaque)
{
    run(pool, n, NULL, job, pre, opaque);
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

void slda_pool_run_longest(slda_pool_t *pool, size_t n,
                           uint64_t (*cost)(size_t i, void *opaque),
                           void (*job)(size_t i, uint32_t worker, void *opaque),
                           void (*pre)(void *opaque), void *opaque)
{
    if (!pool || n < 2) {
        run(pool, n, NULL, job, pre, opaque);
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
    run(pool, n, order, job, pre, opaque);
    free(order);
}
