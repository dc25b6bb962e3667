/* subject.c - new subjects from the words: words that were rare and now come together.
 *
 * subject.h says why. How, at the end of each block of `block` documents (in the order they
 * were trained, the tracker's order, so the same input finds the same subjects), over the
 * window of the last two blocks:
 *   1. Each word's count c is the number of the window's documents that hold it (a word
 *      repeated in one document counts once: a price table or a list of names is one
 *      document). Its expected count is e = n x base / base_docs for the window's n
 *      documents, base and base_docs the documents before the window (decayed by GAMMA a
 *      block: a horizon of about HORIZON blocks), and never below E_MIN (a word never seen).
 *      Two blocks, because a change that starts inside a block shows in it only in part
 *      (20 Newsgroups with five groups joining: "circuit" in 13 documents of the block of
 *      the join against 2.4 expected, 29 in two blocks against 4.8).
 *   2. A word is new in the window when c >= C_MIN, c >= RATIO e and the log-likelihood
 *      ratio of a Poisson rate c against e, G = 2 (c ln(c/e) - (c - e)), is at least G_MIN.
 *      G_MIN is far in the tail (about 1e-7 for one word and window under the Poisson; real
 *      words are burstier, so one word is never a subject:)
 *   3. The new words are grouped by the topic most of their documents' mixtures put first
 *      (the model's own grouping; the overlap of two words' documents was too weak to cut
 *      on: on 20 Newsgroups the cosine of their sets of documents was 0.2-0.3 within a new
 *      group, "forsale" and "shipping" 0.23, and 0.0-0.2 across). The new words of one
 *      topic, strongest first, make one subject if MIN_WORDS of them and MIN_DOCS documents
 *      that hold two of them or more. Its time is where those documents start to come (the
 *      split of the window into two Poisson rates of them that is most likely), not the
 *      first of them, which may be one of the few the old stream had.
 *   4. Every word of a subject found is given the window's rate as baseline, so a subject
 *      is reported once, not at every block while it lasts; and a subject of the same topic
 *      found a block later that started within the window already reported is its weaker
 *      words, not reported again. The block before the window then joins every baseline.
 * Nothing is found before WARM blocks have built the baselines. The table holds at most
 * `cap` words: at a block's end, words whose baseline has decayed under PRUNE and that the
 * window does not hold are forgotten when it is three quarters full; a word that finds it
 * full is not counted (slda_subjects_skipped).
 *
 * Measured in docs/tracking.md ("New subjects injected into real text", "False events on
 * stationary real streams").
 */
#include "track/subject.h"
#include "core/slda_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HORIZON 20.0   /* blocks a baseline remembers (GAMMA = exp(-1 / HORIZON)) */
#define WARM 4         /* blocks before anything is found */
#define E_MIN 1.0      /* the least expected count of a word */
#define C_MIN 10       /* documents of the window a new word must be in */
#define RATIO 4.0      /* ... at least this many times its expected count */
#define G_MIN 30.0     /* ... with this likelihood ratio */
#define MIN_WORDS 3    /* words of a subject */
#define MIN_DOCS 5     /* documents holding two of its words or more */
#define MAX_NEW 256    /* new words considered in a block (the strongest) */
#define PRUNE 0.5      /* a forgotten word's baseline */

typedef struct went_s {
    uint64_t key;  /* 0: empty */
    double base;   /* documents before the window that held it, decayed */
    uint32_t prev; /* documents of the window's first block that hold it */
    uint32_t cur;  /* documents of the block being read that hold it */
    int32_t cand;  /* its index among the window's new words, -1 none, -2 a subject's */
} went_t;

struct slda_subjects_s {
    uint32_t block, cap;
    went_t *tab;
    size_t nslots, used;
    double base_docs;
    uint64_t blocks, docs, skipped;
    /* the window's documents (the previous block's nprev, then the current one's), their
     * words as slots of tab */
    uint32_t nblk, nprev;
    uint32_t *start; /* 2 block + 1 */
    uint32_t *word;
    size_t nw, capw;
    uint32_t *topic;
    int64_t *ms;
    slda_subject_t *found;
    size_t nfound;
    /* per topic: the block (+1; 0 none) whose end reported a subject on it, and the newest
     * event time of that window; the times of the subjects reported at the last block's end */
    uint64_t *said_block;
    int64_t *said_ms;
    size_t nsaid;
    int64_t last_first[MAX_NEW];
    size_t nlast;
    uint64_t last_block; /* + 1; 0 none */
};

