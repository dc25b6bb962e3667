/* topn.h - the n largest of a stream of (id, key) pairs, kept sorted as they come.
 *
 * Insertion into a list of at most n, largest key first; a later pair ties behind an earlier
 * one (a key not greater than the n-th is dropped). O(n) per pair in the worst case, for the
 * small n of "the top authors of a topic", "a super-topic's largest shares" (engine/model.c's
 * top words keep their own float twin on the model's hot loop).
 */
#ifndef SLDA_TOPN_H
#define SLDA_TOPN_H

#include <stdint.h>

/* Offer (id, v) to the list ids/keys of *have entries (at most n, n > 0). */
static inline void slda_topn_push(uint32_t *ids, double *keys, uint32_t *have, uint32_t n,
                                  uint32_t id, double v)
{
    if (*have == n && !(v > keys[n - 1]))
        return;
    uint32_t i = *have < n ? (*have)++ : n - 1;
    while (i > 0 && v > keys[i - 1]) {
        ids[i] = ids[i - 1];
        keys[i] = keys[i - 1];
        i--;
    }
    ids[i] = id;
    keys[i] = v;
}

#endif /* SLDA_TOPN_H */
