/* update.c - one minibatch's global update as data: local half, apply half, codec.
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
 * name their words by index into an slda_update_scratch_t (tokenised with
 * the model's tokenizer, the vocabulary untouched); the local half looks
 * each word up without counting it, gives a word the vocabulary lacks a
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
 * Codec (docs/replication.md, "Record format"): "SLDU", uint32 big-endian
 * format version, a MessagePack header map, a MessagePack body map, and a
 * big-endian XXH3-64 (seed 0) of every byte before it. The statistics are
 * float32, float16 or 8 bits per value with a float32 scale per row
 * (slda_update_encode's values argument). Decoding checks envelope, version and checksum before it
 * parses anything, walks the MessagePack with a bounds-checked cursor, and
 * checks every index and count against the record's own sizes; anything
 * else is SLDA_ERR_CORRUPT naming the field. Lossy encodings change the
 * values: every replica, the producer included, applies the decoded record.
 *
 * Threads: the local half uses the model's worker pool and must not run
 * while another thread changes the model (it writes rows and NZ for its
 * duration); apply is the model thread's.
 */
#include "engine/update.h"
#include "engine/births.h"
#include "engine/model_int.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "core/pool.h"
#include "core/msgpack.h"

#include <msgpack.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UPD_MAGIC "SLDU"
#define UPD_MAGIC_LEN 4
#define UPD_VERSION 1u
#define UPD_HEAD_LEN (UPD_MAGIC_LEN + 4)
#define UPD_TRAILER_LEN 8
#define UPD_TOPIC_MAX 256 /* bytes of an input's topic name */

typedef struct upd_input_s {
    char *topic;
    int32_t partition;
    int64_t from, to;
} upd_input_t;

struct slda_update_s {
    uint32_t K;
    uint64_t base;            /* model->t the local half read */
    uint64_t ntokens;
    uint32_t ndocs, ntrained;
    int revisit;
    int marks;                /* made from scratch documents: apply counts the words */
    uint32_t nwords;
    char **word;              /* nwords, NUL-terminated, owned */
    uint32_t *wlen;
    uint32_t *wcount;         /* nwords: tokens of each word in the minibatch */
    uint32_t nslots;
    uint32_t *slot;           /* nslots: word index of each slot */
    float *stats;             /* nslots * K */
    uint32_t *lengths;        /* ndocs, or NULL */
    float *ntheta;            /* ndocs * K, or NULL */
    float *scores;            /* ndocs, or NULL (births) */
    uint32_t *npairs;         /* ndocs (births) */
    uint32_t *pword, *pcount; /* total pairs: word index, count (births) */
    float *pw;                /* total pairs (births) */
    uint64_t npairs_total;
    size_t ninputs;
    upd_input_t *inputs;
};

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

int slda_update_values_parse(const char *name, slda_update_values_t *out)
{
    static const char *const names[] = {"float32", "float16", "q8"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i])) {
            *out = (slda_update_values_t)i;
            return 0;
        }
    return -1;
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
/* Scratch vocabulary of one minibatch (replicas)                            */

struct slda_update_scratch_s {
    slda_bag_t *bag;
    char **word;
    uint32_t *len;
    uint64_t *hash;
    uint32_t n, cap;
    uint32_t *table; /* tcap slots: word index, or UINT32_MAX */
    uint32_t tcap;
};

slda_update_scratch_t *slda_update_scratch_new(void)
{
    slda_update_scratch_t *s = slda_xcalloc(1, sizeof *s);
    s->bag = slda_bag_new();
    return s;
}

void slda_update_scratch_clear(slda_update_scratch_t *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++)
        free(s->word[i]);
    s->n = 0;
    if (s->table)
        memset(s->table, 0xff, (size_t)s->tcap * sizeof *s->table);
}

void slda_update_scratch_destroy(slda_update_scratch_t *s)
{
    if (!s)
        return;
    slda_update_scratch_clear(s);
    slda_bag_free(s->bag);
    free(s->word);
    free(s->len);
    free(s->hash);
    free(s->table);
    free(s);
}

