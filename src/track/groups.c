/* groups.c - tracking by group: documents per group over event time and each group's topic mix.
 *
 * Invariants. Groups sit in slots 0..n-1 of an array of `capacity`, found by name through
 * chained hash buckets (slda_hash64); a slot is reused only by eviction, so n never shrinks.
 * Every group's series and `total` share one time axis: SLDA_GROUP_POINTS windows of `width`
 * ms from `base` (a multiple of width). The axis covers every document's time seen (lo..hi):
 * when one falls outside, the axis takes the next width of `widths` (then doubles) that holds
 * lo..hi and the counts are added into the wider windows, which nest in the old ones because
 * each width is a multiple of the one before. What an eviction takes out goes into `other`
 * (counted), so the totals over groups and (other) always equal the documents added.
 */
#include "track/groups.h"

#include "core/topn.h"

#include <stdlib.h>
#include <string.h>

typedef struct grp_s {
    char *name;        /* NULL only in `other` */
    uint32_t next;     /* the next slot of its hash bucket, UINT32_MAX: none */
    double docs;
    int64_t last_ms;
    double *mix;       /* K: sum of its documents' mixtures (times their share in the group) */
    double series[SLDA_GROUP_POINTS];
} grp_t;

struct slda_groups_s {
    uint32_t K, cap, n;
    char *source;
    grp_t *grp;        /* cap slots, n used */
    uint32_t *head;    /* nbuckets chains */
    uint32_t nbuckets; /* a power of two >= 2 cap */
    grp_t other;       /* evicted groups' documents */
    uint64_t evicted;
    double docs;
    int64_t width, base, lo, hi; /* width 0: no document yet */
    double total[SLDA_GROUP_POINTS];
    slda_rng_t rng;
};

#define NOSLOT UINT32_MAX
#define MIN_MS 60000LL
#define HOUR_MS 3600000LL
#define DAY_MS (24 * HOUR_MS)
/* The axis' widths, each a multiple of the one before (calendar-friendly as long as it can). */
static const int64_t widths[] = {MIN_MS,      5 * MIN_MS, 15 * MIN_MS, 30 * MIN_MS, HOUR_MS,
                                 3 * HOUR_MS, 6 * HOUR_MS, 12 * HOUR_MS, DAY_MS,    7 * DAY_MS,
                                 28 * DAY_MS, 84 * DAY_MS, 336 * DAY_MS};
#define NWIDTHS (sizeof widths / sizeof widths[0])

static int64_t floordiv(int64_t a, int64_t b) /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static uint64_t name_hash(const char *name)
{
    return slda_hash64(name, strlen(name), 0x67726f757073ULL);
}

slda_groups_t *slda_groups_new(uint32_t K, uint32_t capacity, const char *source)
{
    slda_groups_t *g = slda_xcalloc(1, sizeof *g);
    g->K = K;
    g->cap = capacity ? capacity : 1;
    g->source = slda_xstrdup(source ? source : "");
    g->grp = slda_xcalloc(g->cap, sizeof *g->grp);
    g->nbuckets = 16;
    while (g->nbuckets < 2 * (uint64_t)g->cap)
        g->nbuckets *= 2;
    g->head = slda_xmalloc(g->nbuckets * sizeof *g->head);
    for (uint32_t b = 0; b < g->nbuckets; b++)
        g->head[b] = NOSLOT;
    g->other.mix = slda_xcalloc(K ? K : 1, sizeof *g->other.mix);
    g->other.next = NOSLOT;
    slda_rng_seed(&g->rng, 0x67726f757073ULL);
    return g;
}

void slda_groups_destroy(slda_groups_t *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->n; i++) {
        free(g->grp[i].name);
        free(g->grp[i].mix);
    }
    free(g->other.mix);
    free(g->grp);
    free(g->head);
    free(g->source);
    free(g);
}

uint32_t slda_groups_count(const slda_groups_t *g) { return g->n; }
uint64_t slda_groups_evicted(const slda_groups_t *g) { return g->evicted; }
const char *slda_groups_source(const slda_groups_t *g) { return g->source; }

static uint32_t find(const slda_groups_t *g, const char *name, uint32_t *bucket)
{
    uint32_t b = (uint32_t)(name_hash(name) & (g->nbuckets - 1));
    if (bucket)
        *bucket = b;
    for (uint32_t s = g->head[b]; s != NOSLOT; s = g->grp[s].next)
        if (!strcmp(g->grp[s].name, name))
            return s;
    return NOSLOT;
}

