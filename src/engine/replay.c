/* replay.c - each trained document visited a second time, later (replay.docs).
 *
 * Why: one streaming pass stays about 10% above a converged collapsed Gibbs
 * sampler on held-out perplexity (docs/engine.md, "Second visits"); the
 * model is not noisy at the end of the pass (averaging its last iterates
 * does not help) but not converged: each document's statistics were
 * computed against the model as it was when the document arrived. A second
 * pass closes most of the gap, and spending the same local sweeps on two
 * visits (half each) instead of one is worth much more than the sweeps.
 * A stream cannot be read twice, so the engine keeps the documents it
 * trained on and trains on each once more when the model has seen about as
 * many documents again as it had before it (a document that arrived after n
 * documents comes back after about 2n), at most replay.docs documents later:
 * that bounds the memory. train.c pushes every minibatch it trains on and
 * trains the minibatches that fall due after it; slda_model_replay_drain
 * trains the rest at the end of a finite input. A finite input known in
 * advance to fit in replay.docs (model->replay_input_docs, set by streamlda
 * train) keeps every document until that drain: each second visit then sees
 * the model of the whole input, which brought one pass closer to converged
 * Gibbs on three bench/quality corpora and as close on the fourth, for the
 * same work (docs/engine.md, "Second visits"). The drain first shuffles the
 * waiting documents across the waiting minibatches (each keeps its size;
 * seeded by seed), as a shuffled second pass would: on the same four
 * corpora that helped every one of them again (Reuters is in time order: a
 * minibatch of the second visits no longer holds one week's news).
 *
 * Documents are stored as (word id, word key, count) triples (the key: the
 * XXH3 key the vocabulary hashes words with, as heldout.c does) and resolved
 * to ids when they come back: an open vocabulary may have evicted a word and
 * handed its id to another meanwhile, then the key finds the word's id (a
 * word the model no longer holds is left out); while it has evicted nothing
 * since the minibatch was stored, the stored ids still name the same words
 * and no lookup is needed (always, for a fixed vocabulary, whose documents
 * store no keys). The lookups were 6 ms of a 230 ms KOS run.
 *
 * Invariants: minibatches leave in the order they came, except in the
 * drain (documents shuffled, the same way for the same seed and input);
 * stored counts the documents held; nothing here is in a snapshot (a
 * restored model starts with an empty store). Threads: the store belongs to
 * the model's thread. A first visit's documents are copied in by the threads
 * that train them (slda_replay_reserve / fill / store: train.c), and the
 * documents of a minibatch that comes back are resolved on the pool (lookups
 * only read the vocabulary): in the local steps of the minibatch whose store
 * makes it due (slda_replay_ahead_due), in the drain in those of the
 * minibatch before (slda_replay_ahead), else in a pool run of their own; then
 * pinned and compacted in order on the model's thread. Storing, and
 * resolving in a run of its own, were serial stretches once per minibatch
 * (the workers idle): 8 ms and 10 ms in a two-thread Reuters run of 0.45 s.
 */
#include "engine/replay.h"
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

/* While fewer minibatches than this are stored none is due (the first
 * documents come back after a few updates, not at once). */
#define SLDA_REPLAY_MIN_BATCHES 4

typedef struct replay_batch_s {
    void *mem;        /* the block the four arrays are in */
    size_t ndocs;
    size_t *off;      /* ndocs + 1 pair offsets */
    uint32_t *id;     /* pairs: word ids when stored */
    uint64_t *key;    /* pairs: word keys (NULL for a fixed vocabulary) */
    uint32_t *count;  /* pairs: counts */
    uint64_t evictions; /* the vocabulary's evictions when stored */
} replay_batch_t;

/* Documents to resolve: each one's stored minibatch and index in it. */
typedef struct resolve_job_s {
    const slda_model_t *model;
    const replay_batch_t **batch; /* each document's minibatch and index in it */
    size_t *index;
    slda_doc_t *docs;
} resolve_job_t;