uint32_t slda_update_scratch_words(const slda_update_scratch_t *s)
{
    return s->n;
}

static uint32_t scratch_slot(const slda_update_scratch_t *s, const char *w, uint32_t len,
                             uint64_t h)
{
    uint32_t i = (uint32_t)h & (s->tcap - 1);
    while (s->table[i] != UINT32_MAX &&
           !(s->hash[s->table[i]] == h && s->len[s->table[i]] == len &&
             !memcmp(s->word[s->table[i]], w, len)))
        i = (i + 1) & (s->tcap - 1);
    return i;
}

static uint32_t scratch_intern(slda_update_scratch_t *s, const char *w, uint32_t len, uint64_t h)
{
    if (2 * ((uint64_t)s->n + 1) > s->tcap) {
        uint32_t tcap = s->tcap ? 2 * s->tcap : 1024;
        free(s->table);
        s->table = slda_xmalloc((size_t)tcap * sizeof *s->table);
        memset(s->table, 0xff, (size_t)tcap * sizeof *s->table);
        s->tcap = tcap;
        for (uint32_t i = 0; i < s->n; i++)
            s->table[scratch_slot(s, s->word[i], s->len[i], s->hash[i])] = i;
    }
    uint32_t slot = scratch_slot(s, w, len, h);
    if (s->table[slot] != UINT32_MAX)
        return s->table[slot];
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->word = slda_xrealloc(s->word, s->cap * sizeof *s->word);
        s->len = slda_xrealloc(s->len, s->cap * sizeof *s->len);
        s->hash = slda_xrealloc(s->hash, s->cap * sizeof *s->hash);
    }
    s->word[s->n] = slda_xstrndup(w, len);
    s->len[s->n] = len;
    s->hash[s->n] = h;
    s->table[slot] = s->n;
    return s->n++;
}