/* ---- the time axis ---- */

/* One series from the axis (g->base, g->width) onto (base, w): w a multiple of the width,
 * base one of w, every window with counts inside the new axis. */
static void regrid_series(const slda_groups_t *g, double *series, int64_t base, int64_t w)
{
    double old[SLDA_GROUP_POINTS];
    memcpy(old, series, sizeof old);
    memset(series, 0, sizeof old);
    for (int i = 0; i < SLDA_GROUP_POINTS; i++)
        if (old[i] != 0)
            series[floordiv(g->base + i * g->width - base, w)] += old[i];
}

/* A width the axis can have: one of `widths`, or the last of them doubled. */
static int valid_width(int64_t w)
{
    for (size_t i = 0; i < NWIDTHS; i++)
        if (w == widths[i])
            return 1;
    int64_t x = widths[NWIDTHS - 1];
    while (x < w && x < INT64_MAX / 4)
        x *= 2;
    return x == w;
}

/* Re-grid every series onto the narrowest width (not narrower than now) whose windows from
 * floor(lo) hold hi. */
static void regrid(slda_groups_t *g)
{
    int64_t w = g->width;
    size_t wi = 0;
    while (wi < NWIDTHS && widths[wi] < w)
        wi++;
    while (floordiv(g->hi, w) - floordiv(g->lo, w) >= SLDA_GROUP_POINTS && w < INT64_MAX / 4)
        w = ++wi < NWIDTHS ? widths[wi] : w * 2;
    int64_t base = floordiv(g->lo, w) * w;
    if (w == g->width && base == g->base)
        return;
    for (uint32_t s = 0; s < g->n; s++)
        regrid_series(g, g->grp[s].series, base, w);
    regrid_series(g, g->other.series, base, w);
    regrid_series(g, g->total, base, w);
    g->width = w;
    g->base = base;
}

/* The window of ms on the axis, widening it when needed. */
static int window_of(slda_groups_t *g, int64_t ms)
{
    if (!g->width) {
        g->width = widths[0];
        g->base = floordiv(ms, g->width) * g->width;
        g->lo = g->hi = ms;
    }
    if (ms < g->lo)
        g->lo = ms;
    if (ms > g->hi)
        g->hi = ms;
    int64_t i = floordiv(ms - g->base, g->width);
    if (i < 0 || i >= SLDA_GROUP_POINTS) {
        regrid(g);
        i = floordiv(ms - g->base, g->width);
    }
    return (int)i;
}

/* ---- groups ---- */

static void fold_into_other(slda_groups_t *g, grp_t *x)
{
    g->other.docs += x->docs;
    if (x->last_ms > g->other.last_ms)
        g->other.last_ms = x->last_ms;
    for (int i = 0; i < SLDA_GROUP_POINTS; i++)
        g->other.series[i] += x->series[i];
    for (uint32_t k = 0; k < g->K; k++)
        g->other.mix[k] += x->mix[k];
}

/* The slot of the sampled group with the fewest documents (the least recent among equals),
 * emptied into (other) and unlinked. */
static uint32_t evict(slda_groups_t *g)
{
    uint32_t best = slda_rng_below(&g->rng, g->n);
    for (int i = 1; i < SLDA_GROUP_SAMPLE; i++) {
        uint32_t s = slda_rng_below(&g->rng, g->n);
        const grp_t *a = &g->grp[s], *b = &g->grp[best];
        if (a->docs < b->docs || (a->docs == b->docs && a->last_ms < b->last_ms))
            best = s;
    }
    grp_t *x = &g->grp[best];
    fold_into_other(g, x);
    uint32_t b;
    find(g, x->name, &b);
    uint32_t *link = &g->head[b];
    while (*link != best)
        link = &g->grp[*link].next;
    *link = x->next;
    free(x->name);
    x->name = NULL;
    g->evicted++;
    return best;
}

