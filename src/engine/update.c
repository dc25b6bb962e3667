/* update.c - a minibatch's global update as data: the local half makes a record, apply applies it.
 *
 * slda_model_train = slda_update_local + slda_update_apply (global.stale=0),
 * bit for bit, so replicas of one model that apply the same log of records
 * in the same order hold the same model (docs/replication.md).
 *
 * Local half. The documents' local steps run against the model as it is
 * (after update `base`) and leave it as it was: rows of words that reach
 * training for the first time get their initial values for the local steps
 * only (slda_model_init_row: seeded by the word's key, so every replica gives
 * a word the same row), and those rows, NZ and the count of rows ready are
 * put back afterwards. What the global update consumes is copied into the
 * record: the words by string (ids are first-come per process), in the order
 * in which train.c initialises their rows (first appearance over the
 * documents); the minibatch statistics of every word trained on, summed in
 * document order as train.c's accumulator sums them (one Kp-vector per slot,
 * slots in first-appearance order over the trained documents); the token and
 * document counts; with alpha learning or births the documents' mean counts
 * (ntheta) and lengths; with births the per-document scores, p(w) and bags.
 * A second visit (replay.c) is a record with revisit = 1: no births inputs,
 * its tokens count in replay_tokens. The replay queue stays per instance:
 * the caller pops due minibatches and makes records of them.
 *
 * Replicas (scratch documents). Word ids are first-come per process, so a
 * replica's vocabulary must change only by applying records. Its documents
 * name their words by index into an slda_update_scratch_t (update_scratch.c;
 * tokenised with the model's tokenizer, the vocabulary untouched); the local
 * half looks each word up without counting it, gives a word the vocabulary lacks a
 * borrowed row (one no word of the minibatch uses, not held if possible;
 * initialised from the word's key, put back afterwards), and marks the
 * record so that applying it counts its words into the vocabulary
 * (slda_vocab_get_or_add_n), adding and evicting in log order.
 *
 * Apply half. Maps each word to the model's id (adding it to an open
 * vocabulary, evicting in apply order), initialises the rows train.c would,
 * and runs the global step exactly as train.c does with global.stale=0:
 * slda_global_prepare + slda_global_commit on the record's sums, then alpha,
 * births and the counters. A pending update (global.stale=1 training) is
 * flushed first. The update index the local half read (base) is the
 * record's staleness: apply(t) of a record with base b ran b's model, t - b
 * updates behind; global.stale=1 on one process is base = t - 1.
 *
 * A record's fields are in update_priv.h; update_codec.c turns records into
 * bytes and back, update_scratch.c holds a replica minibatch's words.
 *
 * Threads: the local half uses the model's worker pool and must not run
 * while another thread changes the model (it writes rows and NZ for its
 * duration); apply is the model thread's.
 */
#include "engine/update_priv.h"
#include "engine/births.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/step.h"
#include "engine/train.h"
#include "core/pool.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void slda_update_destroy(slda_update_t *upd)
{
    if (!upd)
        return;
    for (uint32_t i = 0; upd->word && i < upd->nwords; i++)
        free(upd->word[i]);
    free(upd->word);
    free(upd->wlen);
    free(upd->wcount);
    free(upd->slot);
    free(upd->stats);
    free(upd->lengths);
    free(upd->ntheta);
    free(upd->scores);
    free(upd->npairs);
    free(upd->pword);
    free(upd->pcount);
    free(upd->pw);
    for (size_t i = 0; i < upd->ninputs; i++)
        free(upd->inputs[i].topic);
    free(upd->inputs);
    for (uint32_t i = 0; i < upd->nlabels; i++)
        free(upd->label_text[i]);
    free(upd->label_slot);
    free(upd->label_text);
    free(upd);
}

uint64_t slda_update_base(const slda_update_t *upd)
{
    return upd->base;
}

uint64_t slda_update_tokens(const slda_update_t *upd)
{
    return upd->ntokens;
}

uint32_t slda_update_docs(const slda_update_t *upd)
{
    return upd->ntrained;
}