slda_err_t slda_update_doc_from_text(const slda_model_t *model, slda_update_scratch_t *scratch,
                                     const char *text, size_t len, slda_doc_t *doc,
                                     char *errstr, size_t errstr_size)
{
    slda_doc_init(doc);
    slda_bag_t *bag = scratch->bag;
    slda_err_t err = slda_bag_tokenize(model->tok, slda_vocab_seed(model->vocab), bag, text, len,
                                       errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    return slda_update_doc_from_bag(model, scratch, bag, doc, errstr, errstr_size);
}

slda_err_t slda_update_doc_from_bag(const slda_model_t *model, slda_update_scratch_t *scratch,
                                    const slda_bag_t *bag, slda_doc_t *doc, char *errstr,
                                    size_t errstr_size)
{
    if (bag->n == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            "document: no tokens (after the text.* cleanup rules, stop words "
                            "\"%s\" and text.min.length=%u)",
                            model->p.stopwords ? model->p.stopwords : "none",
                            model->p.min_length);
    for (uint32_t i = 0; i < bag->n; i++)
        slda_doc_add(doc, scratch_intern(scratch, bag->arena + bag->off[i], bag->len[i],
                                         bag->hash[i]),
                     bag->count[i]);
    slda_doc_finish(doc);
    return SLDA_OK;
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
    return SLDA_OK;
}

/* ------------------------------------------------------------------------ */
/* Codec: values                                                             */

/* IEEE binary16, round to nearest even; beyond the largest finite half the
 * value saturates (statistics are finite and >= 0). */
static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x477ff000u) /* rounds to >= 65520, or inf/NaN: largest finite */
        return (uint16_t)(sign | (x > 0x7f800000u ? 0x7e00u : 0x7bffu));
    if (x < 0x33000000u) /* below half the smallest subnormal */
        return (uint16_t)sign;
    uint32_t e = x >> 23;
    if (e < 113) { /* subnormal half */
        uint32_t m = (x & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((e - 112) << 10) | ((x >> 13) & 0x3ffu);
    uint32_t rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    if (e == 31)
        x = sign | 0x7f800000u | (m << 13);
    else
        x = sign | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_f32(unsigned char *p, float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    put_le32(p, x);
}

static float get_f32(const unsigned char *p)
{
    uint32_t x = get_le32(p);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static size_t row_bytes(slda_update_values_t values, uint32_t K)
{
    switch (values) {
    case SLDA_UPDATE_F16: return 2 * (size_t)K;
    case SLDA_UPDATE_Q8: return 4 + (size_t)K;
    default: return 4 * (size_t)K;
    }
}

static void encode_row(unsigned char *p, const float *x, uint32_t K, slda_update_values_t values)
{
    if (values == SLDA_UPDATE_F16) {
        for (uint32_t k = 0; k < K; k++) {
            uint16_t h = f32_to_f16(x[k]);
            p[2 * k] = (unsigned char)h;
            p[2 * k + 1] = (unsigned char)(h >> 8);
        }
    } else if (values == SLDA_UPDATE_Q8) {
        float mx = 0;
        for (uint32_t k = 0; k < K; k++)
            mx = x[k] > mx ? x[k] : mx;
        put_f32(p, mx);
        for (uint32_t k = 0; k < K; k++) {
            float q = mx > 0 && x[k] > 0 ? x[k] / mx * 255.0f + 0.5f : 0.0f;
            p[4 + k] = (unsigned char)(q > 255.0f ? 255 : (unsigned)q);
        }
    } else {
        for (uint32_t k = 0; k < K; k++)
            put_f32(p + 4 * k, x[k]);
    }
}

/* 0, or -1 for a value that is not finite and >= 0. */
static int decode_row(float *x, const unsigned char *p, uint32_t K, slda_update_values_t values)
{
    if (values == SLDA_UPDATE_F16) {
        for (uint32_t k = 0; k < K; k++)
            x[k] = f16_to_f32((uint16_t)(p[2 * k] | p[2 * k + 1] << 8));
    } else if (values == SLDA_UPDATE_Q8) {
        float mx = get_f32(p);
        if (!(mx >= 0) || !isfinite(mx))
            return -1;
        for (uint32_t k = 0; k < K; k++)
            x[k] = p[4 + k] * (mx / 255.0f);
    } else {
        for (uint32_t k = 0; k < K; k++)
            x[k] = get_f32(p + 4 * k);
    }
    for (uint32_t k = 0; k < K; k++)
        if (!(x[k] >= 0) || !isfinite(x[k]))
            return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Codec: writer                                                             */

static void pack_key(msgpack_packer *pk, const char *key)
{
    msgpack_pack_str_with_body(pk, key, strlen(key));
}

static void pack_u32s(msgpack_packer *pk, const uint32_t *v, uint64_t n)
{
    unsigned char *b = slda_xmalloc(4 * n + 1);
    for (uint64_t i = 0; i < n; i++)
        put_le32(b + 4 * i, v[i]);
    msgpack_pack_bin_with_body(pk, b, 4 * n);
    free(b);
}

static void pack_f32s(msgpack_packer *pk, const float *v, uint64_t n)
{
    unsigned char *b = slda_xmalloc(4 * n + 1);
    for (uint64_t i = 0; i < n; i++)
        put_f32(b + 4 * i, v[i]);
    msgpack_pack_bin_with_body(pk, b, 4 * n);
    free(b);
}

static const char *const values_names[] = {"float32", "float16", "q8"};

slda_err_t slda_update_encode(const slda_update_t *upd, slda_update_values_t values, void **buf,
                              size_t *len, char *errstr, size_t errstr_size)
{
    *buf = NULL;
    *len = 0;
    if (!upd || (unsigned)values > SLDA_UPDATE_Q8)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "update: bad arguments");
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    unsigned char head[UPD_HEAD_LEN];
    memcpy(head, UPD_MAGIC, UPD_MAGIC_LEN);
    for (int i = 0; i < 4; i++)
        head[UPD_MAGIC_LEN + i] = (unsigned char)(UPD_VERSION >> (8 * (3 - i)));
    msgpack_sbuffer_write(&sb, (const char *)head, UPD_HEAD_LEN);

    /* header */
    msgpack_pack_map(&pk, 9);
    pack_key(&pk, "base");
    msgpack_pack_uint64(&pk, upd->base);
    pack_key(&pk, "K");
    msgpack_pack_uint32(&pk, upd->K);
    pack_key(&pk, "tokens");
    msgpack_pack_uint64(&pk, upd->ntokens);
    pack_key(&pk, "docs");
    msgpack_pack_uint32(&pk, upd->ndocs);
    pack_key(&pk, "trained");
    msgpack_pack_uint32(&pk, upd->ntrained);
    pack_key(&pk, "revisit");
    if (upd->revisit)
        msgpack_pack_true(&pk);
    else
        msgpack_pack_false(&pk);
    pack_key(&pk, "marks");
    if (upd->marks)
        msgpack_pack_true(&pk);
    else
        msgpack_pack_false(&pk);
    pack_key(&pk, "values");
    pack_key(&pk, values_names[values]);
    pack_key(&pk, "inputs");
    msgpack_pack_array(&pk, upd->ninputs);
    for (size_t i = 0; i < upd->ninputs; i++) {
        msgpack_pack_array(&pk, 4);
        pack_key(&pk, upd->inputs[i].topic);
        msgpack_pack_int32(&pk, upd->inputs[i].partition);
        msgpack_pack_int64(&pk, upd->inputs[i].from);
        msgpack_pack_int64(&pk, upd->inputs[i].to);
    }

    /* body */
    msgpack_pack_map(&pk, 4 + (upd->ntheta ? 2 : 0) + (upd->scores ? 5 : 0));
    pack_key(&pk, "words");
    msgpack_pack_array(&pk, upd->nwords);
    for (uint32_t w = 0; w < upd->nwords; w++)
        msgpack_pack_str_with_body(&pk, upd->word[w], upd->wlen[w]);
    pack_key(&pk, "counts");
    pack_u32s(&pk, upd->wcount, upd->nwords);
    pack_key(&pk, "slots");
    pack_u32s(&pk, upd->slot, upd->nslots);
    pack_key(&pk, "stats");
    size_t rb = row_bytes(values, upd->K);
    unsigned char *rows = slda_xmalloc(rb * upd->nslots + 1);
    for (uint32_t s = 0; s < upd->nslots; s++)
        encode_row(rows + rb * s, upd->stats + (size_t)s * upd->K, upd->K, values);
    msgpack_pack_bin_with_body(&pk, rows, rb * upd->nslots);
    free(rows);
    if (upd->ntheta) {
        pack_key(&pk, "lengths");
        pack_u32s(&pk, upd->lengths, upd->ndocs);
        pack_key(&pk, "ntheta");
        pack_f32s(&pk, upd->ntheta, (uint64_t)upd->ndocs * upd->K);
    }
    if (upd->scores) {
        pack_key(&pk, "scores");
        pack_f32s(&pk, upd->scores, upd->ndocs);
        pack_key(&pk, "npairs");
        pack_u32s(&pk, upd->npairs, upd->ndocs);
        pack_key(&pk, "pword");
        pack_u32s(&pk, upd->pword, upd->npairs_total);
        pack_key(&pk, "pcount");
        pack_u32s(&pk, upd->pcount, upd->npairs_total);
        pack_key(&pk, "pw");
        pack_f32s(&pk, upd->pw, upd->npairs_total);
    }
    uint64_t sum = slda_hash64(sb.data, sb.size, 0);
    unsigned char tr[UPD_TRAILER_LEN];
    for (int i = 0; i < 8; i++)
        tr[i] = (unsigned char)(sum >> (8 * (7 - i)));
    msgpack_sbuffer_write(&sb, (const char *)tr, UPD_TRAILER_LEN);
    *len = sb.size;
    *buf = msgpack_sbuffer_release(&sb);
    return SLDA_OK;
}

/* ------------------------------------------------------------------------ */
/* Codec: reader (core/msgpack.c's bounds-checked cursor, no msgpack_unpack) */

/* The key the format puts next: the keys come in a fixed order. */
static int expect_key(slda_msgpack_t *mp, const char *key)
{
    const unsigned char *s;
    size_t n;
    if (slda_msgpack_str(mp, "key", &s, &n))
        return -1;
    if (!slda_msgpack_eq(s, n, key)) {
        mp->p = s; /* point at the key */
        return slda_msgpack_fail(mp, "expected key \"%s\"", key);
    }
    return 0;
}

/* A key, then a bin of exactly n 4-byte values. */
static int read_u32s(slda_msgpack_t *mp, const char *key, uint64_t n, uint32_t **out)
{
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, key) || slda_msgpack_bin(mp, key, &s, &len))
        return -1;
    if (len != 4 * n)
        return slda_msgpack_fail(mp, "%s", key);
    *out = slda_xmalloc(4 * n + 4);
    for (uint64_t i = 0; i < n; i++)
        (*out)[i] = get_le32(s + 4 * i);
    return 0;
}

static int read_f32s(slda_msgpack_t *mp, const char *key, uint64_t n, float **out)
{
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, key) || slda_msgpack_bin(mp, key, &s, &len))
        return -1;
    if (len != 4 * n)
        return slda_msgpack_fail(mp, "%s", key);
    *out = slda_xmalloc(4 * n + 4);
    for (uint64_t i = 0; i < n; i++) {
        (*out)[i] = get_f32(s + 4 * i);
        if (!isfinite((*out)[i]))
            return slda_msgpack_fail(mp, "%s", key);
    }
    return 0;
}