static grp_t *get(slda_groups_t *g, const char *name)
{
    uint32_t b;
    uint32_t s = find(g, name, &b);
    if (s != NOSLOT)
        return &g->grp[s];
    if (g->n < g->cap) {
        s = g->n++;
        g->grp[s].mix = slda_xcalloc(g->K ? g->K : 1, sizeof *g->grp[s].mix);
    } else {
        s = evict(g);
        find(g, name, &b); /* evict() unlinked a slot: the bucket is still name's */
        memset(g->grp[s].mix, 0, g->K * sizeof *g->grp[s].mix);
    }
    grp_t *x = &g->grp[s];
    x->name = slda_xstrdup(name);
    x->docs = 0;
    x->last_ms = INT64_MIN;
    memset(x->series, 0, sizeof x->series);
    x->next = g->head[b];
    g->head[b] = s;
    return x;
}

void slda_groups_add(slda_groups_t *g, int64_t ms, const float *theta, const char *const *names,
                     uint32_t n)
{
    static const char *const none[1] = {SLDA_GROUP_NONE};
    if (n == 0) {
        names = none;
        n = 1;
    }
    int w = window_of(g, ms);
    double share = 1.0 / n;
    for (uint32_t i = 0; i < n; i++) {
        grp_t *x = get(g, names[i] && names[i][0] ? names[i] : SLDA_GROUP_NONE);
        x->docs += share;
        x->series[w] += share;
        if (ms > x->last_ms)
            x->last_ms = ms;
        for (uint32_t k = 0; k < g->K; k++)
            x->mix[k] += share * theta[k];
    }
    g->total[w] += 1;
    g->docs += 1;
}

double slda_groups_docs(const slda_groups_t *g, const char *name, double *mix)
{
    const grp_t *x = !strcmp(name, SLDA_GROUP_OTHER) ? &g->other : NULL;
    if (!x) {
        uint32_t s = find(g, name, NULL);
        x = s == NOSLOT ? NULL : &g->grp[s];
    }
    if (mix)
        for (uint32_t k = 0; k < g->K; k++)
            mix[k] = x && x->docs > 0 ? x->mix[k] / x->docs : 0;
    return x ? x->docs : 0;
}

uint32_t slda_groups_largest(const slda_groups_t *g, uint32_t n, uint32_t *slot)
{
    double *keys = slda_xmalloc((n ? n : 1) * sizeof *keys);
    uint32_t have = 0;
    for (uint32_t s = 0; n && s < g->n; s++)
        slda_topn_push(slot, keys, &have, n, s, g->grp[s].docs);
    free(keys);
    return have;
}

const char *slda_groups_get(const slda_groups_t *g, uint32_t slot, double *docs,
                            const double **series, const double **mix)
{
    const grp_t *x = slot == SLDA_GROUPS_OTHER ? &g->other : &g->grp[slot];
    if (docs)
        *docs = x->docs;
    if (series)
        *series = x->series;
    if (mix)
        *mix = x->mix;
    return x->name ? x->name : SLDA_GROUP_OTHER;
}

int slda_groups_axis(const slda_groups_t *g, int64_t *base_ms, int64_t *width_ms,
                     const double **total)
{
    int points = 0; /* windows up to the last with documents */
    for (int i = 0; i < SLDA_GROUP_POINTS; i++)
        if (g->total[i] != 0)
            points = i + 1;
    if (base_ms)
        *base_ms = g->base;
    if (width_ms)
        *width_ms = g->width;
    if (total)
        *total = g->total;
    return points;
}

/* ---- JSON ---- */

static void write_series(FILE *f, const double *s, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) { /* most windows of most groups are empty: no printf for them */
        if (i)
            fputc(',', f);
        if (s[i] == 0)
            fputc('0', f);
        else
            fprintf(f, "%.6g", s[i]);
    }
    fputc(']', f);
}

/* The state keeps a group's topics holding at least this share of its documents. */
#define STATE_MIX_MIN 1e-3