slda_subjects_t *slda_subjects_new(uint32_t block_docs, uint32_t capacity)
{
    if (block_docs == 0)
        return NULL;
    slda_subjects_t *s = slda_xcalloc(1, sizeof *s);
    s->block = block_docs;
    s->cap = capacity ? capacity : 1;
    s->nslots = 16;
    while (s->nslots < 2 * (size_t)s->cap)
        s->nslots *= 2;
    s->tab = slda_xcalloc(s->nslots, sizeof *s->tab);
    s->start = slda_xcalloc(2 * (size_t)block_docs + 1, sizeof *s->start);
    s->topic = slda_xcalloc(2 * (size_t)block_docs, sizeof *s->topic);
    s->ms = slda_xcalloc(2 * (size_t)block_docs, sizeof *s->ms);
    s->found = slda_xcalloc(MAX_NEW, sizeof *s->found);
    return s;
}

void slda_subjects_destroy(slda_subjects_t *s)
{
    if (!s)
        return;
    free(s->tab);
    free(s->start);
    free(s->word);
    free(s->topic);
    free(s->ms);
    free(s->found);
    free(s->said_block);
    free(s->said_ms);
    free(s);
}

static size_t slot_of(const slda_subjects_t *s, uint64_t key)
{
    size_t i = (size_t)(key ^ (key >> 29)) & (s->nslots - 1);
    while (s->tab[i].key && s->tab[i].key != key)
        i = (i + 1) & (s->nslots - 1);
    return i;
}

/* Forget the words with a small baseline that the window does not hold (tab rebuilt; the
 * window's documents, which hold only words it keeps, point at their new slots). */
static void prune(slda_subjects_t *s)
{
    went_t *old = s->tab;
    uint32_t *moved = slda_xmalloc(s->nslots * sizeof *moved);
    s->tab = slda_xcalloc(s->nslots, sizeof *s->tab);
    s->used = 0;
    for (size_t i = 0; i < s->nslots; i++)
        if (old[i].key && (old[i].base >= PRUNE || old[i].cur > 0 || old[i].prev > 0)) {
            size_t to = slot_of(s, old[i].key);
            s->tab[to] = old[i];
            moved[i] = (uint32_t)to;
            s->used++;
        }
    for (size_t u = 0; u < s->nw; u++)
        s->word[u] = moved[s->word[u]];
    free(moved);
    free(old);
}

/* Where the documents with hits[d] >= 2 start to come: the split of the window at one of
 * them into two Poisson rates that is most likely; the event time of the document there
 * (the earliest event time from it on, for a stream a little out of order). */
static int64_t change_time(const slda_subjects_t *s, const uint32_t *hits)
{
    uint32_t n = s->nblk, m = 0;
    for (uint32_t d = 0; d < n; d++)
        m += hits[d] >= 2;
    double best = -INFINITY;
    uint32_t at = 0, before = 0;
    for (uint32_t d = 0; d < n; d++) {
        if (hits[d] < 2)
            continue;
        /* before: `before` documents in d slots; from d: m - before in n - d */
        double ll = 0, a = before, b = m - before;
        if (a > 0)
            ll += a * log(a / d);
        ll += b * log(b / (n - d));
        if (ll > best) {
            best = ll;
            at = d;
        }
        before++;
    }
    int64_t first = INT64_MAX;
    for (uint32_t d = at; d < n; d++)
        if (hits[d] >= 2 && s->ms[d] < first)
            first = s->ms[d];
    return first;
}

/* Whether the previous window reported this subject: one on the same topic that started
 * within that window, or one that started at the same time (its documents moved to a topic
 * born meanwhile): its weaker words, which come a block later (the late topic of
 * tests/0078 was reported twice, 9 and 10 words, at the same time, on its old topic and on
 * the one the engine gave it). Otherwise it is recorded as said. */