/* One [topic, partition, from, to] of "inputs". */
static int decode_input(slda_msgpack_t *mp, slda_update_t *upd)
{
    const unsigned char *s;
    size_t len;
    uint32_t four;
    int64_t part, from, to;
    if (slda_msgpack_array(mp, "input", &four))
        return -1;
    if (four != 4)
        return slda_msgpack_fail(mp, "input");
    if (slda_msgpack_str(mp, "input topic", &s, &len))
        return -1;
    if (len > UPD_TOPIC_MAX || memchr(s, 0, len))
        return slda_msgpack_fail(mp, "input");
    if (slda_msgpack_int(mp, "input partition", &part))
        return -1;
    if (part < INT32_MIN || part > INT32_MAX)
        return slda_msgpack_fail(mp, "input");
    if (slda_msgpack_int(mp, "input from", &from) || slda_msgpack_int(mp, "input to", &to))
        return -1;
    if (from > to)
        return slda_msgpack_fail(mp, "input");
    upd_input_t *in = &upd->inputs[upd->ninputs++];
    in->topic = slda_xstrndup((const char *)s, len);
    in->partition = (int32_t)part;
    in->from = from;
    in->to = to;
    return 0;
}

static int decode_header(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t *values)
{
    uint32_t n;
    uint64_t v;
    if (slda_msgpack_map(mp, "header", &n))
        return -1;
    if (n != 9)
        return slda_msgpack_fail(mp, "header");
    if (expect_key(mp, "base") || slda_msgpack_uint(mp, "base", &upd->base))
        return -1;
    if (expect_key(mp, "K") || slda_msgpack_uint(mp, "K", &v))
        return -1;
    if (v < 1 || v > SLDA_MAX_TOPICS)
        return slda_msgpack_fail(mp, "K out of range");
    upd->K = (uint32_t)v;
    if (expect_key(mp, "tokens") || slda_msgpack_uint(mp, "tokens", &upd->ntokens))
        return -1;
    if (expect_key(mp, "docs") || slda_msgpack_uint(mp, "docs", &v))
        return -1;
    if (v > UINT32_MAX)
        return slda_msgpack_fail(mp, "docs");
    upd->ndocs = (uint32_t)v;
    if (expect_key(mp, "trained") || slda_msgpack_uint(mp, "trained", &v))
        return -1;
    if (v > upd->ndocs)
        return slda_msgpack_fail(mp, "trained");
    upd->ntrained = (uint32_t)v;
    if (expect_key(mp, "revisit") || slda_msgpack_bool(mp, "revisit", &upd->revisit) ||
        expect_key(mp, "marks") || slda_msgpack_bool(mp, "marks", &upd->marks))
        return -1;
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, "values") || slda_msgpack_str(mp, "values", &s, &len))
        return -1;
    int found = 0;
    for (int i = 0; i < 3; i++)
        if (slda_msgpack_eq(s, len, values_names[i])) {
            *values = (slda_update_values_t)i;
            found = 1;
        }
    if (!found)
        return slda_msgpack_fail(mp, "unknown values encoding");
    if (expect_key(mp, "inputs") || slda_msgpack_array(mp, "inputs", &n))
        return -1;
    upd->inputs = slda_xcalloc((size_t)n + 1, sizeof *upd->inputs);
    for (uint32_t i = 0; i < n; i++)
        if (decode_input(mp, upd))
            return -1;
    return 0;
}