static void write_group(const slda_groups_t *g, FILE *f, const grp_t *x, int points, int state)
{
    fprintf(f, "{\"name\":");
    slda_json_write_string(f, x->name ? x->name : SLDA_GROUP_OTHER);
    fprintf(f, ",\"docs\":%.6g,\"last_ms\":%lld", x->docs,
            (long long)(x->last_ms == INT64_MIN ? 0 : x->last_ms));
    if (!state)
        fprintf(f, ",\"share\":%.6g", g->docs > 0 ? x->docs / g->docs : 0);
    fprintf(f, ",\"series\":");
    write_series(f, x->series, points);
    fprintf(f, ",\"%s\":[", state ? "mix" : "topics");
    if (state) { /* [topic, sum] for the topics of at least STATE_MIX_MIN of its documents */
        int first = 1;
        for (uint32_t k = 0; k < g->K; k++)
            if (x->mix[k] > 0 && x->mix[k] >= STATE_MIX_MIN * x->docs) {
                fprintf(f, "%s[%u,%.6g]", first ? "" : ",", k, x->mix[k]);
                first = 0;
            }
    } else { /* its 5 largest topics with their shares of its documents */
        uint32_t ids[5];
        double keys[5];
        uint32_t have = 0;
        for (uint32_t k = 0; k < g->K; k++)
            slda_topn_push(ids, keys, &have, 5, k, x->mix[k]);
        for (uint32_t i = 0; i < have; i++)
            fprintf(f, "%s[%u,%.4f]", i ? "," : "", ids[i], x->docs > 0 ? keys[i] / x->docs : 0);
    }
    fprintf(f, "]}");
}

void slda_groups_write_json(const slda_groups_t *g, FILE *f, int state)
{
    int points = state ? SLDA_GROUP_POINTS : slda_groups_axis(g, NULL, NULL, NULL);
    fprintf(f, "{\"source\":");
    slda_json_write_string(f, g->source);
    fprintf(f,
            ",\"capacity\":%u,\"groups\":%u,\"evicted\":%llu,\"docs\":%.6g,\"width_ms\":%lld,"
            "\"base_ms\":%lld,\"lo_ms\":%lld,\"hi_ms\":%lld,\"total\":",
            g->cap, g->n, (unsigned long long)g->evicted, g->docs, (long long)g->width,
            (long long)g->base, (long long)g->lo, (long long)g->hi);
    write_series(f, g->total, points);
    fprintf(f, ",\"list\":[");
    if (state) {
        for (uint32_t s = 0; s < g->n; s++) {
            fprintf(f, "%s\n", s ? "," : "");
            write_group(g, f, &g->grp[s], points, 1);
        }
    } else {
        uint32_t ids[SLDA_GROUP_SHOW];
        uint32_t have = slda_groups_largest(g, SLDA_GROUP_SHOW, ids);
        for (uint32_t i = 0; i < have; i++) {
            fprintf(f, "%s\n", i ? "," : "");
            write_group(g, f, &g->grp[ids[i]], points, 0);
        }
    }
    fprintf(f, "],\"other\":");
    write_group(g, f, &g->other, points, state);
    fprintf(f, "}");
}

/* ---- reading a state ---- */

static int num(const slda_json_t *js, uint32_t obj, const char *key, double *v)
{
    uint32_t n = slda_json_object_get(js, obj, key);
    if (n == SLDA_JSON_NONE || js->nodes[n].type != SLDA_JSON_NUMBER)
        return -1;
    char buf[64];
    size_t len = js->nodes[n].end - js->nodes[n].start;
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, js->src + js->nodes[n].start, len);
    buf[len] = '\0';
    char *end;
    *v = strtod(buf, &end);
    return *end || !(*v == *v) || *v > 9.2e18 || *v < -9.2e18 ? -1 : 0;
}

static int read_series(const slda_json_t *js, uint32_t obj, const char *key, double *out)
{
    uint32_t a = slda_json_object_get(js, obj, key);
    if (a == SLDA_JSON_NONE || js->nodes[a].type != SLDA_JSON_ARRAY ||
        js->nodes[a].size != SLDA_GROUP_POINTS)
        return -1;
    uint32_t i = 0;
    for (uint32_t e = slda_json_first(js, a); i < SLDA_GROUP_POINTS; e = js->nodes[e].next, i++) {
        if (js->nodes[e].type != SLDA_JSON_NUMBER)
            return -1;
        out[i] = strtod(js->src + js->nodes[e].start, NULL);
        if (!(out[i] >= 0 && out[i] < 1e18))
            return -1;
    }
    return 0;
}

