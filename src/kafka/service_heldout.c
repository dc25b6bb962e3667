/* service_heldout.c - the held-out reservoir: documents kept for held-out perplexity.
 *
 * A uniform reservoir of at most HELDOUT_MAX documents, kept by word key
 * (slda_heldout_t: ids go stale once the vocabulary evicts). A replica stages
 * its held-out documents until the transaction holding their minibatch
 * commits (or forgets them when it is dropped), as it does its trained ones.
 */
#include "kafka/service_int.h"

#include <stdlib.h>
#include <string.h>

#define HELDOUT_MAX 1000      /* documents kept for held-out perplexity */

/* Counts a held-out document and picks its reservoir slot (a uniform
 * sample of at most HELDOUT_MAX); SIZE_MAX: not kept. */
static size_t heldout_slot(slda_service_t *svc)
{
    svc->heldseen++;
    slda_metrics_add(svc->metrics, SLDA_M_HELDOUT, 1);
    if (svc->nheld < HELDOUT_MAX)
        return svc->nheld++;
    uint64_t j = slda_rng_next(&svc->rng) % svc->heldseen;
    return j < HELDOUT_MAX ? (size_t)j : SIZE_MAX;
}

static void heldout_failed(slda_service_t *svc, const char *err)
{
    slda_log(svc->metrics, SLDA_LOG_WARN, "heldout", "held-out document dropped: %s", err);
    svc->nheld = slda_heldout_count(svc->held);
}

/* A held-out document: into the reservoir by its ids; for a replica (whose
 * vocabulary only the update log changes) staged by its bag's word keys. */
void slda_svc_heldout_add(slda_service_t *svc, slda_doc_t *doc, const slda_bag_t *bag)
{
    char err[256];
    if (bag) {
        if (svc->nstaged == svc->capstaged) {
            svc->capstaged = svc->capstaged ? 2 * svc->capstaged : 16;
            svc->staged = slda_xrealloc(svc->staged, svc->capstaged * sizeof *svc->staged);
        }
        struct staged_held_s *h = &svc->staged[svc->nstaged++];
        h->key = slda_xmalloc(((size_t)bag->n + 1) * sizeof *h->key);
        h->count = slda_xmalloc(((size_t)bag->n + 1) * sizeof *h->count);
        memcpy(h->key, bag->hash, bag->n * sizeof *h->key);
        memcpy(h->count, bag->count, bag->n * sizeof *h->count);
        h->n = bag->n;
        h->in_txn = 0;
    } else {
        size_t slot = heldout_slot(svc);
        if (slot != SIZE_MAX &&
            slda_heldout_put(svc->held, slot, svc->model, doc, err, sizeof err) != SLDA_OK)
            heldout_failed(svc, err);
    }
    slda_doc_clear(doc);
}

void slda_svc_heldout_staged(slda_service_t *svc, staged_event_t ev)
{
    size_t m = 0;
    char err[256];
    for (size_t i = 0; i < svc->nstaged; i++) {
        struct staged_held_s *h = &svc->staged[i];
        if (ev == STAGED_TO_TXN) {
            h->in_txn = 1;
            m++;
        } else if (ev == STAGED_COMMIT && !h->in_txn) {
            svc->staged[m++] = *h; /* the open minibatch's: still waiting */
        } else {
            size_t slot = ev == STAGED_COMMIT ? heldout_slot(svc) : SIZE_MAX;
            if (slot != SIZE_MAX && slda_heldout_put_keys(svc->held, slot, svc->model, h->key,
                                                          h->count, h->n, err, sizeof err))
                heldout_failed(svc, err);
            free(h->key);
            free(h->count);
        }
    }
    svc->nstaged = m;
}