/* "words": non-empty strings without NUL bytes. */
static int decode_words(slda_msgpack_t *mp, slda_update_t *upd)
{
    uint32_t n;
    if (expect_key(mp, "words") || slda_msgpack_array(mp, "words", &n))
        return -1;
    upd->word = slda_xcalloc((size_t)n + 1, sizeof *upd->word);
    upd->wlen = slda_xcalloc((size_t)n + 1, sizeof *upd->wlen);
    for (uint32_t w = 0; w < n; w++) {
        const unsigned char *s;
        size_t len;
        if (slda_msgpack_str(mp, "word", &s, &len))
            return -1;
        if (len == 0 || len > UINT32_MAX || memchr(s, 0, len))
            return slda_msgpack_fail(mp, "word");
        upd->word[w] = slda_xstrndup((const char *)s, len);
        upd->wlen[w] = (uint32_t)len;
        upd->nwords++;
    }
    return 0;
}

/* "slots" (distinct word indexes) and "stats" (one row per slot). */
static int decode_stats(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t values)
{
    uint32_t K = upd->K;
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, "slots") || slda_msgpack_bin(mp, "slots", &s, &len))
        return -1;
    if (len % 4 || len / 4 > upd->nwords)
        return slda_msgpack_fail(mp, "slots");
    upd->nslots = (uint32_t)(len / 4);
    upd->slot = slda_xmalloc(len + 4);
    uint8_t *seen = slda_xcalloc(upd->nwords + 1, 1);
    for (uint32_t i = 0; i < upd->nslots; i++) {
        upd->slot[i] = get_le32(s + 4 * i);
        if (upd->slot[i] >= upd->nwords || seen[upd->slot[i]]++) {
            free(seen);
            return slda_msgpack_fail(mp, "slots: word index out of range or repeated");
        }
    }
    free(seen);
    size_t rb = row_bytes(values, K);
    if (expect_key(mp, "stats") || slda_msgpack_bin(mp, "stats", &s, &len))
        return -1;
    if (len != rb * upd->nslots)
        return slda_msgpack_fail(mp, "stats");
    upd->stats = slda_xmalloc(((size_t)upd->nslots * K + 1) * sizeof(float));
    uint64_t wtotal = 0;
    for (uint32_t w = 0; w < upd->nwords; w++)
        wtotal += upd->wcount[w];
    if (wtotal != upd->ntokens)
        return slda_msgpack_fail(mp, "counts: do not add up to the tokens");
    for (uint32_t i = 0; i < upd->nslots; i++) {
        const float *x = upd->stats + (size_t)i * K;
        if (decode_row(upd->stats + (size_t)i * K, s + rb * i, K, values))
            return slda_msgpack_fail(mp, "stats: value not finite and >= 0");
        /* a word's statistics sum to its tokens in the trained documents (q8
         * rounding moves the sum by up to K/510 of the row's largest value) */
        double sum = 0;
        for (uint32_t k = 0; k < K; k++)
            sum += x[k];
        if (sum > 2.0 * upd->wcount[upd->slot[i]] + 1.0)
            return slda_msgpack_fail(mp, "stats: a row over its word's count");
    }
    return 0;
}