static int said(slda_subjects_t *s, const slda_subject_t *sj)
{
    if (s->last_block == s->blocks) /* the previous block's end reported some */
        for (size_t i = 0; i < s->nlast; i++)
            if (s->last_first[i] == sj->first_ms)
                return 1;
    int64_t newest = INT64_MIN;
    for (uint32_t d = 0; d < s->nblk; d++)
        if (s->ms[d] > newest)
            newest = s->ms[d];
    if (sj->topic >= s->nsaid) {
        size_t n = (size_t)sj->topic + 1;
        s->said_block = slda_xrealloc(s->said_block, n * sizeof *s->said_block);
        s->said_ms = slda_xrealloc(s->said_ms, n * sizeof *s->said_ms);
        memset(s->said_block + s->nsaid, 0, (n - s->nsaid) * sizeof *s->said_block);
        memset(s->said_ms + s->nsaid, 0, (n - s->nsaid) * sizeof *s->said_ms);
        s->nsaid = n;
    }
    if (s->said_block[sj->topic] == s->blocks && sj->first_ms <= s->said_ms[sj->topic])
        return 1; /* reported at the previous block's end (blocks + 1 - 1) */
    s->said_block[sj->topic] = s->blocks + 1;
    s->said_ms[sj->topic] = newest;
    if (s->last_block != s->blocks + 1) {
        s->last_block = s->blocks + 1;
        s->nlast = 0;
    }
    if (s->nlast < MAX_NEW)
        s->last_first[s->nlast++] = sj->first_ms;
    return 0;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t topic_mode(uint32_t *t, uint32_t n);

/* The topic that most of a word's documents (bits over the window) put first; the lowest
 * on a tie. */
static uint32_t word_topic(const slda_subjects_t *s, const uint8_t *bits)
{
    uint32_t *t = slda_xmalloc((s->nblk ? s->nblk : 1) * sizeof *t), n = 0;
    for (uint32_t d = 0; d < s->nblk; d++)
        if (bits[d / 8] & (1u << (d % 8)))
            t[n++] = s->topic[d];
    uint32_t best = topic_mode(t, n);
    free(t);
    return best;
}

/* The most frequent of t's n topics, the lowest on a tie (t is sorted in place). */
static uint32_t topic_mode(uint32_t *t, uint32_t n)
{
    qsort(t, n, sizeof *t, by_u32);
    uint32_t best = n ? t[0] : 0, bestn = 0;
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && t[j] == t[i]; j++)
            ;
        if (j - i > bestn) {
            bestn = j - i;
            best = t[i];
        }
    }
    return best;
}

