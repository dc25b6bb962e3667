/* align.c - JS distances between two models' topics and the optimal assignment (Hungarian).
 *
 * Invariants: a pair's distance is computed over a fixed support (the union of both topics'
 * word lists plus one remainder bucket) with every probability read from the model itself, so
 * the same pair always gives the same value and identical topics give exactly 0 (each term is
 * p log(p / ((p + p) / 2)) = 0, and both remainders are the same sums in the same order). The
 * assignment works on doubles with potentials; no tolerance is needed because it only compares
 * reduced costs. Pure computation on borrowed models: no I/O, no shared state.
 */
#include "track/align.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- assignment ---- */

/* The n <= m case: rows 1..n, columns 1..m (index 0 is the virtual start column). */
static double assign_wide(const double *cost, uint32_t n, uint32_t m, int transposed,
                          int32_t *row_to_col)
{
    /* cost of row i (1-based), column j (1-based), read through the transpose if asked */
#define COST(i, j) (transposed ? cost[(size_t)((j) - 1) * n + ((i) - 1)] \
                               : cost[(size_t)((i) - 1) * m + ((j) - 1)])
    double *u = slda_xcalloc(n + 1, sizeof *u);
    double *v = slda_xcalloc(m + 1, sizeof *v);
    double *minv = slda_xmalloc((m + 1) * sizeof *minv);
    uint32_t *p = slda_xcalloc(m + 1, sizeof *p);   /* p[j]: row matched to column j, 0 none */
    uint32_t *way = slda_xcalloc(m + 1, sizeof *way);
    char *used = slda_xmalloc(m + 1);
    for (uint32_t i = 1; i <= n; i++) {
        p[0] = i;
        uint32_t j0 = 0;
        for (uint32_t j = 0; j <= m; j++)
            minv[j] = INFINITY;
        memset(used, 0, m + 1);
        do {
            used[j0] = 1;
            uint32_t i0 = p[j0], j1 = 0;
            double delta = INFINITY;
            for (uint32_t j = 1; j <= m; j++) {
                if (used[j])
                    continue;
                double cur = COST(i0, j) - u[i0] - v[j];
                if (cur < minv[j]) {
                    minv[j] = cur;
                    way[j] = j0;
                }
                if (minv[j] < delta) {
                    delta = minv[j];
                    j1 = j;
                }
            }
            for (uint32_t j = 0; j <= m; j++) {
                if (used[j]) {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
        } while (p[j0] != 0);
        do {
            uint32_t j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0);
    }
    double total = 0;
    if (!transposed)
        for (uint32_t i = 0; i < n; i++)
            row_to_col[i] = -1;
    else
        for (uint32_t j = 0; j < m; j++)
            row_to_col[j] = -1;
    for (uint32_t j = 1; j <= m; j++) {
        if (!p[j])
            continue;
        total += COST(p[j], j);
        if (!transposed)
            row_to_col[p[j] - 1] = (int32_t)(j - 1);
        else
            row_to_col[j - 1] = (int32_t)(p[j] - 1);
    }
#undef COST
    free(u);
    free(v);
    free(minv);
    free(p);
    free(way);
    free(used);
    return total;
}

double slda_align_assign(const double *cost, uint32_t n, uint32_t m, int32_t *row_to_col)
{
    if (n == 0 || m == 0) {
        for (uint32_t i = 0; i < n; i++)
            row_to_col[i] = -1;
        return 0;
    }
    /* The algorithm needs rows <= columns: with more rows, assign the transpose (its rows are
     * our columns) and read the answer back per original row. */
    if (n <= m)
        return assign_wide(cost, n, m, 0, row_to_col);
    return assign_wide(cost, m, n, 1, row_to_col);
}

/* ---- Jensen-Shannon ---- */

/* p ln(2p / (p + q)) + q ln(2q / (p + q)): twice the natural-log JS divergence of one outcome. */
static inline double js_term(double p, double q)
{
    double mid = 0.5 * (p + q), r = 0;
    if (p > 0)
        r += p * log(p / mid);
    if (q > 0)
        r += q * log(q / mid);
    return r;
}

/* sqrt(JSD in bits) from the sum of js_term over a support. */
static inline double js_finish(double sum)
{
    double jsd = 0.5 * sum / M_LN2;
    if (!(jsd > 0))
        return 0;
    return jsd >= 1 ? 1 : sqrt(jsd);
}

/* The same term through a table, for the K x K matrices (O(K^2 top) terms): with s = p + q and
 * r = p / s, p ln(2p/s) + q ln(2q/s) = s (ln 2 + h(r)), h(r) = r ln r + (1 - r) ln(1 - r), and h
 * is tabulated on HTAB_N + 1 points and interpolated linearly: one division instead of two
 * logarithms (measured: diff at K=1000, 100 words, 4x faster). h is convex, so the chord lies
 * above it and a term never goes negative; the error of a term is below 1e-9 s around r = 1/2
 * (near-identical topics) and below 1e-4 s at the ends (words one topic barely has), where
 * distances are large anyway. p == q gives exactly 0, so identical topics stay at 0. */
#define HTAB_N 65536
static double htab[HTAB_N + 2];
static pthread_once_t htab_once = PTHREAD_ONCE_INIT;

static void htab_init(void)
{
    for (int i = 0; i <= HTAB_N; i++) {
        double r = (double)i / HTAB_N, h = 0;
        if (r > 0)
            h += r * log(r);
        if (r < 1)
            h += (1 - r) * log(1 - r);
        htab[i] = h;
    }
    htab[HTAB_N + 1] = htab[HTAB_N];
}

static inline double js_term_fast(double p, double q)
{
    double s = p + q;
    if (!(s > 0) || p == q)
        return 0;
    double x = p / s * HTAB_N;
    size_t i = (size_t)x;
    if (i >= HTAB_N)
        i = HTAB_N - 1;
    double t = s * (M_LN2 + htab[i] + (x - (double)i) * (htab[i + 1] - htab[i]));
    return t > 0 ? t : 0;
}

double slda_js_distance(const double *p, const double *q, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += js_term(p[i], q[i]);
    return js_finish(sum);
}

/* ---- topic word lists ---- */

void slda_align_weights(const slda_model_t *model, double *out)
{
    uint32_t K = slda_model_topics(model);
    double total = 0;
    slda_model_topic_totals(model, out);
    for (uint32_t k = 0; k < K; k++)
        total += out[k] > 0 ? out[k] : 0;
    for (uint32_t k = 0; k < K; k++)
        out[k] = total > 0 ? (out[k] > 0 ? out[k] : 0) / total : 1.0 / K;
}

/* One model's side of a comparison. */
typedef struct side_s {
    const slda_model_t *model;
    uint32_t K, W;     /* topics, rows */
    slda_phi_view_t phi;
    double *denom;     /* K: NZ[k] + W eta */
    uint32_t *held;    /* ids held (phi's columns) */
    uint32_t nheld;
    uint32_t *other;   /* W entries: id of the same word in the other model (held), or NONE */
    uint32_t len;      /* words per topic list: min(top, nheld), or nheld for full rows */
    uint32_t *ids;     /* K x len: each topic's list (own ids) */
    double *probs;     /* K x len */
} side_t;

#define NONE UINT32_MAX

/* Sift-down on a min-heap of (prob, id) of size n. */
static void heap_down(double *hp, uint32_t *hi, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < n && hp[l] < hp[s])
            s = l;
        if (r < n && hp[r] < hp[s])
            s = r;
        if (s == i)
            return;
        double tp = hp[i];
        hp[i] = hp[s];
        hp[s] = tp;
        uint32_t ti = hi[i];
        hi[i] = hi[s];
        hi[s] = ti;
        i = s;
    }
}