/* "lengths" and "ntheta" (alpha learning or births). */
static int decode_alpha(slda_msgpack_t *mp, slda_update_t *upd)
{
    uint32_t K = upd->K;
    if (read_u32s(mp, "lengths", upd->ndocs, &upd->lengths) ||
        read_f32s(mp, "ntheta", (uint64_t)upd->ndocs * K, &upd->ntheta))
        return -1;
    /* the lengths add up to the tokens; a document's counts to about its length */
    uint64_t total = 0;
    for (uint32_t i = 0; i < upd->ndocs; i++) {
        double sum = 0;
        for (uint32_t k = 0; k < K; k++) {
            float v = upd->ntheta[(size_t)i * K + k];
            if (!(v >= 0))
                return slda_msgpack_fail(mp, "ntheta: negative count");
            sum += v;
        }
        if (sum > upd->lengths[i] * 1.001 + 0.01)
            return slda_msgpack_fail(mp, "ntheta: counts over the document's length");
        total += upd->lengths[i];
    }
    if (total != upd->ntokens)
        return slda_msgpack_fail(mp, "lengths: do not add up to the tokens");
    return 0;
}

/* "scores", "npairs", "pword", "pcount", "pw" (births). */
static int decode_births(slda_msgpack_t *mp, slda_update_t *upd)
{
    if (read_f32s(mp, "scores", upd->ndocs, &upd->scores) ||
        read_u32s(mp, "npairs", upd->ndocs, &upd->npairs))
        return -1;
    uint64_t total = 0;
    for (uint32_t i = 0; i < upd->ndocs; i++)
        total += upd->npairs[i];
    if (total > (uint64_t)slda_msgpack_left(mp) / 4)
        return slda_msgpack_fail(mp, "npairs");
    upd->npairs_total = total;
    if (read_u32s(mp, "pword", total, &upd->pword) ||
        read_u32s(mp, "pcount", total, &upd->pcount) || read_f32s(mp, "pw", total, &upd->pw))
        return -1;
    for (uint64_t i = 0; i < total; i++)
        if (upd->pword[i] >= upd->nwords || upd->pcount[i] == 0 || !(upd->pw[i] > 0) ||
            upd->pw[i] > 1.001f)
            return slda_msgpack_fail(mp, "pword/pcount/pw: out of range");
    for (uint32_t i = 0; i < upd->ndocs; i++)
        if (upd->scores[i] > 0)
            return slda_msgpack_fail(mp, "scores: a log-likelihood above 0");
    /* each document's pairs name distinct words and sum to its length */
    uint64_t off = 0;
    for (uint32_t i = 0; i < upd->ndocs; i++) {
        uint64_t sum = 0;
        for (uint32_t u = 0; u < upd->npairs[i]; u++)
            sum += upd->pcount[off + u];
        if (sum != upd->lengths[i])
            return slda_msgpack_fail(mp, "pcount: counts do not sum to the document's length");
        off += upd->npairs[i];
    }
    return 0;
}