const float *slda_update_stats(const slda_update_t *upd, uint32_t *nslots, uint32_t *K)
{
    *nslots = upd->nslots;
    *K = upd->K;
    return upd->stats;
}

slda_err_t slda_update_add_input(slda_update_t *upd, const char *topic, int32_t partition,
                                 int64_t from, int64_t to)
{
    if (!upd || !topic || strlen(topic) > UPD_TOPIC_MAX || from > to)
        return SLDA_ERR_INVALID;
    upd->inputs = slda_xrealloc(upd->inputs, (upd->ninputs + 1) * sizeof *upd->inputs);
    upd_input_t *in = &upd->inputs[upd->ninputs++];
    in->topic = slda_xstrdup(topic);
    in->partition = partition;
    in->from = from;
    in->to = to;
    return SLDA_OK;
}

size_t slda_update_input(const slda_update_t *upd, size_t i, const char **topic,
                         int32_t *partition, int64_t *from, int64_t *to)
{
    if (i < upd->ninputs) {
        *topic = upd->inputs[i].topic;
        *partition = upd->inputs[i].partition;
        *from = upd->inputs[i].from;
        *to = upd->inputs[i].to;
    }
    return upd->ninputs;
}

/* ------------------------------------------------------------------------ */
/* Local half: helpers                                                       */

/* Word id -> index in the record's word table: open addressing over ids. */
typedef struct idmap_s {
    uint32_t mask;
    uint32_t *id, *idx; /* id UINT32_MAX = empty */
} idmap_t;

static void idmap_init(idmap_t *m, uint64_t n)
{
    uint64_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->mask = (uint32_t)(cap - 1);
    m->id = slda_xmalloc(cap * sizeof *m->id);
    m->idx = slda_xmalloc(cap * sizeof *m->idx);
    memset(m->id, 0xff, cap * sizeof *m->id);
}

static void idmap_clear(idmap_t *m)
{
    free(m->id);
    free(m->idx);
}