static int read_group(slda_groups_t *g, const slda_json_t *js, uint32_t e, grp_t *x)
{
    double docs, last;
    if (js->nodes[e].type != SLDA_JSON_OBJECT || num(js, e, "docs", &docs) ||
        num(js, e, "last_ms", &last) || !(docs >= 0) || read_series(js, e, "series", x->series))
        return -1;
    uint32_t mix = slda_json_object_get(js, e, "mix");
    if (mix == SLDA_JSON_NONE || js->nodes[mix].type != SLDA_JSON_ARRAY)
        return -1;
    uint32_t i = 0;
    for (uint32_t p = slda_json_first(js, mix); i < js->nodes[mix].size; p = js->nodes[p].next, i++) {
        uint32_t k = slda_json_first(js, p);
        if (js->nodes[p].type != SLDA_JSON_ARRAY || js->nodes[p].size != 2 ||
            js->nodes[k].type != SLDA_JSON_NUMBER ||
            js->nodes[js->nodes[k].next].type != SLDA_JSON_NUMBER)
            return -1;
        double kk = strtod(js->src + js->nodes[k].start, NULL);
        double v = strtod(js->src + js->nodes[js->nodes[k].next].start, NULL);
        if (!(kk >= 0 && kk < g->K && v >= 0 && v < 1e18))
            return -1;
        x->mix[(uint32_t)kk] = v;
    }
    x->docs = docs;
    x->last_ms = (int64_t)last;
    return 0;
}

int slda_groups_read(slda_groups_t *g, const slda_json_t *js, uint32_t node, char *err,
                     size_t errsize)
{
    double cap, evicted, docs, width, base, lo, hi;
    uint32_t list = slda_json_object_get(js, node, "list");
    uint32_t other = slda_json_object_get(js, node, "other");
    if (js->nodes[node].type != SLDA_JSON_OBJECT || num(js, node, "capacity", &cap) ||
        num(js, node, "evicted", &evicted) || num(js, node, "docs", &docs) ||
        num(js, node, "width_ms", &width) || num(js, node, "base_ms", &base) ||
        num(js, node, "lo_ms", &lo) || num(js, node, "hi_ms", &hi) ||
        read_series(js, node, "total", g->total) || list == SLDA_JSON_NONE ||
        js->nodes[list].type != SLDA_JSON_ARRAY || other == SLDA_JSON_NONE || !(width >= 0) ||
        !(docs >= 0) || !(evicted >= 0) ||
        (width > 0 && (!valid_width((int64_t)width) || (int64_t)base % (int64_t)width != 0 ||
                       lo < base || floordiv((int64_t)hi - (int64_t)base, (int64_t)width) >=
                                        SLDA_GROUP_POINTS))) {
        snprintf(err, errsize, "field \"groups\": missing or malformed fields");
        return -1;
    }
    g->evicted = (uint64_t)evicted;
    g->docs = docs;
    g->width = (int64_t)width;
    g->base = (int64_t)base;
    g->lo = (int64_t)lo;
    g->hi = (int64_t)hi;
    if (read_group(g, js, other, &g->other)) {
        snprintf(err, errsize, "field \"groups\": a malformed \"other\"");
        return -1;
    }
    uint32_t i = 0;
    for (uint32_t e = slda_json_first(js, list); i < js->nodes[list].size; e = js->nodes[e].next, i++) {
        uint32_t nm = js->nodes[e].type == SLDA_JSON_OBJECT ? slda_json_object_get(js, e, "name")
                                                             : SLDA_JSON_NONE;
        if (nm == SLDA_JSON_NONE || js->nodes[nm].type != SLDA_JSON_STRING) {
            snprintf(err, errsize, "field \"groups\": a group without a name");
            return -1;
        }
        char *name = slda_xmalloc(slda_json_raw_len(js, nm) + 1);
        slda_json_string(js, nm, name);
        grp_t tmp = {.mix = slda_xcalloc(g->K ? g->K : 1, sizeof(double))};
        int bad = read_group(g, js, e, &tmp);
        if (!bad && find(g, name, NULL) == NOSLOT) { /* a capacity made smaller: evicts */
            grp_t *x = get(g, name);
            x->docs = tmp.docs;
            x->last_ms = tmp.last_ms;
            memcpy(x->series, tmp.series, sizeof x->series);
            memcpy(x->mix, tmp.mix, g->K * sizeof *x->mix);
        }
        free(tmp.mix);
        free(name);
        if (bad) {
            snprintf(err, errsize, "field \"groups\": a malformed group");
            return -1;
        }
    }
    return 0;
}