/* Each topic's `len` most probable held words (any order: the distance does not depend on
 * it), with a min-heap: O(W log len) per topic. */
static void side_lists(side_t *s)
{
    for (uint32_t k = 0; k < s->K; k++) {
        uint32_t *hi = s->ids + (size_t)k * s->len;
        double *hp = s->probs + (size_t)k * s->len;
        uint32_t have = 0;
        for (uint32_t x = 0; x < s->nheld; x++) {
            uint32_t w = s->held[x];
            double pw = slda_phi_at(&s->phi, w, k, s->denom[k]);
            if (have < s->len) {
                hp[have] = pw;
                hi[have++] = w;
                if (have == s->len)
                    for (uint32_t i = s->len / 2 + 1; i-- > 0;)
                        heap_down(hp, hi, s->len, i);
            } else if (pw > hp[0]) {
                hp[0] = pw;
                hi[0] = w;
                heap_down(hp, hi, s->len, 0);
            }
        }
    }
}

static void side_init(side_t *s, const slda_model_t *model, uint32_t top)
{
    memset(s, 0, sizeof *s);
    s->model = model;
    s->K = slda_model_topics(model);
    s->W = slda_model_rows(model);
    slda_model_phi_view(model, &s->phi);
    s->denom = slda_xmalloc(s->K * sizeof *s->denom);
    for (uint32_t k = 0; k < s->K; k++)
        s->denom[k] = slda_model_phi_denom(model, k);
    s->held = slda_model_ids_held(model, &s->nheld);
    s->len = top == 0 || top > s->nheld ? s->nheld : top;
    s->other = slda_xmalloc((size_t)s->W * sizeof *s->other);
    for (uint32_t w = 0; w < s->W; w++)
        s->other[w] = NONE;
}