struct slda_replay_s {
    replay_batch_t *b;    /* FIFO: b[head..n) */
    size_t head, n, cap;
    size_t stored;        /* documents in b[head..n) */
    uint64_t pushed;      /* documents ever stored (first visits) */
    slda_rng_t rng;       /* the drain's shuffle */
    int rng_seeded;
    /* A drain under way (perm_b != NULL): the waiting documents of
     * b[head..head + drain_end) shuffled, as (batch - head, document) pairs;
     * the next minibatch takes the size of b[head + drain_next] from
     * perm_pos on. The batches are freed when the drain ends. */
    size_t *perm_b, *perm_d;
    size_t perm_pos, drain_next, drain_end;
    /* The drain's next minibatch, resolved ahead (slda_replay_ahead), or
     * outside a drain the oldest one (slda_replay_ahead_due), or NULL:
     * ahead_nd documents in ahead->docs. Which one follows from perm_b (a
     * drain's exists only while perm_b is set; drain_start drops the
     * other). The oldest one is valid only for the pop right after its
     * minibatch's store: while documents stored and evictions are still at
     * these marks. */
    struct resolve_job_s *ahead;
    size_t ahead_nd;
    uint64_t ahead_pushed, ahead_evictions;
    uint64_t popped_ahead; /* minibatches handed out as resolved ahead */
};

static void batch_clear(replay_batch_t *b)
{
    free(b->mem);
    memset(b, 0, sizeof *b);
}

static void job_free(resolve_job_t *job, size_t nd)
{
    if (!job)
        return;
    if (job->docs)
        slda_docs_clear(job->docs, nd);
    free(job->docs);
    free(job->batch);
    free(job->index);
    free(job);
}

static void drop_ahead(struct slda_replay_s *rp)
{
    job_free(rp->ahead, rp->ahead_nd);
    rp->ahead = NULL;
}

void slda_replay_free(struct slda_replay_s *rp)
{
    if (!rp)
        return;
    job_free(rp->ahead, rp->ahead_nd);
    free(rp->perm_b);
    free(rp->perm_d);
    for (size_t i = rp->head; i < rp->n; i++)
        batch_clear(&rp->b[i]);
    free(rp->b);
    free(rp);
}

size_t slda_replay_stored(const slda_model_t *model)
{
    return model->replay ? model->replay->stored : 0;
}

uint64_t slda_replay_popped_ahead(const slda_model_t *model)
{
    return model->replay ? model->replay->popped_ahead : 0;
}

/* A minibatch on its way into the store (slda_replay_reserve). */
struct slda_replay_fill_s {
    replay_batch_t b;
    size_t ndocs;
    size_t *at; /* per document given: its index among those stored, or SIZE_MAX */
};

slda_replay_fill_t *slda_replay_reserve(const slda_model_t *model, const slda_doc_t *docs,
                                        size_t ndocs)
{
    size_t nd = 0, pairs = 0;
    for (size_t i = 0; i < ndocs; i++)
        if (docs[i].npairs && docs[i].ntokens) {
            nd++;
            pairs += docs[i].npairs;
        }
    if (nd == 0)
        return NULL;
    /* the four arrays in one block (a few kB; the store keeps thousands of
     * them alive, and each malloc costs the model's thread time here) */
    slda_replay_fill_t *f = slda_xmalloc(sizeof *f + (ndocs + 1) * sizeof *f->at);
    memset(f, 0, sizeof *f);
    replay_batch_t *b = &f->b;
    f->ndocs = ndocs;
    f->at = (size_t *)(f + 1);
    int keys = !slda_vocab_is_fixed(model->vocab);
    char *mem = b->mem = slda_xmalloc((nd + 1) * sizeof *b->off +
                                      (pairs + 1) * (keys * sizeof *b->key + sizeof *b->id +
                                                     sizeof *b->count));
    b->ndocs = nd;
    b->key = keys ? (uint64_t *)mem : NULL; /* the 8-byte arrays first: aligned */
    b->off = (size_t *)(mem + keys * (pairs + 1) * sizeof *b->key);
    b->id = (uint32_t *)(b->off + nd + 1);
    b->count = b->id + pairs + 1;
    size_t j = 0, p = 0;
    for (size_t i = 0; i < ndocs; i++) {
        f->at[i] = SIZE_MAX;
        if (!docs[i].npairs || !docs[i].ntokens)
            continue;
        f->at[i] = j;
        b->off[j++] = p;
        p += docs[i].npairs;
    }
    b->off[nd] = p;
    return f;
}