/* Index of id, or UINT32_MAX with *slot where it goes. */
static uint32_t idmap_find(const idmap_t *m, uint32_t id, uint32_t *slot)
{
    uint32_t h = (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & m->mask;
    while (m->id[h] != UINT32_MAX && m->id[h] != id)
        h = (h + 1) & m->mask;
    *slot = h;
    return m->id[h] == id ? m->idx[h] : UINT32_MAX;
}

typedef struct local_job_s {
    slda_model_t *model;
    slda_frozen_t fz;
    const slda_doc_t *docs;
    size_t *off;    /* ndocs + 1: pair offsets of the trained documents' slices */
    float *slices;  /* pairs x Kp */
    float *ntheta;  /* ndocs x K, or NULL */
    float *thetas;  /* ndocs x K topic mixtures for the caller, or NULL */
    float *scores;  /* ndocs, or NULL */
    float *pw;      /* all pairs of all documents (births) */
    size_t *pwoff;  /* ndocs + 1 */
    uint64_t t;
} local_job_t;

/* The threads claim the longest documents first (pool.c). */
static uint64_t local_cost(size_t i, void *opaque)
{
    const local_job_t *job = opaque;
    return job->docs[i].ntokens;
}

static void local_doc(size_t i, uint32_t worker, void *opaque)
{
    local_job_t *job = opaque;
    const slda_doc_t *doc = &job->docs[i];
    slda_local_t *loc = job->model->locals[worker];
    uint32_t K = job->model->K;
    if (doc->npairs == 0 || doc->ntokens == 0)
        return;
    loc->stats_out = job->slices + job->off[i] * job->model->Kp;
    slda_local_run(loc, &job->fz, doc->word, doc->count, doc->npairs, job->t, i, 1,
                   job->thetas ? job->thetas + i * K : NULL);
    if (job->ntheta)
        memcpy(job->ntheta + i * K, loc->ntheta_sum, K * sizeof(float));
    if (job->scores)
        job->scores[i] = slda_births_doc_score(&job->fz, loc, doc->word, doc->count,
                                               doc->npairs, job->pw + job->pwoff[i]);
}

/* ------------------------------------------------------------------------ */
/* Local half                                                                */

/* The word table in first-appearance order over all documents (train.c's
 * prepare_rows order) with each word's count; fills upd->word, map. names:
 * the scratch words of odocs (the documents as given), or NULL: the
 * vocabulary's words of docs. */
static void build_words(slda_update_t *upd, const slda_model_t *model, const slda_doc_t *docs,
                        const slda_doc_t *odocs, const slda_update_scratch_t *scratch,
                        size_t ndocs, idmap_t *map, uint32_t **ids_out)
{
    uint64_t pairs = 0;
    for (size_t i = 0; i < ndocs; i++)
        pairs += docs[i].npairs;
    idmap_init(map, pairs);
    uint32_t *ids = slda_xmalloc((pairs + 1) * sizeof *ids);
    upd->word = slda_xmalloc((pairs + 1) * sizeof *upd->word);
    upd->wlen = slda_xmalloc((pairs + 1) * sizeof *upd->wlen);
    upd->wcount = slda_xcalloc(pairs + 1, sizeof *upd->wcount);
    uint32_t n = 0, h, w;
    for (size_t i = 0; i < ndocs; i++)
        for (uint32_t u = 0; u < docs[i].npairs; u++) {
            uint32_t id = docs[i].word[u];
            if ((w = idmap_find(map, id, &h)) == UINT32_MAX) {
                map->id[h] = id;
                map->idx[h] = w = n;
                /* scratch documents keep every pair unless the vocabulary is
                 * fixed, and then every word left is the vocabulary's */
                const char *name = scratch && !slda_vocab_is_fixed(model->vocab)
                                       ? scratch->word[odocs[i].word[u]]
                                       : slda_vocab_word(model->vocab, id);
                upd->word[n] = slda_xstrdup(name ? name : "");
                upd->wlen[n] = (uint32_t)strlen(upd->word[n]);
                ids[n++] = id;
            }
            uint64_t c = (uint64_t)upd->wcount[w] + docs[i].count[u];
            upd->wcount[w] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
        }
    upd->nwords = n;
    *ids_out = ids;
}

/* Sum the slices of the trained documents in document order, one slot per
 * word in first-appearance order: slda_accum_add's sums, bit for bit. */
static void build_slots(slda_update_t *upd, const slda_model_t *model, const slda_doc_t *docs,
                        size_t ndocs, const idmap_t *map, const local_job_t *job)
{
    uint32_t K = model->K, Kp = model->Kp, h;
    int32_t *slot_of = slda_xmalloc(((size_t)upd->nwords + 1) * sizeof *slot_of);
    memset(slot_of, 0xff, ((size_t)upd->nwords + 1) * sizeof *slot_of);
    float *sum = slda_xcalloc(((size_t)upd->nwords + 1) * Kp, sizeof(float));
    upd->slot = slda_xmalloc(((size_t)upd->nwords + 1) * sizeof *upd->slot);
    uint32_t ns = 0;
    for (size_t i = 0; i < ndocs; i++) {
        if (job->off[i + 1] == job->off[i])
            continue;
        const float *src = job->slices + job->off[i] * Kp;
        for (uint32_t u = 0; u < docs[i].npairs; u++, src += Kp) {
            uint32_t w = idmap_find(map, docs[i].word[u], &h);
            if (slot_of[w] < 0) {
                slot_of[w] = (int32_t)ns;
                upd->slot[ns++] = w;
            }
            float *dst = sum + (size_t)slot_of[w] * Kp;
            for (uint32_t k = 0; k < Kp; k++)
                dst[k] += src[k];
        }
    }
    upd->nslots = ns;
    upd->stats = slda_xmalloc(((size_t)ns * K + 1) * sizeof(float));
    for (uint32_t s = 0; s < ns; s++)
        memcpy(upd->stats + (size_t)s * K, sum + (size_t)s * Kp, K * sizeof(float));
    free(sum);
    free(slot_of);
}

static void build_bags(slda_update_t *upd, const slda_doc_t *docs, size_t ndocs,
                       const idmap_t *map, const local_job_t *job)
{
    uint32_t h;
    upd->npairs = slda_xmalloc((ndocs + 1) * sizeof *upd->npairs);
    upd->npairs_total = job->pwoff[ndocs];
    upd->pword = slda_xmalloc((upd->npairs_total + 1) * sizeof *upd->pword);
    upd->pcount = slda_xmalloc((upd->npairs_total + 1) * sizeof *upd->pcount);
    upd->pw = slda_xmalloc((upd->npairs_total + 1) * sizeof *upd->pw);
    memcpy(upd->pw, job->pw, upd->npairs_total * sizeof *upd->pw);
    for (size_t i = 0; i < ndocs; i++) {
        upd->npairs[i] = docs[i].npairs;
        for (uint32_t u = 0; u < docs[i].npairs; u++) {
            upd->pword[job->pwoff[i] + u] = idmap_find(map, docs[i].word[u], &h);
            upd->pcount[job->pwoff[i] + u] = docs[i].count[u];
        }
    }
}

/* Scratch documents -> documents over the model's rows: a word the
 * vocabulary holds gets its id, any other a borrowed row (one no word of the
 * minibatch uses, preferably not ready; its contents are put back by the
 * caller). *tdocs_out (their word arrays in one block) and *borrowed (one
 * per scratch word, UINT32_MAX unless borrowed) are malloc'ed. */
static slda_err_t translate(slda_model_t *model, const slda_update_scratch_t *scratch,
                            const slda_doc_t *docs, size_t ndocs, slda_doc_t **tdocs_out,
                            uint32_t **borrowed_out, char *errstr, size_t errstr_size)
{
    uint32_t n = scratch->n, h = 0;
    uint32_t *id = slda_xmalloc(((size_t)n + 1) * sizeof *id);
    uint32_t *borrowed = slda_xmalloc(((size_t)n + 1) * sizeof *borrowed);
    memset(id, 0xff, ((size_t)n + 1) * sizeof *id);
    memset(borrowed, 0xff, ((size_t)n + 1) * sizeof *borrowed);
    uint8_t *used = slda_xcalloc((size_t)n + 1, 1);
    uint64_t pairs = 0;
    for (size_t i = 0; i < ndocs; i++) {
        if (docs[i].npairs == 0 && docs[i].ntokens == 0)
            continue;
        slda_err_t err = slda_doc_check(&docs[i], n, errstr, errstr_size);
        if (err != SLDA_OK) {
            free(id);
            free(borrowed);
            free(used);
            return err;
        }
        pairs += docs[i].npairs;
    }
    idmap_t held;
    idmap_init(&held, pairs);
    for (size_t i = 0; i < ndocs; i++)
        for (uint32_t u = 0; u < docs[i].npairs; u++) {
            uint32_t w = docs[i].word[u];
            if (used[w]++)
                continue;
            id[w] = slda_vocab_find(model->vocab, scratch->word[w], scratch->len[w]);
            if (id[w] != UINT32_MAX && idmap_find(&held, id[w], &h) == UINT32_MAX)
                held.id[h] = id[w], held.idx[h] = w;
        }
    /* borrow rows no word of the minibatch uses: not ready ones first (a fixed
     * vocabulary drops the words it lacks, as slda_doc_from_text does) */
    int fixed = slda_vocab_is_fixed(model->vocab);
    for (int pass = 0; pass < 2 && !fixed; pass++) {
        uint32_t r = 0;
        for (uint32_t w = 0; w < n; w++) {
            if (!used[w] || id[w] != UINT32_MAX)
                continue;
            while (r < model->W && ((pass == 0 && model->row_ready[r]) ||
                                    idmap_find(&held, r, &h) != UINT32_MAX))
                r++;
            if (r == model->W)
                break;
            borrowed[w] = id[w] = r;
            held.id[h] = r; /* now in use by this minibatch */
            held.idx[h] = w;
        }
    }
    int short_rows = 0;
    for (uint32_t w = 0; w < n && !fixed; w++)
        short_rows += used[w] && id[w] == UINT32_MAX;
    idmap_clear(&held);
    free(used);
    if (short_rows) {
        free(id);
        free(borrowed);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TOO_LARGE,
                            "update: the minibatch has more distinct words than the model's "
                            "%u rows",
                            model->W);
    }
    slda_doc_t *tdocs = slda_xcalloc(ndocs + 1, sizeof *tdocs);
    uint32_t *block = slda_xmalloc((pairs + 1) * sizeof *block);
    uint32_t *cblock = slda_xmalloc((pairs + 1) * sizeof *cblock);
    uint64_t off = 0;
    for (size_t i = 0; i < ndocs; i++) {
        tdocs[i].word = block + off;
        tdocs[i].count = cblock + off;
        if (docs[i].npairs == 0 && docs[i].ntokens == 0)
            continue;
        for (uint32_t u = 0; u < docs[i].npairs; u++) {
            uint32_t to = id[docs[i].word[u]];
            if (to == UINT32_MAX)
                continue; /* fixed vocabulary: dropped */
            tdocs[i].word[tdocs[i].npairs] = to;
            tdocs[i].count[tdocs[i].npairs++] = docs[i].count[u];
            tdocs[i].ntokens += docs[i].count[u];
        }
        off += tdocs[i].npairs;
    }
    if (ndocs == 0) { /* freed through tdocs[0] */
        tdocs[0].word = block;
        tdocs[0].count = cblock;
    }
    free(id);
    *tdocs_out = tdocs;
    *borrowed_out = borrowed;
    return SLDA_OK;
}