static void side_map(side_t *s, const side_t *o)
{
    for (uint32_t x = 0; x < s->nheld; x++) {
        uint32_t w = s->held[x];
        const char *word = slda_model_word(s->model, w);
        uint32_t ow = word ? slda_model_word_id(o->model, word, strlen(word)) : NONE;
        /* only a word the other model holds has a probability there */
        if (ow != NONE && slda_model_row_held(o->model, ow))
            s->other[w] = ow;
    }
}

static void side_clear(side_t *s)
{
    free(s->denom);
    free(s->held);
    free(s->other);
    free(s->ids);
    free(s->probs);
}

/* Rows [i0, i1) of the distance matrix (one worker's share). */
typedef struct rows_s {
    const side_t *sa, *sb;
    double *dist;
    uint32_t i0, i1;
    uint32_t *stamp; /* W of a: which row's list holds the word (worker's own) */
} rows_t;

#define ALIGN_MAX_THREADS 8

static void *rows_run(void *opaque)
{
    rows_t *job = opaque;
    const side_t sa = *job->sa, sb = *job->sb;
    double *dist = job->dist;
    uint32_t *stamp = job->stamp;
    for (uint32_t w = 0; w < sa.W; w++)
        stamp[w] = NONE;
    for (uint32_t i = job->i0; i < job->i1; i++) {
        const uint32_t *ia = sa.ids + (size_t)i * sa.len;
        const double *pa = sa.probs + (size_t)i * sa.len;
        for (uint32_t x = 0; x < sa.len; x++)
            stamp[ia[x]] = i;
        for (uint32_t j = 0; j < sb.K; j++) {
            const uint32_t *ib = sb.ids + (size_t)j * sb.len;
            const double *pb = sb.probs + (size_t)j * sb.len;
            double sum = 0, massa = 0, massb = 0;
            for (uint32_t x = 0; x < sa.len; x++) {
                uint32_t ow = sa.other[ia[x]];
                double q = ow == NONE ? 0 : slda_phi_at(&sb.phi, ow, j, sb.denom[j]);
                sum += js_term_fast(pa[x], q);
                massa += pa[x];
                massb += q;
            }
            for (uint32_t x = 0; x < sb.len; x++) {
                uint32_t ow = sb.other[ib[x]];
                if (ow != NONE && stamp[ow] == i)
                    continue; /* in topic i's list too: counted above */
                double p = ow == NONE ? 0 : slda_phi_at(&sa.phi, ow, i, sa.denom[i]);
                sum += js_term_fast(p, pb[x]);
                massa += p;
                massb += pb[x];
            }
            /* the rest of each distribution as one bucket (both sums run in the same order,
             * so identical topics leave identical remainders) */
            sum += js_term_fast(massa < 1 ? 1 - massa : 0, massb < 1 ? 1 - massb : 0);
            dist[(size_t)i * sb.K + j] = js_finish(sum);
        }
    }
    return NULL;
}