static int decode_body(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t values)
{
    uint32_t nkeys;
    if (slda_msgpack_map(mp, "body", &nkeys))
        return -1;
    if (nkeys != 4 && nkeys != 6 && nkeys != 11)
        return slda_msgpack_fail(mp, "body");
    if (decode_words(mp, upd) || read_u32s(mp, "counts", upd->nwords, &upd->wcount) ||
        decode_stats(mp, upd, values))
        return -1;
    if (nkeys >= 6 && decode_alpha(mp, upd))
        return -1;
    if (nkeys == 11 && decode_births(mp, upd))
        return -1;
    if (slda_msgpack_left(mp))
        return slda_msgpack_fail(mp, "bytes after the body");
    return 0;
}

slda_err_t slda_update_decode(const void *buf, size_t len, slda_update_t **out, char *errstr,
                              size_t errstr_size)
{
    const unsigned char *b = buf;
    *out = NULL;
    if (!buf || len < UPD_HEAD_LEN + UPD_TRAILER_LEN)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TRUNCATED,
                            "update record: %zu bytes, shorter than the envelope", len);
    if (memcmp(b, UPD_MAGIC, UPD_MAGIC_LEN))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "update record: bad magic (not an update record)");
    uint32_t version = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
    if (version != UPD_VERSION)
        return slda_set_err(errstr, errstr_size,
                            version > UPD_VERSION ? SLDA_ERR_VERSION : SLDA_ERR_CORRUPT,
                            "update record: format version %u, this build reads %u", version,
                            UPD_VERSION);
    uint64_t want = 0, have = slda_hash64(b, len - UPD_TRAILER_LEN, 0);
    for (int i = 0; i < 8; i++)
        want = want << 8 | b[len - UPD_TRAILER_LEN + i];
    if (want != have)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "update record: checksum %016" PRIx64 ", computed %016" PRIx64,
                            want, have);
    slda_msgpack_t mp;
    slda_msgpack_init(&mp, b, UPD_HEAD_LEN, len - UPD_TRAILER_LEN, "update record: ", errstr,
                      errstr_size);
    slda_update_t *upd = slda_xcalloc(1, sizeof *upd);
    slda_update_values_t values = SLDA_UPDATE_F32;
    if (decode_header(&mp, upd, &values) || decode_body(&mp, upd, values)) {
        slda_update_destroy(upd);
        return SLDA_ERR_CORRUPT;
    }
    if (upd->scores && upd->revisit) {
        slda_update_destroy(upd);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "update record: a second visit with births inputs");
    }
    *out = upd;
    return SLDA_OK;
}