slda_err_t slda_update_local(slda_model_t *model, const slda_update_scratch_t *scratch,
                             const slda_doc_t *odocs, size_t ndocs, int revisit,
                             float *thetas, slda_update_t **out, char *errstr,
                             size_t errstr_size)
{
    *out = NULL;
    if (!model || (ndocs && !odocs) || ndocs > UINT32_MAX)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "update: bad arguments");
    if (model->p.kind != SLDA_KIND_LDA) /* a record carries no author or super-topic state */
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "update: model.kind=%s has no update records (replicas, "
                            "updates.topic, run only model.kind=lda)",
                            slda_kind_name(model->p.kind));
    const slda_doc_t *docs = odocs;
    slda_doc_t *tdocs = NULL;
    uint32_t *borrowed = NULL;
    if (scratch) {
        slda_err_t err = translate(model, scratch, odocs, ndocs, &tdocs, &borrowed, errstr,
                                   errstr_size);
        if (err != SLDA_OK)
            return err;
        docs = tdocs;
    } else {
        for (size_t i = 0; i < ndocs; i++) {
            if (docs[i].npairs == 0 && docs[i].ntokens == 0)
                continue;
            slda_err_t err = slda_doc_check(&docs[i], model->W, errstr, errstr_size);
            if (err != SLDA_OK)
                return err;
        }
    }
    uint32_t K = model->K, Kp = model->Kp;
    slda_update_t *upd = slda_xcalloc(1, sizeof *upd);
    upd->K = K;
    upd->base = model->t;
    upd->ndocs = (uint32_t)ndocs;
    upd->revisit = revisit != 0;
    upd->marks = scratch != NULL;
    idmap_t map;
    uint32_t *ids;
    build_words(upd, model, docs, odocs, scratch, ndocs, &map, &ids);

    /* Rows for the local steps only, in train.c's order: put back below. */
    double *nz_saved = slda_xmalloc(K * sizeof *nz_saved);
    memcpy(nz_saved, model->NZ, K * sizeof *nz_saved);
    uint32_t nready_saved = model->nready, ntemp = 0;
    uint32_t *temp = slda_xmalloc(((size_t)upd->nwords + 1) * sizeof *temp);
    uint8_t *temp_ready = slda_xmalloc((size_t)upd->nwords + 1);
    float *temp_rows = slda_xmalloc(((size_t)upd->nwords + 1) * Kp * sizeof(float));
    idmap_t bset; /* the borrowed rows */
    idmap_init(&bset, upd->nwords);
    for (uint32_t w = 0; borrowed && w < (scratch ? scratch->n : 0); w++) {
        uint32_t h;
        if (borrowed[w] != UINT32_MAX && idmap_find(&bset, borrowed[w], &h) == UINT32_MAX)
            bset.id[h] = borrowed[w], bset.idx[h] = w;
    }
    for (uint32_t w = 0; w < upd->nwords; w++) {
        uint32_t id = ids[w], h;
        int borrow = idmap_find(&bset, id, &h) != UINT32_MAX;
        if (!borrow && model->row_ready[id])
            continue;
        memcpy(temp_rows + (size_t)ntemp * Kp, model->A + (size_t)id * Kp, Kp * sizeof(float));
        temp_ready[ntemp] = model->row_ready[id];
        temp[ntemp++] = id;
        if (borrow) {
            memset(model->A + (size_t)id * Kp, 0, Kp * sizeof(float));
            model->row_ready[id] = 0;
            slda_model_init_row_key(model, id,
                                    slda_hash64(upd->word[w], upd->wlen[w],
                                                slda_vocab_seed(model->vocab)));
        } else {
            slda_model_init_row(model, id);
        }
    }
    model->nready = nready_saved + ntemp; /* every word new to the model counts once */
    idmap_clear(&bset);

    local_job_t job = {.model = model, .docs = docs, .thetas = thetas, .t = model->t};
    if (thetas) /* an empty document's mixture stays 0 */
        memset(thetas, 0, ndocs * K * sizeof *thetas);
    slda_err_t err = slda_frozen_init(&job.fz, model, errstr, errstr_size);
    if (err == SLDA_OK) {
        job.fz.revisit = upd->revisit;
        job.off = slda_xmalloc((ndocs + 1) * sizeof *job.off);
        job.pwoff = slda_xmalloc((ndocs + 1) * sizeof *job.pwoff);
        size_t pairs = 0, allpairs = 0;
        for (size_t i = 0; i < ndocs; i++) {
            job.off[i] = pairs;
            job.pwoff[i] = allpairs;
            allpairs += docs[i].npairs;
            upd->ntokens += docs[i].ntokens;
            if (docs[i].npairs && docs[i].ntokens) {
                pairs += docs[i].npairs;
                upd->ntrained++;
            }
        }
        job.off[ndocs] = pairs;
        job.pwoff[ndocs] = allpairs;
        job.slices = slda_big_alloc((pairs + 1) * Kp * sizeof(float), "minibatch statistics",
                                    errstr, errstr_size);
        if (!job.slices)
            err = SLDA_ERR_NOMEM;
        int births = model->p.births && !upd->revisit;
        if (births) {
            job.scores = slda_xcalloc(ndocs + 1, sizeof *job.scores);
            job.pw = slda_xcalloc(allpairs + 1, sizeof *job.pw);
        }
        if (model->p.alpha_learn != SLDA_ALPHA_FIXED || births)
            job.ntheta = slda_xcalloc(ndocs * K + 1, sizeof(float));
        if (err == SLDA_OK) {
            uint32_t nthreads = slda_pool_threads(model->pool);
            slda_model_locals(model, nthreads); /* local_doc reads model->locals */
            slda_pool_run_longest(model->pool, ndocs, local_cost, local_doc, NULL, &job);
            build_slots(upd, model, docs, ndocs, &map, &job);
            if (job.ntheta) {
                upd->ntheta = job.ntheta;
                job.ntheta = NULL;
                upd->lengths = slda_xmalloc((ndocs + 1) * sizeof *upd->lengths);
                for (size_t i = 0; i < ndocs; i++)
                    upd->lengths[i] = docs[i].ntokens;
            }
            if (births) {
                upd->scores = job.scores;
                job.scores = NULL;
                build_bags(upd, docs, ndocs, &map, &job);
            }
        }
        slda_big_free(job.slices);
        free(job.off);
        free(job.pwoff);
        free(job.scores);
        free(job.pw);
        free(job.ntheta);
        slda_frozen_clear(&job.fz);
    }

    for (uint32_t i = ntemp; i-- > 0;) {
        memcpy(model->A + (size_t)temp[i] * Kp, temp_rows + (size_t)i * Kp, Kp * sizeof(float));
        model->row_ready[temp[i]] = temp_ready[i];
    }
    model->nready = nready_saved;
    memcpy(model->NZ, nz_saved, K * sizeof *nz_saved);
    free(temp_rows);
    free(temp_ready);
    free(temp);
    free(nz_saved);
    free(ids);
    idmap_clear(&map);
    if (tdocs) {
        free(tdocs[0].word);
        free(tdocs[0].count);
        free(tdocs);
    }
    free(borrowed);
    if (err != SLDA_OK) {
        slda_update_destroy(upd);
        return err;
    }
    *out = upd;
    return SLDA_OK;
}