static int by_g(const void *a, const void *b)
{
    const double *x = a, *y = b; /* {g, slot} pairs */
    if (x[0] != y[0])
        return x[0] < y[0] ? 1 : -1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Steps 2 and 3 of the file's comment: the subjects of the block into s->found. */
static void find_subjects(slda_subjects_t *s)
{
    double (*cand)[2] = slda_xmalloc(MAX_NEW * sizeof *cand);
    size_t nc = 0;
    for (size_t i = 0; i < s->nslots; i++) {
        went_t *w = &s->tab[i];
        w->cand = -1;
        if (!w->key || w->cur + w->prev < C_MIN)
            continue;
        double c = w->cur + w->prev, e = s->nblk * w->base / s->base_docs;
        if (e < E_MIN)
            e = E_MIN;
        double g = 2 * (c * log(c / e) - (c - e));
        if (c < RATIO * e || g < G_MIN)
            continue;
        if (nc == MAX_NEW) { /* keep the strongest: replace the weakest so far */
            size_t weakest = 0;
            for (size_t j = 1; j < nc; j++)
                if (cand[j][0] < cand[weakest][0])
                    weakest = j;
            if (g <= cand[weakest][0])
                continue;
            cand[weakest][0] = g;
            cand[weakest][1] = (double)i;
        } else {
            cand[nc][0] = g;
            cand[nc++][1] = (double)i;
        }
    }
    if (nc < MIN_WORDS) {
        free(cand);
        return;
    }
    qsort(cand, nc, sizeof *cand, by_g);
    for (size_t j = 0; j < nc; j++)
        s->tab[(size_t)cand[j][1]].cand = (int32_t)j;
    /* which new words each document holds: a bit set of the block's documents a word */
    size_t nbytes = (s->nblk + 7) / 8;
    uint8_t *docs = slda_xcalloc(nc * nbytes, 1);
    uint32_t *ndocs = slda_xcalloc(nc, sizeof *ndocs);
    for (uint32_t d = 0; d < s->nblk; d++)
        for (uint32_t u = s->start[d]; u < s->start[d + 1]; u++) {
            int32_t c = s->tab[s->word[u]].cand;
            if (c >= 0) {
                docs[(size_t)c * nbytes + d / 8] |= (uint8_t)(1u << (d % 8));
                ndocs[c]++;
            }
        }
    uint8_t *taken = slda_xcalloc(nc, 1);
    uint32_t *member = slda_xmalloc(nc * sizeof *member);
    uint32_t *hits = slda_xcalloc(s->nblk ? s->nblk : 1, sizeof *hits);
    uint32_t *topics = slda_xmalloc((s->nblk ? s->nblk : 1) * sizeof *topics);
    uint32_t *lead = slda_xmalloc(nc * sizeof *lead);
    for (size_t a = 0; a < nc; a++)
        lead[a] = word_topic(s, docs + a * nbytes);
    for (size_t a = 0; a < nc; a++) {
        if (taken[a])
            continue;
        size_t nm = 0;
        member[nm++] = (uint32_t)a;
        for (size_t b = a + 1; b < nc; b++)
            if (!taken[b] && lead[b] == lead[a])
                member[nm++] = (uint32_t)b;
        if (nm < MIN_WORDS)
            continue;
        /* its documents: those holding two of its words or more */
        memset(hits, 0, s->nblk * sizeof *hits);
        for (size_t m = 0; m < nm; m++)
            for (uint32_t d = 0; d < s->nblk; d++)
                if (docs[(size_t)member[m] * nbytes + d / 8] & (1u << (d % 8)))
                    hits[d]++;
        uint32_t nd = 0;
        for (uint32_t d = 0; d < s->nblk; d++)
            if (hits[d] >= 2)
                topics[nd++] = s->topic[d];
        if (nd < MIN_DOCS)
            continue;
        uint32_t best = topic_mode(topics, nd);
        slda_subject_t *out = &s->found[s->nfound++];
        memset(out, 0, sizeof *out);
        for (size_t m = 0; m < nm; m++) {
            taken[member[m]] = 1;
            s->tab[(size_t)cand[member[m]][1]].cand = -2; /* every word of it (step 4) */
            if (out->nwords < SLDA_SUBJECT_WORDS) {
                size_t slot = (size_t)cand[member[m]][1];
                out->key[out->nwords] = s->tab[slot].key;
                out->g[out->nwords++] = cand[member[m]][0];
            }
        }
        out->docs = nd;
        out->topic = best;
        out->first_ms = change_time(s, hits);
        if (said(s, out))
            s->nfound--; /* the rest of the subject the previous window reported */
    }
    free(lead);
    free(topics);
    free(hits);
    free(member);
    free(taken);
    free(ndocs);
    free(docs);
    free(cand);
}

static void end_block(slda_subjects_t *s)
{
    s->nfound = 0;
    if (s->blocks >= WARM && s->base_docs > 0)
        find_subjects(s);
    /* the window's first block joins the baselines; the block just read becomes it */
    double gamma = exp(-1.0 / HORIZON);
    s->base_docs = gamma * s->base_docs + s->nprev;
    for (size_t i = 0; i < s->nslots; i++) {
        went_t *w = &s->tab[i];
        if (!w->key)
            continue;
        w->base = gamma * w->base + w->prev;
        if (w->cand == -2) { /* a subject's word: the window's rate is its baseline */
            double now = s->base_docs * (w->prev + w->cur) / s->nblk;
            if (now > w->base)
                w->base = now;
        }
        w->prev = w->cur;
        w->cur = 0;
        w->cand = -1;
    }
    /* drop the first block's documents from the window */
    uint32_t keep = s->nblk - s->nprev, off = s->start[s->nprev];
    memmove(s->word, s->word + off, (s->nw - off) * sizeof *s->word);
    for (uint32_t d = 0; d <= keep; d++)
        s->start[d] = s->start[s->nprev + d] - off;
    memmove(s->topic, s->topic + s->nprev, keep * sizeof *s->topic);
    memmove(s->ms, s->ms + s->nprev, keep * sizeof *s->ms);
    s->nw -= off;
    s->nblk = s->nprev = keep;
    if (s->used * 4 >= (size_t)s->cap * 3) /* after the shift: every word left is kept */
        prune(s);
    s->blocks++;
}

size_t slda_subjects_add(slda_subjects_t *s, const uint64_t *key, uint32_t n, uint32_t topic,
                         int64_t ms)
{
    if (s->nw + n > s->capw) {
        s->capw = (s->nw + n) * 2;
        s->word = slda_xrealloc(s->word, s->capw * sizeof *s->word);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!key[i])
            continue;
        size_t slot = slot_of(s, key[i]);
        went_t *w = &s->tab[slot];
        if (!w->key) {
            if (s->used >= s->cap) {
                s->skipped++;
                continue;
            }
            w->key = key[i];
            w->base = 0;
            w->cur = 0;
            w->cand = -1;
            s->used++;
        }
        w->cur++;
        s->word[s->nw++] = (uint32_t)slot;
    }
    s->topic[s->nblk] = topic;
    s->ms[s->nblk] = ms;
    s->start[++s->nblk] = (uint32_t)s->nw;
    s->docs++;
    if (s->nblk - s->nprev < s->block)
        return 0;
    end_block(s);
    return s->nfound;
}

const slda_subject_t *slda_subjects_found(const slda_subjects_t *s, size_t *n)
{
    *n = s->nfound;
    return s->found;
}

uint64_t slda_subjects_skipped(const slda_subjects_t *s)
{
    return s ? s->skipped : 0;
}

uint64_t slda_subjects_docs(const slda_subjects_t *s)
{
    return s ? s->docs : 0;
}