/* ------------------------------------------------------------------------ */
/* Digest: do two replicas hold the same model?                              */

typedef struct digest_word_s {
    uint64_t key;
    uint32_t id;
} digest_word_t;

static int digest_word_cmp(const void *a, const void *b)
{
    uint64_t x = ((const digest_word_t *)a)->key, y = ((const digest_word_t *)b)->key;
    return x < y ? -1 : x > y;
}

uint64_t slda_model_digest(const slda_model_t *model)
{
    uint32_t n = 0, max = slda_vocab_max_id(model->vocab), K = model->K;
    digest_word_t *w = slda_xmalloc(((size_t)max + 1) * sizeof *w);
    for (uint32_t id = 0; id < max && id < model->W; id++)
        if (slda_vocab_word(model->vocab, id))
            w[n].key = slda_vocab_key(model->vocab, id), w[n++].id = id;
    qsort(w, n, sizeof *w, digest_word_cmp); /* ids are per process, keys are not */
    uint64_t head[4] = {model->t, model->docs, model->tokens, K};
    uint64_t h = slda_hash64(head, sizeof head, 0x5344); /* "SD" */
    h = slda_hash64(&model->sigma, sizeof model->sigma, h);
    h = slda_hash64(model->alpha, K * sizeof *model->alpha, h);
    h = slda_hash64(model->NZ, K * sizeof *model->NZ, h);
    for (uint32_t i = 0; i < n; i++) {
        struct {
            uint64_t key;
            double freq;
            uint32_t ready;
        } rec = {w[i].key, slda_vocab_freq(model->vocab, w[i].id),
                 model->row_ready[w[i].id]};
        h = slda_hash64(&rec.key, sizeof rec.key, h);
        h = slda_hash64(&rec.freq, sizeof rec.freq, h);
        h = slda_hash64(&rec.ready, sizeof rec.ready, h);
        h = slda_hash64(model->A + (size_t)w[i].id * model->Kp, K * sizeof(float), h);
    }
    free(w);
    return h;
}