/* ------------------------------------------------------------------------ */
/* Apply half                                                                */

/* The model's id of every word of the record (added to an open vocabulary
 * in record order); all pinned, so adding one cannot evict another. */
static slda_err_t map_words(slda_model_t *model, const slda_update_t *upd, uint32_t *ids,
                            char *errstr, size_t errstr_size)
{
    uint64_t seed = slda_vocab_seed(model->vocab);
    for (uint32_t w = 0; w < upd->nwords; w++) {
        uint32_t id;
        if (upd->marks) { /* the vocabulary counts the words now, in log order */
            id = slda_vocab_get_or_add_n(model->vocab, upd->word[w], upd->wlen[w],
                                         slda_hash64(upd->word[w], upd->wlen[w], seed),
                                         upd->wcount[w] ? upd->wcount[w] : 1);
        } else {
            id = slda_vocab_find(model->vocab, upd->word[w], upd->wlen[w]);
            if (id == UINT32_MAX && !slda_vocab_is_fixed(model->vocab)) {
                bool added;
                id = slda_vocab_get_or_add(model->vocab, upd->word[w], upd->wlen[w], &added);
            } else if (id != UINT32_MAX) {
                slda_vocab_pin(model->vocab, id);
            }
        }
        if (id == UINT32_MAX)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                                slda_vocab_is_fixed(model->vocab)
                                    ? "update word \"%s\": not in the fixed vocabulary"
                                    : "update word \"%s\": vocabulary full (every word pinned)",
                                upd->word[w]);
        ids[w] = id;
    }
    return SLDA_OK;
}