void slda_replay_fill(slda_replay_fill_t *f, const slda_model_t *model, size_t i,
                      const slda_doc_t *doc)
{
    if (!f || i >= f->ndocs || f->at[i] == SIZE_MAX)
        return;
    replay_batch_t *b = &f->b;
    size_t p = b->off[f->at[i]];
    uint32_t n = doc->npairs;
    memcpy(b->id + p, doc->word, n * sizeof *b->id);
    memcpy(b->count + p, doc->count, n * sizeof *b->count);
    for (uint32_t u = 0; b->key && u < n; u++)
        b->key[p + u] = slda_vocab_key(model->vocab, doc->word[u]);
}

void slda_replay_store(slda_model_t *model, slda_replay_fill_t *f)
{
    if (!f)
        return;
    if (!model->replay)
        model->replay = slda_xcalloc(1, sizeof *model->replay);
    struct slda_replay_s *rp = model->replay;
    if (rp->n == rp->cap) {
        if (rp->head > 0) { /* reuse the slots of batches already gone */
            memmove(rp->b, rp->b + rp->head, (rp->n - rp->head) * sizeof *rp->b);
            rp->n -= rp->head;
            rp->head = 0;
        }
        if (rp->n == rp->cap) {
            rp->cap = rp->cap ? 2 * rp->cap : 64;
            rp->b = slda_xrealloc(rp->b, rp->cap * sizeof *rp->b);
        }
    }
    f->b.evictions = slda_vocab_evictions(model->vocab);
    rp->b[rp->n++] = f->b;
    rp->stored += f->b.ndocs;
    rp->pushed += f->b.ndocs;
    free(f);
}

void slda_replay_push(slda_model_t *model, const slda_doc_t *docs, size_t ndocs)
{
    slda_replay_fill_t *f = slda_replay_reserve(model, docs, ndocs);
    for (size_t i = 0; f && i < ndocs; i++)
        slda_replay_fill(f, model, i, &docs[i]);
    slda_replay_store(model, f);
}

/* Due: more stored than replay.docs; none while an input known to fit in
 * replay.docs is read (all wait for slda_model_replay_drain); else (past the
 * first few minibatches) more than half of all documents stored so far, so a
 * document that came after n others comes back after about 2n. With nd > 0:
 * due once one more minibatch of nd documents is stored. */
static int due_after(const slda_model_t *model, const struct slda_replay_s *rp, size_t nd)
{
    size_t n = rp->n + (nd > 0), stored = rp->stored + nd;
    uint64_t pushed = rp->pushed + nd;
    if (n == rp->head)
        return 0;
    if (stored > model->p.replay_docs)
        return 1;
    if (model->replay_input_docs && model->replay_input_docs <= model->p.replay_docs)
        return 0;
    return n - rp->head > SLDA_REPLAY_MIN_BATCHES && 2 * (uint64_t)stored > pushed;
}

static int due(const slda_model_t *model, const struct slda_replay_s *rp)
{
    return due_after(model, rp, 0);
}

/* A drain starts: the waiting documents in a uniformly random order
 * (Fisher-Yates, seeded by seed and the documents stored), to be dealt into
 * minibatches of the sizes the waiting ones have. Only this index is new
 * memory (two words a document); the stored pairs are read where they are. */