/* Worker threads for a Ka x Kb matrix of `len`-word comparisons: the cores online (at most
 * ALIGN_MAX_THREADS), one for small matrices where a thread costs more than it saves. */
uint32_t slda_align_threads = 0;

static uint32_t align_threads(uint32_t Ka, uint32_t Kb, uint32_t len)
{
    if (slda_align_threads)
        return slda_align_threads > Ka ? (Ka ? Ka : 1)
             : slda_align_threads > ALIGN_MAX_THREADS ? ALIGN_MAX_THREADS : slda_align_threads;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if ((double)Ka * Kb * len < 2e6 || cores < 2 || Ka < 2)
        return 1;
    uint32_t n = cores > ALIGN_MAX_THREADS ? ALIGN_MAX_THREADS : (uint32_t)cores;
    return n > Ka ? Ka : n;
}

slda_err_t slda_align_distances(const slda_model_t *a, const slda_model_t *b, uint32_t top,
                                double *dist, char *errstr, size_t errstr_size)
{
    side_t sa, sb;
    pthread_once(&htab_once, htab_init);
    side_init(&sa, a, top);
    side_init(&sb, b, top);
    size_t na = (size_t)sa.K * sa.len, nb = (size_t)sb.K * sb.len;
    sa.ids = malloc(na * sizeof *sa.ids + 1);
    sa.probs = malloc(na * sizeof *sa.probs + 1);
    sb.ids = malloc(nb * sizeof *sb.ids + 1);
    sb.probs = malloc(nb * sizeof *sb.probs + 1);
    uint32_t *stamp = malloc((size_t)sa.W * sizeof *stamp + 1);
    if (!sa.ids || !sa.probs || !sb.ids || !sb.probs || !stamp) {
        free(stamp);
        side_clear(&sa);
        side_clear(&sb);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_NOMEM,
                            "topic alignment: %zu bytes for the word lists of K=%u and K=%u",
                            (na + nb) * 12, sa.K, sb.K);
    }
    side_map(&sa, &sb);
    side_map(&sb, &sa);
    side_lists(&sa);
    side_lists(&sb);
    /* rows of the matrix in parallel: each cell is computed alone, so the result does not
     * depend on the number of threads */
    uint32_t nthreads = align_threads(sa.K, sb.K, sa.len + sb.len);
    rows_t job[ALIGN_MAX_THREADS];
    pthread_t tid[ALIGN_MAX_THREADS];
    int running[ALIGN_MAX_THREADS] = {0};
    for (uint32_t t = 0; t < nthreads; t++)
        job[t] = (rows_t){&sa, &sb, dist, sa.K * t / nthreads, sa.K * (t + 1) / nthreads, stamp};
    for (uint32_t t = 1; t < nthreads; t++) {
        job[t].stamp = malloc((size_t)sa.W * sizeof *stamp + 1);
        if (job[t].stamp)
            running[t] = pthread_create(&tid[t], NULL, rows_run, &job[t]) == 0;
        if (!running[t]) { /* no thread: this one does those rows too, below */
            free(job[t].stamp);
            job[t].stamp = stamp;
        }
    }
    rows_run(&job[0]);
    for (uint32_t t = 1; t < nthreads; t++)
        if (!running[t])
            rows_run(&job[t]); /* disjoint rows; stale marks of other rows never match */
    for (uint32_t t = 1; t < nthreads; t++) {
        if (running[t]) {
            pthread_join(tid[t], NULL);
            free(job[t].stamp);
        }
    }
    free(stamp);
    side_clear(&sa);
    side_clear(&sb);
    return SLDA_OK;
}
