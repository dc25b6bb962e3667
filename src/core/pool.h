/* pool.h - worker threads that run the items of one job at a time (pool.c). */
#ifndef SLDA_POOL_H
#define SLDA_POOL_H

#include "core/slda_int.h"

/* A pool of nthreads threads counting the caller: nthreads - 1 workers. A
 * NULL pool (nthreads <= 1) is valid everywhere and runs every item inline,
 * in index order. Which thread runs an item must not change its result
 * (callers seed each item's randomness from its index and merge results in
 * index order), so the models are the same for any thread count. */
typedef struct slda_pool_s slda_pool_t;

/* *out = a new pool, or NULL for nthreads <= 1. SLDA_ERR_INVALID when a
 * thread cannot be started ("property \"threads\": ..."). */
slda_err_t slda_pool_new(uint32_t nthreads, slda_pool_t **out, char *errstr, size_t errstr_size);
/* Stops and joins the workers; accepts NULL. */
void slda_pool_destroy(slda_pool_t *pool);
/* Threads counting the caller (1 for NULL). */
uint32_t slda_pool_threads(const slda_pool_t *pool);
/* 1 when the pool's threads poll before they block (pool.c "Hand-over"): not
 * with more threads than CPUs the process may run on. */
int slda_pool_spins(const slda_pool_t *pool);
/* job(i, worker, opaque) for i in [0, n), the caller working too (worker 0). */
void slda_pool_run(slda_pool_t *pool, size_t n,
                   void (*job)(size_t i, uint32_t worker, void *opaque), void *opaque);
/* The same, the calling thread running pre(opaque) first (with one thread:
 * pre, then the items); pre must not touch what the items read or write. */
void slda_pool_run_pre(slda_pool_t *pool, size_t n, void (*job)(size_t, uint32_t, void *),
                       void (*pre)(void *), void *opaque);
/* The same, the items claimed in decreasing cost(i, opaque) (ties in index
 * order) so that no thread is left running one long item while the others
 * wait for the next hand-over; for items whose results do not depend on the
 * thread or the moment that runs them. pre (may be NULL) as in
 * slda_pool_run_pre. With one thread: pre, then index order. */
void slda_pool_run_longest(slda_pool_t *pool, size_t n, uint64_t (*cost)(size_t i, void *opaque),
                           void (*job)(size_t i, uint32_t worker, void *opaque),
                           void (*pre)(void *opaque), void *opaque);

#endif /* SLDA_POOL_H */