static void drain_start(const slda_model_t *model, struct slda_replay_s *rp)
{
    size_t nb = rp->n - rp->head, nd = rp->stored, j = 0;
    drop_ahead(rp);
    if (!rp->rng_seeded)
        slda_rng_seed3(&rp->rng, model->p.seed, 0x7265706c6179ull /* "replay" */, rp->pushed);
    rp->rng_seeded = 1;
    rp->perm_b = slda_xmalloc((nd + 1) * sizeof *rp->perm_b);
    rp->perm_d = slda_xmalloc((nd + 1) * sizeof *rp->perm_d);
    for (size_t i = 0; i < nb; i++)
        for (size_t d = 0; d < rp->b[rp->head + i].ndocs; d++, j++) {
            rp->perm_b[j] = i;
            rp->perm_d[j] = d;
        }
    for (size_t i = nd; i > 1; i--) {
        size_t k = slda_rng_below(&rp->rng, (uint32_t)i), t;
        t = rp->perm_b[i - 1], rp->perm_b[i - 1] = rp->perm_b[k], rp->perm_b[k] = t;
        t = rp->perm_d[i - 1], rp->perm_d[i - 1] = rp->perm_d[k], rp->perm_d[k] = t;
    }
    rp->perm_pos = rp->drain_next = 0;
    rp->drain_end = nb;
}

/* Document i of b in the model's current ids (words it still holds and has
 * trained), in arrays of its stored size; only reads the model, so the
 * documents of a minibatch are resolved on the pool's threads. */
static void resolve(const slda_model_t *model, const replay_batch_t *b, size_t i, slda_doc_t *d)
{
    size_t from = b->off[i], to = b->off[i + 1];
    int same = !b->key || b->evictions == slda_vocab_evictions(model->vocab);
    d->cap = (uint32_t)(to - from);
    d->word = slda_xmalloc((to - from + 1) * sizeof *d->word);
    d->count = slda_xmalloc((to - from + 1) * sizeof *d->count);
    for (size_t p = from; p < to; p++) {
        uint32_t id = same ? b->id[p] : slda_vocab_find_key(model->vocab, b->key[p]);
        if (id < model->W && model->row_ready[id]) {
            d->word[d->npairs] = id;
            d->count[d->npairs++] = b->count[p];
            d->ntokens += b->count[p]; /* as slda_doc_add sums them */
        }
    }
}

static void resolve_item(size_t i, uint32_t worker, void *opaque)
{
    resolve_job_t *job = opaque;
    (void)worker;
    resolve(job->model, job->batch[i], job->index[i], &job->docs[i]);
}

/* A job for nd documents (their minibatches and indexes still to fill in);
 * returns its documents, zeroed. */
static slda_doc_t *resolve_job_init(resolve_job_t *job, size_t nd)
{
    job->batch = slda_xmalloc((nd + 1) * sizeof *job->batch);
    job->index = slda_xmalloc((nd + 1) * sizeof *job->index);
    return job->docs = slda_xcalloc(nd + 1, sizeof *job->docs);
}

/* The nd resolved documents of job, in order: pin their words (the update
 * they go into may be left pending) and drop the documents none of whose
 * words is still held; returns how many are left, first in job->docs. */
static size_t pin_compact(slda_model_t *model, resolve_job_t *job, size_t nd)
{
    size_t m = 0;
    for (size_t i = 0; i < nd; i++) {
        slda_doc_t *d = &job->docs[i];
        if (!d->npairs) {
            slda_doc_clear(d);
            continue;
        }
        for (uint32_t u = 0; u < d->npairs; u++)
            slda_vocab_pin(model->vocab, d->word[u]);
        if (m != i) {
            job->docs[m] = *d;
            memset(d, 0, sizeof *d);
        }
        m++;
    }
    return m;
}

/* Resolve the nd documents of job on the pool, then pin_compact. */
static size_t resolve_all(slda_model_t *model, resolve_job_t *job, size_t nd)
{
    slda_pool_run(model->pool, nd, resolve_item, job);
    return pin_compact(model, job, nd);
}

size_t slda_replay_ahead(slda_model_t *model)
{
    struct slda_replay_s *rp = model->replay;
    if (!rp || !rp->perm_b || rp->ahead || rp->drain_next == rp->drain_end)
        return 0;
    size_t nd = rp->b[rp->head + rp->drain_next].ndocs;
    rp->ahead = slda_xcalloc(1, sizeof *rp->ahead);
    rp->ahead->model = model;
    rp->ahead_nd = nd;
    resolve_job_init(rp->ahead, nd);
    for (size_t i = 0; i < nd; i++) {
        rp->ahead->batch[i] = &rp->b[rp->head + rp->perm_b[rp->perm_pos + i]];
        rp->ahead->index[i] = rp->perm_d[rp->perm_pos + i];
    }
    return nd;
}