slda_err_t slda_update_apply(slda_model_t *model, const slda_update_t *upd, char *errstr,
                             size_t errstr_size)
{
    if (!model || !upd)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "update: bad arguments");
    if (upd->K != model->K)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "update: %u topics, the model has %u", upd->K, model->K);
    if (upd->base > model->t)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "update: computed against update %" PRIu64
                            ", the model has applied only %" PRIu64,
                            upd->base, model->t);
    if (upd_labels_only(upd))
        return upd_apply_labels(model, upd, errstr, errstr_size);
    if (upd->scores && !model->p.births)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "update: carries births inputs, the model has births=false");
    if (!upd->ntheta && model->p.alpha_learn != SLDA_ALPHA_FIXED)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "update: no alpha inputs, the model learns alpha");
    if (!upd->scores && model->p.births && !upd->revisit)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "update: no births inputs, the model has births=true");
    uint32_t K = model->K, Kp = model->Kp;
    uint32_t *ids = slda_xmalloc(((size_t)upd->nwords + 1) * sizeof *ids);
    slda_err_t err = map_words(model, upd, ids, errstr, errstr_size);
    if (err != SLDA_OK) {
        free(ids);
        return err;
    }
    slda_model_flush(model); /* a pending update (global.stale=1) comes first */
    for (uint32_t w = 0; w < upd->nwords; w++)
        if (!model->row_ready[ids[w]])
            slda_model_init_row(model, ids[w]);

    /* the accumulator as train.c leaves it: only word, sum, c1, c2 are read */
    slda_accum_t acc;
    memset(&acc, 0, sizeof acc);
    acc.Kp = Kp;
    acc.W = model->W;
    acc.nslots = acc.cap = upd->nslots;
    acc.word = slda_xmalloc(((size_t)upd->nslots + 1) * sizeof *acc.word);
    acc.c1 = slda_xmalloc(((size_t)upd->nslots + 1) * sizeof *acc.c1);
    acc.c2 = slda_xmalloc(((size_t)upd->nslots + 1) * sizeof *acc.c2);
    acc.sum = slda_big_alloc(((size_t)upd->nslots + 1) * Kp * sizeof(float), "update rows",
                             errstr, errstr_size);
    if (!acc.sum) {
        free(acc.word);
        free(acc.c1);
        free(acc.c2);
        free(ids);
        return SLDA_ERR_NOMEM;
    }
    memset(acc.sum, 0, ((size_t)upd->nslots + 1) * Kp * sizeof(float));
    for (uint32_t s = 0; s < upd->nslots; s++) {
        acc.word[s] = ids[upd->slot[s]];
        memcpy(acc.sum + (size_t)s * Kp, upd->stats + (size_t)s * K, K * sizeof(float));
    }
    if (model->p.births && !upd->revisit && !model->births)
        model->births = slda_births_new(model);
    /* a stale record: its columns follow the slots' births, deaths and merges since */
    float *ntheta = NULL;
    if (upd->base < model->t && model->births &&
        slda_births_remap(model->births, upd->base, acc.sum, upd->nslots, Kp) && upd->ntheta) {
        ntheta = slda_xmalloc(((size_t)upd->ndocs * K + 1) * sizeof *ntheta);
        memcpy(ntheta, upd->ntheta, (size_t)upd->ndocs * K * sizeof *ntheta);
        slda_births_remap(model->births, upd->base, ntheta, upd->ndocs, K);
    }
    double rho = slda_rho(&model->p, model->t);
    uint64_t before = slda_model_tokens_before(model, upd->ntokens, rho);
    slda_gprep_t *g = slda_big_alloc(sizeof *g, "update", NULL, 0); /* 32-byte vectors */
    if (!g)
        slda_xmalloc(SIZE_MAX);
    slda_global_prepare(model, &acc, upd->ntokens, before, g);
    rho = slda_global_commit(model, &acc, upd->ntokens, before, g);
    slda_big_free(g);

    /* the births inputs as train.c has them: documents over the model's ids, p(w) per document */
    slda_doc_t *docs = NULL;
    float **pw = NULL, *pwcopy = NULL;
    uint32_t *pword = NULL;
    if (upd->scores) {
        docs = slda_xcalloc(upd->ndocs + 1, sizeof *docs);
        pw = slda_xcalloc(upd->ndocs + 1, sizeof *pw);
        pwcopy = slda_xmalloc((upd->npairs_total + 1) * sizeof *pwcopy);
        memcpy(pwcopy, upd->pw, upd->npairs_total * sizeof *pwcopy);
        pword = slda_xmalloc((upd->npairs_total + 1) * sizeof *pword);
        uint64_t off = 0;
        for (uint32_t i = 0; i < upd->ndocs; i++) {
            docs[i].npairs = upd->npairs[i];
            docs[i].word = pword + off;
            docs[i].count = upd->pcount + off;
            pw[i] = pwcopy + off;
            for (uint32_t u = 0; u < upd->npairs[i]; u++) {
                pword[off + u] = ids[upd->pword[off + u]];
                docs[i].ntokens += upd->pcount[off + u];
            }
            off += upd->npairs[i];
        }
    }
    slda_model_update_done(model, docs, upd->ndocs, upd->lengths, ntheta ? ntheta : upd->ntheta,
                           upd->scores, pw, upd->ntokens, upd->ntrained, upd->revisit, rho);
    free(ntheta);
    free(pword);
    free(pwcopy);
    free(pw);
    free(docs);
    slda_big_free(acc.sum);
    free(acc.word);
    free(acc.c1);
    free(acc.c2);
    free(ids);
    /* labels carried beside a minibatch name the slots after its births */
    return upd->nlabels ? upd_apply_labels(model, upd, errstr, errstr_size) : SLDA_OK;
}