void slda_replay_ahead_item(size_t i, uint32_t worker, void *opaque)
{
    const slda_model_t *model = opaque;
    resolve_item(i, worker, model->replay->ahead);
}

size_t slda_replay_ahead_due(slda_model_t *model, const slda_replay_fill_t *f)
{
    struct slda_replay_s *rp = model->replay;
    size_t nd = f ? f->b.ndocs : 0;
    if (!rp || rp->perm_b || rp->ahead || rp->n == rp->head || !due_after(model, rp, nd))
        return 0;
    const replay_batch_t *b = &rp->b[rp->head];
    rp->ahead = slda_xcalloc(1, sizeof *rp->ahead);
    rp->ahead->model = model;
    rp->ahead_nd = b->ndocs;
    rp->ahead_pushed = rp->pushed + nd;
    rp->ahead_evictions = slda_vocab_evictions(model->vocab);
    resolve_job_init(rp->ahead, b->ndocs);
    for (size_t i = 0; i < b->ndocs; i++) {
        rp->ahead->batch[i] = b; /* read by the items only: the store may move rp->b */
        rp->ahead->index[i] = i;
    }
    return b->ndocs;
}

/* The nd documents resolved ahead, handed out as job: pinned and compacted
 * (*m of them left). */
static slda_doc_t *take_ahead(slda_model_t *model, struct slda_replay_s *rp,
                              resolve_job_t *job, size_t nd, size_t *m)
{
    *job = *rp->ahead;
    free(rp->ahead);
    rp->ahead = NULL;
    rp->popped_ahead++;
    *m = pin_compact(model, job, nd);
    return job->docs;
}

slda_doc_t *slda_replay_pop(slda_model_t *model, int drain, size_t *ndocs)
{
    struct slda_replay_s *rp = model->replay;
    *ndocs = 0;
    if (!rp || rp->n == rp->head || (!drain && !rp->perm_b && !due(model, rp)))
        return NULL;
    if (drain && !rp->perm_b)
        drain_start(model, rp);
    size_t nd, m;
    slda_doc_t *docs;
    resolve_job_t job = {.model = model};
    if (rp->perm_b) { /* draining: the next minibatch of shuffled documents */
        nd = rp->b[rp->head + rp->drain_next++].ndocs;
        if (rp->ahead) { /* resolved already: slda_replay_ahead */
            docs = take_ahead(model, rp, &job, nd, &m);
            rp->perm_pos += nd;
        } else {
            docs = resolve_job_init(&job, nd);
            for (size_t i = 0; i < nd; i++, rp->perm_pos++) {
                job.batch[i] = &rp->b[rp->head + rp->perm_b[rp->perm_pos]];
                job.index[i] = rp->perm_d[rp->perm_pos];
            }
            m = resolve_all(model, &job, nd);
        }
        if (rp->drain_next == rp->drain_end) { /* every drained document is out */
            for (size_t i = 0; i < rp->drain_end; i++)
                batch_clear(&rp->b[rp->head + i]);
            rp->head += rp->drain_end;
            free(rp->perm_b);
            free(rp->perm_d);
            rp->perm_b = rp->perm_d = NULL;
        }
    } else {
        replay_batch_t *b = &rp->b[rp->head++];
        nd = b->ndocs;
        if (rp->ahead && (rp->ahead_pushed != rp->pushed ||
                          rp->ahead_evictions != slda_vocab_evictions(model->vocab)))
            drop_ahead(rp); /* not resolved right before this pop: the model has moved */
        if (rp->ahead) { /* resolved already: slda_replay_ahead_due */
            docs = take_ahead(model, rp, &job, nd, &m);
        } else {
            docs = resolve_job_init(&job, nd);
            for (size_t i = 0; i < nd; i++) {
                job.batch[i] = b;
                job.index[i] = i;
            }
            m = resolve_all(model, &job, nd);
        }
        batch_clear(b);
    }
    free(job.batch);
    free(job.index);
    rp->stored -= nd;
    *ndocs = m;
    return docs;
}
