/* track_state.c - the tracker's state as JSON: written beside each snapshot, read back at restart.
 *
 * <snapshot>.track.json (docs/tracking.md) holds the prevalence ring, each topic's words and
 * the events, so a restarted service or `streamlda report` continues from the snapshot it
 * belongs to. Reading is strict: a field of the wrong type or out of range refuses the whole
 * file with its name, and the tracker starts afresh (the caller logs why).
 */
#include "track/track_priv.h"

#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON ---- */

void slda_track_write_words(FILE *f, const char *s)
{
    /* a space separated list as a JSON array of strings */
    fputc('[', f);
    int first = 1;
    while (*s) {
        size_t len = strcspn(s, " ");
        if (len) {
            char buf[200];
            snprintf(buf, sizeof buf, "%.*s", (int)len, s);
            if (!first)
                fputc(',', f);
            slda_json_write_string(f, buf);
            first = 0;
        }
        s += len;
        while (*s == ' ')
            s++;
    }
    fputc(']', f);
}

void slda_track_write_list(FILE *f, const char *list)
{
    fputc('[', f);
    for (const char *s = list; *s; s += strlen(s) + 1) {
        if (s != list)
            fputc(',', f);
        slda_json_write_string(f, s);
    }
    fputc(']', f);
}

void slda_track_write_event(FILE *f, const slda_track_event_t *ev)
{
    char iso[40];
    slda_time_format(ev->event_ms, iso, sizeof iso);
    fprintf(f, "{\"kind\":");
    slda_json_write_string(f, ev->kind);
    fprintf(f, ",\"topic\":%u", ev->topic);
    if (ev->other != UINT32_MAX)
        fprintf(f, ",\"other\":%u", ev->other);
    fprintf(f, ",\"event_ms\":%lld,\"event_time\":\"%s\",\"update\":%llu",
            (long long)ev->event_ms, iso, (unsigned long long)ev->update);
    if (ev->js >= 0)
        fprintf(f, ",\"js\":%.4f", ev->js);
    if (ev->before >= 0 && ev->after >= 0)
        fprintf(f, ",\"before\":%.4f,\"after\":%.4f", ev->before, ev->after);
    fprintf(f, ",\"words\":");
    slda_track_write_words(f, ev->words);
    fputc('}', f);
}

/* The topics' words, the close pairs and the events. */
static void slda_track_write_rest(const slda_track_t *track, FILE *f)
{
    fprintf(f, ",\n\"topics\":[");
    for (uint32_t k = 0; k < track->K; k++) {
        const topic_t *t = &track->topics[k];
        fprintf(f, "%s\n{\"id\":%u,\"mass\":%.9g,\"drift\":%.6g,\"dead\":%s,", k ? "," : "", k,
                t->mass, t->drift, t->dead ? "true" : "false");
        if (t->about != UINT32_MAX)
            fprintf(f, "\"about\":%u,", t->about);
        fprintf(f, "\"words\":[");
        for (size_t i = 0; i < t->words.n; i++) {
            fprintf(f, "%s[", i ? "," : "");
            slda_json_write_string(f, t->words.word[i]);
            fprintf(f, ",%.9g]", (double)t->words.prob[i]);
        }
        fprintf(f, "],\"entered\":");
        slda_track_write_list(f, t->entered);
        fprintf(f, ",\"left\":");
        slda_track_write_list(f, t->left);
        fputc('}', f);
    }
    fprintf(f, "],\n\"merged\":[");
    for (size_t q = 0; q < track->nmerged; q++)
        fprintf(f, "%s[%u,%u]", q ? "," : "", track->merged[q][0], track->merged[q][1]);
    fprintf(f, "],\n\"events\":[");
    for (size_t i = 0; i < track->nev; i++) {
        if (i)
            fputc(',', f);
        fputc('\n', f);
        slda_track_write_event(f, &track->ev[(track->ev_first + i) % SLDA_TRACK_EVENTS]);
    }
    fprintf(f, "]");
}

/* A tier's windows: "prevalence" [[start_ms, docs, [K sums]], ...] and "now" [[start_ms,
 * update, [K shares]], ...] for the windows scored again under a later model. Sums smaller
 * than a ten-millionth of the window's documents are written as 0 (they cannot move a share
 * shown to 0.001%), so a state stays small at large K. */
static void write_tier(const slda_track_t *track, FILE *f, size_t t)
{
    const slda_prev_t *p = track->prev;
    const slda_ptier_t *tr = &p->tier[t];
    size_t n = slda_prev_list(p, t, NULL, 0);
    const slda_pwin_t **w = slda_xmalloc((n ? n : 1) * sizeof *w);
    slda_prev_list(p, t, w, n);
    fprintf(f, "%s\n{\"window_ms\":%lld,\"windows\":%u,\"doubling\":%s,\"beyond\":%llu,"
               "\"prevalence\":[", t ? "," : "", (long long)tr->width, tr->conf.windows,
            tr->conf.doubling ? "true" : "false", (unsigned long long)tr->beyond);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n[%lld,%.17g,[", i ? "," : "", (long long)(w[i]->win * tr->width),
                w[i]->docs);
        for (uint32_t k = 0; k < track->K; k++) {
            double v = w[i]->sum[k];
            if (v < 1e-7 * w[i]->docs)
                fprintf(f, k ? ",0" : "0");
            else
                fprintf(f, "%s%.7g", k ? "," : "", v);
        }
        fprintf(f, "]]");
    }
    fprintf(f, "],\"now\":[");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (!w[i]->now)
            continue;
        fprintf(f, "%s\n[%lld,%llu,[", first ? "" : ",", (long long)(w[i]->win * tr->width),
                (unsigned long long)(w[i]->scored - 1));
        for (uint32_t k = 0; k < track->K; k++) {
            double v = w[i]->now[k];
            if (v < 1e-7)
                fprintf(f, k ? ",0" : "0");
            else
                fprintf(f, "%s%.6g", k ? "," : "", v);
        }
        fprintf(f, "]]");
        first = 0;
    }
    fprintf(f, "]}");
    free(w);
}

void slda_track_write_json(const slda_track_t *track, FILE *f, const char *model_name,
                           uint64_t update)
{
    fprintf(f, "{\"format\":2,\"model\":");
    slda_json_write_string(f, model_name ? model_name : "");
    fprintf(f,
            ",\"update\":%llu,\"K\":%u,\"window_ms\":%lld,\"windows\":%u,\"newest_ms\":%lld,"
            "\"clamped\":%llu,\"late\":%llu,\"dropped\":%llu,\"docs\":%llu,\"compared\":%s,"
            "\"compared_docs\":%llu,\"settled\":%s",
            (unsigned long long)update, track->K, (long long)track->o.window_ms, track->o.windows,
            (long long)track->newest_ms, (unsigned long long)track->clamped,
            (unsigned long long)track->late, (unsigned long long)track->dropped,
            (unsigned long long)track->docs, track->compared ? "true" : "false",
            (unsigned long long)track->compared_docs, track->settled ? "true" : "false");
    fprintf(f, ",\n\"tiers\":[");
    for (size_t t = 0; t < track->prev->ntiers; t++)
        write_tier(track, f, t);
    fprintf(f, "]");
    slda_track_write_rest(track, f);
    fprintf(f, ",\n");
    slda_track_write_examples(track, f, 0);
    if (track->groups) {
        fprintf(f, ",\n\"groups\":");
        slda_groups_write_json(track->groups, f, 1);
    }
    fprintf(f, "}\n");
}

/* ---- reading the sidecar ---- */

typedef struct jr_s {
    slda_json_t js;
    char *err;
    size_t errsize;
    slda_err_t code;
} jr_t;

static int jr_fail(jr_t *r, slda_err_t code, const char *fmt, const char *what)
{
    if (r->code == SLDA_OK) {
        r->code = code;
        snprintf(r->err, r->errsize, fmt, what);
    }
    return -1;
}

static int jr_num(jr_t *r, uint32_t node, const char *what, double *v)
{
    if (node == SLDA_JSON_NONE || r->js.nodes[node].type != SLDA_JSON_NUMBER)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": missing or not a number", what);
    char buf[64];
    size_t len = r->js.nodes[node].end - r->js.nodes[node].start;
    if (len >= sizeof buf)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": number too long", what);
    memcpy(buf, r->js.src + r->js.nodes[node].start, len);
    buf[len] = '\0';
    errno = 0;
    *v = strtod(buf, NULL);
    if (!isfinite(*v))
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": not finite", what);
    return 0;
}

static int jr_field(jr_t *r, uint32_t obj, const char *key, double *v)
{
    return jr_num(r, slda_json_object_get(&r->js, obj, key), key, v);
}

static char *jr_str(jr_t *r, uint32_t node, const char *what)
{
    if (node == SLDA_JSON_NONE || r->js.nodes[node].type != SLDA_JSON_STRING) {
        jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": missing or not a string", what);
        return NULL;
    }
    char *s = slda_xmalloc(slda_json_raw_len(&r->js, node) + 1);
    slda_json_string(&r->js, node, s);
    return s;
}

static int jr_array(jr_t *r, uint32_t node, const char *what)
{
    if (node == SLDA_JSON_NONE || r->js.nodes[node].type != SLDA_JSON_ARRAY)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": missing or not an array", what);
    return 0;
}

/* A JSON array of strings into a space separated string. */
/* A JSON array of words into out: space separated, or (sep '\0') a NUL separated list
 * ended by an empty word (topic_t's entered and left). Words that do not fit are left out. */
static int jr_words(jr_t *r, uint32_t node, const char *what, char sep, char *out, size_t size)
{
    out[0] = '\0';
    if (size > 1)
        out[1] = '\0';
    if (jr_array(r, node, what))
        return -1;
    size_t used = 0;
    for (uint32_t e = slda_json_first(&r->js, node), e_i = 0; e_i < r->js.nodes[node].size; e_i++, e = r->js.nodes[e].next) {
        char *s = jr_str(r, e, what);
        if (!s)
            return -1;
        size_t len = strlen(s);
        if (sep && len && used + len + 2 <= size) {
            if (used)
                out[used++] = sep;
            memcpy(out + used, s, len + 1);
            used += len;
        } else if (!sep && len && used + len + 2 <= size) {
            memcpy(out + used, s, len + 1);
            used += len + 1;
            out[used] = '\0';
        }
        free(s);
    }
    return 0;
}

/* One window [start, docs, [K sums]] of a state's tier of width `width` into tier `tier`
 * (-1: every tier whose window holds whole windows of that width: a format-1 state's one
 * resolution feeds the coarser ones too). */
static int read_window(jr_t *r, slda_track_t *t, uint32_t e, int64_t width, int tier,
                       double *sums)
{
    if (r->js.nodes[e].type != SLDA_JSON_ARRAY || r->js.nodes[e].size != 3)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not [start, docs, sums]",
                       "prevalence");
    uint32_t a = slda_json_first(&r->js, e), b = r->js.nodes[a].next, c = r->js.nodes[b].next;
    double start, docs;
    if (jr_num(r, a, "prevalence start", &start) || jr_num(r, b, "prevalence docs", &docs))
        return -1;
    if (jr_array(r, c, "prevalence sums") || r->js.nodes[c].size != t->K)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": not K sums", "prevalence");
    if (docs < 0 || fmod(start, (double)width) != 0)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": bad window start or count",
                       "prevalence");
    uint32_t k = 0;
    for (uint32_t x = slda_json_first(&r->js, c), x_i = 0; x_i < r->js.nodes[c].size && k < t->K;
         x_i++, x = r->js.nodes[x].next, k++)
        if (jr_num(r, x, "prevalence sum", &sums[k]) || sums[k] < 0)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": bad sum", "prevalence");
    if (!(docs > 0))
        return 0;
    slda_prev_t *p = t->prev;
    for (size_t q = 0; q < p->ntiers; q++) {
        if (tier >= 0 && (size_t)tier != q)
            continue;
        int64_t tw = slda_prev_width(p, q);
        if (tier < 0 && (tw < width || tw % width))
            continue; /* finer than the state's windows: they cannot be split */
        if (tier >= 0 && tw != width) {
            slda_prev_restore(p, q, width, (int64_t)start, docs, sums); /* a doubled tier */
            continue;
        }
        slda_pwin_t *w = slda_prev_window(p, q, (int64_t)start);
        if (!w)
            continue;
        w->docs += docs;
        for (uint32_t j = 0; j < t->K; j++)
            w->sum[j] += sums[j];
    }
    return 0;
}

/* A format-2 tier's "now": [start, update, [K shares]] onto the windows read. */
static int read_now(jr_t *r, slda_track_t *t, uint32_t node, size_t tier)
{
    if (node == SLDA_JSON_NONE)
        return 0;
    if (jr_array(r, node, "now"))
        return -1;
    slda_prev_t *p = t->prev;
    int64_t width = slda_prev_width(p, tier);
    for (uint32_t e = slda_json_first(&r->js, node), e_i = 0; e_i < r->js.nodes[node].size;
         e_i++, e = r->js.nodes[e].next) {
        if (r->js.nodes[e].type != SLDA_JSON_ARRAY || r->js.nodes[e].size != 3)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not [start, update, "
                           "shares]", "now");
        uint32_t a = slda_json_first(&r->js, e), b = r->js.nodes[a].next, c = r->js.nodes[b].next;
        double start, upd;
        if (jr_num(r, a, "now start", &start) || jr_num(r, b, "now update", &upd))
            return -1;
        if (jr_array(r, c, "now shares") || r->js.nodes[c].size != t->K || upd < 0)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": not K shares", "now");
        if (fmod(start, (double)width) != 0)
            continue; /* the tier doubled since: scored again later */
        slda_pwin_t *w = slda_prev_window(p, tier, (int64_t)start);
        if (!w || w->docs <= 0)
            continue;
        if (!w->now)
            w->now = slda_xmalloc(t->K * sizeof *w->now);
        uint32_t k = 0;
        for (uint32_t x = slda_json_first(&r->js, c), x_i = 0; x_i < r->js.nodes[c].size &&
             k < t->K; x_i++, x = r->js.nodes[x].next, k++)
            if (jr_num(r, x, "now share", &w->now[k]) || w->now[k] < 0)
                return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": bad share", "now");
        w->scored = (uint64_t)upd + 1;
    }
    return 0;
}

/* A format-1 state's one ring of `width` windows. */
static int read_prevalence(jr_t *r, slda_track_t *t, uint32_t node, int64_t width)
{
    if (jr_array(r, node, "prevalence"))
        return -1;
    double *sums = slda_xmalloc(t->K * sizeof *sums);
    int rc = 0;
    for (uint32_t e = slda_json_first(&r->js, node), e_i = 0;
         rc == 0 && e_i < r->js.nodes[node].size; e_i++, e = r->js.nodes[e].next)
        rc = read_window(r, t, e, width, -1, sums);
    free(sums);
    return rc;
}

/* A format-2 state's tiers: each into our tier of its width (the doubling tier: any width it
 * doubles to); a tier of a width we do not keep is left out. */
static int read_tiers(jr_t *r, slda_track_t *t, uint32_t node)
{
    if (jr_array(r, node, "tiers"))
        return -1;
    double *sums = slda_xmalloc(t->K * sizeof *sums);
    int rc = 0;
    slda_prev_t *p = t->prev;
    for (uint32_t e = slda_json_first(&r->js, node), e_i = 0;
         rc == 0 && e_i < r->js.nodes[node].size; e_i++, e = r->js.nodes[e].next) {
        double width, beyond = 0;
        if (r->js.nodes[e].type != SLDA_JSON_OBJECT) {
            rc = jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not an object", "tiers");
            break;
        }
        if (jr_field(r, e, "window_ms", &width) || !(width >= 1000)) {
            rc = jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": bad window", "tiers");
            break;
        }
        if (slda_json_object_get(&r->js, e, "beyond") != SLDA_JSON_NONE &&
            jr_field(r, e, "beyond", &beyond)) {
            rc = -1;
            break;
        }
        int tier = -1;
        for (size_t q = 0; q < p->ntiers && tier < 0; q++) {
            int64_t tw = slda_prev_width(p, q);
            if (tw == (int64_t)width ||
                (p->tier[q].conf.doubling && (int64_t)width > tw && (int64_t)width % tw == 0))
                tier = (int)q;
        }
        if (tier < 0)
            continue;
        p->tier[tier].beyond = (uint64_t)beyond;
        uint32_t pv = slda_json_object_get(&r->js, e, "prevalence");
        if (jr_array(r, pv, "prevalence")) {
            rc = -1;
            break;
        }
        for (uint32_t x = slda_json_first(&r->js, pv), x_i = 0;
             rc == 0 && x_i < r->js.nodes[pv].size; x_i++, x = r->js.nodes[x].next)
            rc = read_window(r, t, x, (int64_t)width, tier, sums);
        if (rc == 0)
            rc = read_now(r, t, slda_json_object_get(&r->js, e, "now"), (size_t)tier);
    }
    free(sums);
    return rc;
}

static int read_topic(jr_t *r, slda_track_t *t, uint32_t node, uint32_t k)
{
    topic_t *tp = &t->topics[k];
    double id, mass, drift;
    if (r->js.nodes[node].type != SLDA_JSON_OBJECT)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not an object", "topics");
    if (jr_field(r, node, "id", &id) || jr_field(r, node, "mass", &mass) ||
        jr_field(r, node, "drift", &drift))
        return -1;
    if (id != k)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": ids out of order", "topics");
    tp->mass = mass;
    tp->drift = drift;
    uint32_t dead = slda_json_object_get(&r->js, node, "dead");
    tp->dead = dead != SLDA_JSON_NONE && r->js.nodes[dead].type == SLDA_JSON_TRUE;
    double about = -1; /* absent (an older state): unknown, no gate until the next comparison */
    if (slda_json_object_get(&r->js, node, "about") != SLDA_JSON_NONE &&
        jr_field(r, node, "about", &about))
        return -1;
    tp->about = about >= 0 && about < UINT32_MAX ? (uint32_t)about : UINT32_MAX;
    uint32_t words = slda_json_object_get(&r->js, node, "words");
    if (jr_array(r, words, "words"))
        return -1;
    for (uint32_t e = slda_json_first(&r->js, words), e_i = 0; e_i < r->js.nodes[words].size; e_i++, e = r->js.nodes[e].next) {
        if (r->js.nodes[e].type != SLDA_JSON_ARRAY || r->js.nodes[e].size != 2)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not [word, p]", "words");
        if (tp->words.n == SLDA_TRACK_TOP)
            break;
        uint32_t a = slda_json_first(&r->js, e);
        double p;
        if (jr_num(r, r->js.nodes[a].next, "word probability", &p))
            return -1;
        char *w = jr_str(r, a, "word");
        if (!w)
            return -1;
        tp->words.word[tp->words.n] = w;
        tp->words.prob[tp->words.n++] = (float)p;
    }
    if (jr_words(r, slda_json_object_get(&r->js, node, "entered"), "entered", '\0',
                 tp->entered, sizeof tp->entered) ||
        jr_words(r, slda_json_object_get(&r->js, node, "left"), "left", '\0', tp->left,
                 sizeof tp->left))
        return -1;
    return 0;
}

static int read_event(jr_t *r, slda_track_t *t, uint32_t node)
{
    if (r->js.nodes[node].type != SLDA_JSON_OBJECT)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not an object", "events");
    double topic, ms, update, other = -1, js = -1, before = -1, after = -1;
    if (jr_field(r, node, "topic", &topic) || jr_field(r, node, "event_ms", &ms) ||
        jr_field(r, node, "update", &update))
        return -1;
    if (slda_json_object_get(&r->js, node, "other") != SLDA_JSON_NONE &&
        jr_field(r, node, "other", &other))
        return -1;
    if (slda_json_object_get(&r->js, node, "js") != SLDA_JSON_NONE &&
        jr_field(r, node, "js", &js))
        return -1;
    if (slda_json_object_get(&r->js, node, "before") != SLDA_JSON_NONE &&
        (jr_field(r, node, "before", &before) || jr_field(r, node, "after", &after)))
        return -1;
    if (topic < 0 || topic >= t->K || other >= t->K)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": topic out of range", "events");
    char *kind = jr_str(r, slda_json_object_get(&r->js, node, "kind"), "kind");
    if (!kind)
        return -1;
    slda_track_event_t *ev = slda_track_event_push(t);
    snprintf(ev->kind, sizeof ev->kind, "%s", kind);
    free(kind);
    ev->topic = (uint32_t)topic;
    ev->other = other < 0 ? UINT32_MAX : (uint32_t)other;
    ev->event_ms = (int64_t)ms;
    ev->update = (uint64_t)update;
    ev->js = js;
    ev->before = before;
    ev->after = after;
    ev->engine = js < 0 && before < 0 && strcmp(ev->kind, "death") != 0; /* births.c's */
    int fall = !strcmp(ev->kind, "fall");
    if ((fall || !strcmp(ev->kind, "rise")) && ev->event_ms > t->chg_ms[2 * ev->topic + fall])
        t->chg_ms[2 * ev->topic + fall] = ev->event_ms; /* not raised again after a restart */
    return jr_words(r, slda_json_object_get(&r->js, node, "words"), "words", ' ', ev->words,
                    sizeof ev->words);
}

/* The optional "examples" (states written before them have none): each entry's topic in
 * range and its fields of the right types; more than track.examples of a topic are left out. */
static int read_examples(jr_t *r, slda_track_t *t)
{
    uint32_t ex = slda_json_object_get(&r->js, 0, "examples");
    if (ex == SLDA_JSON_NONE)
        return 0;
    if (jr_array(r, ex, "examples"))
        return -1;
    for (uint32_t e = slda_json_first(&r->js, ex), e_i = 0; e_i < r->js.nodes[ex].size;
         e_i++, e = r->js.nodes[e].next) {
        double k, score, ms;
        uint32_t id = SLDA_JSON_NONE, text = SLDA_JSON_NONE;
        if (r->js.nodes[e].type == SLDA_JSON_OBJECT) {
            id = slda_json_object_get(&r->js, e, "id");
            text = slda_json_object_get(&r->js, e, "text");
        }
        if (id == SLDA_JSON_NONE || text == SLDA_JSON_NONE ||
            r->js.nodes[id].type != SLDA_JSON_STRING || r->js.nodes[text].type != SLDA_JSON_STRING)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry without id and text",
                           "examples");
        if (jr_num(r, slda_json_object_get(&r->js, e, "topic"), "examples", &k) ||
            jr_num(r, slda_json_object_get(&r->js, e, "score"), "examples", &score) ||
            jr_num(r, slda_json_object_get(&r->js, e, "event_ms"), "examples", &ms))
            return -1;
        if (!(k >= 0 && k < t->K) || !(score >= 0 && score <= 1))
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": topic or score out of range",
                           "examples");
        if (!t->ex || t->nex[(uint32_t)k] >= t->o.examples)
            continue;
        char *sid = slda_xmalloc(slda_json_raw_len(&r->js, id) + 1);
        char *stext = slda_xmalloc(slda_json_raw_len(&r->js, text) + 1);
        slda_json_string(&r->js, id, sid);
        slda_json_string(&r->js, text, stext);
        slda_track_examples_put(t, (uint32_t)k, score, (int64_t)ms, sid, stext, NULL, 0);
        free(sid);
        free(stext);
    }
    return 0;
}

/* The optional "groups": restored when they are of the tracker's source (a tracker made
 * without groups, as the report's, takes them with the state's source and capacity). */
static int read_groups(jr_t *r, slda_track_t *t)
{
    uint32_t g = slda_json_object_get(&r->js, 0, "groups");
    if (g == SLDA_JSON_NONE)
        return 0;
    uint32_t src = slda_json_object_get(&r->js, g, "source");
    char *source = jr_str(r, src, "groups");
    double cap;
    if (!source || jr_field(r, g, "capacity", &cap)) {
        free(source);
        return -1;
    }
    if (!t->groups && cap >= 1 && cap <= 1e6) {
        t->group_src = source;
        t->o.group_source = source;
        t->o.group_capacity = (uint32_t)cap;
        t->groups = slda_groups_new(t->K, (uint32_t)cap, source);
    } else {
        int other = !t->groups || strcmp(source, t->group_src);
        free(source);
        if (other) /* grouped by something else now: those groups are not these */
            return 0;
    }
    if (slda_groups_read(t->groups, &r->js, g, r->err, r->errsize)) {
        r->code = SLDA_ERR_CORRUPT;
        return -1;
    }
    return 0;
}

static int read_state(jr_t *r, slda_track_t *t)
{
    double fmt, K, wms, windows, newest, clamped, late, dropped, docs;
    if (r->js.nodes[0].type != SLDA_JSON_OBJECT)
        return jr_fail(r, SLDA_ERR_CORRUPT, "%s: not a JSON object", "tracking state");
    if (jr_field(r, 0, "format", &fmt) || jr_field(r, 0, "K", &K) ||
        jr_field(r, 0, "window_ms", &wms) || jr_field(r, 0, "windows", &windows) ||
        jr_field(r, 0, "newest_ms", &newest) || jr_field(r, 0, "clamped", &clamped) ||
        jr_field(r, 0, "late", &late) || jr_field(r, 0, "dropped", &dropped) ||
        jr_field(r, 0, "docs", &docs))
        return -1;
    if (fmt != 1 && fmt != 2)
        return jr_fail(r, SLDA_ERR_VERSION, "field \"%s\": not 1 or 2", "format");
    if (K != t->K) {
        snprintf(r->err, r->errsize, "tracking state is for K=%.0f, the model has K=%u", K, t->K);
        r->code = SLDA_ERR_INVALID;
        return -1;
    }
    t->newest_ms = (int64_t)newest;
    t->clamped = (uint64_t)clamped;
    t->late = (uint64_t)late;
    t->dropped = (uint64_t)dropped;
    t->docs = (uint64_t)docs;
    uint32_t c = slda_json_object_get(&r->js, 0, "compared");
    t->compared = c != SLDA_JSON_NONE && r->js.nodes[c].type == SLDA_JSON_TRUE;
    double cd = 0;
    if (slda_json_object_get(&r->js, 0, "compared_docs") != SLDA_JSON_NONE &&
        jr_field(r, 0, "compared_docs", &cd))
        return -1;
    t->compared_docs = (uint64_t)cd;
    uint32_t st = slda_json_object_get(&r->js, 0, "settled"); /* absent (older states): settled
                                                                 once past the warm-up */
    t->settled = st != SLDA_JSON_NONE ? r->js.nodes[st].type == SLDA_JSON_TRUE
                                      : t->compared && t->compared_docs >= t->o.warmup_docs;
    /* format 1: one ring of window_ms windows, which feeds every tier of whole multiples of
     * it; format 2: its tiers, each into ours of the same window */
    if (fmt == 1 && wms >= 1000 &&
        read_prevalence(r, t, slda_json_object_get(&r->js, 0, "prevalence"), (int64_t)wms))
        return -1;
    if (fmt == 2 && read_tiers(r, t, slda_json_object_get(&r->js, 0, "tiers")))
        return -1;
    uint32_t topics = slda_json_object_get(&r->js, 0, "topics");
    if (jr_array(r, topics, "topics"))
        return -1;
    if (r->js.nodes[topics].size != t->K)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": not K entries", "topics");
    uint32_t k = 0;
    for (uint32_t e = slda_json_first(&r->js, topics), e_i = 0; e_i < r->js.nodes[topics].size; e_i++, e = r->js.nodes[e].next, k++)
        if (read_topic(r, t, e, k))
            return -1;
    uint32_t merged = slda_json_object_get(&r->js, 0, "merged");
    if (merged != SLDA_JSON_NONE && !jr_array(r, merged, "merged"))
        for (uint32_t e = slda_json_first(&r->js, merged), e_i = 0; e_i < r->js.nodes[merged].size && t->nmerged < MERGED_MAX; e_i++, e = r->js.nodes[e].next) {
            double a, b;
            if (r->js.nodes[e].type != SLDA_JSON_ARRAY || r->js.nodes[e].size != 2)
                return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not [i, j]", "merged");
            uint32_t x = slda_json_first(&r->js, e);
            if (jr_num(r, x, "merged", &a) || jr_num(r, r->js.nodes[x].next, "merged", &b))
                return -1;
            if (a < 0 || b < 0 || a >= t->K || b >= t->K)
                return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": topic out of range", "merged");
            t->merged[t->nmerged][0] = (uint32_t)a;
            t->merged[t->nmerged++][1] = (uint32_t)b;
        }
    uint32_t events = slda_json_object_get(&r->js, 0, "events");
    if (jr_array(r, events, "events"))
        return -1;
    for (uint32_t e = slda_json_first(&r->js, events), e_i = 0; e_i < r->js.nodes[events].size; e_i++, e = r->js.nodes[e].next)
        if (read_event(r, t, e))
            return -1;
    if (read_examples(r, t))
        return -1;
    return read_groups(r, t);
}

slda_err_t slda_track_read_json(slda_track_t *track, const char *text, size_t len, char *errstr,
                                size_t errstr_size)
{
    jr_t r;
    char err[300] = "";
    memset(&r, 0, sizeof r);
    r.err = err;
    r.errsize = sizeof err;
    slda_json_init(&r.js);
    slda_err_t e = slda_json_parse(&r.js, text, len, err, sizeof err);
    if (e) {
        slda_json_clear(&r.js);
        return slda_set_err(errstr, errstr_size, e, "%s", err);
    }
    /* read into a fresh tracker, then move it in: a failure leaves track as it was */
    slda_track_t *t = slda_track_new(track->K, &track->o);
    int bad = read_state(&r, t);
    slda_json_clear(&r.js);
    if (bad) {
        slda_track_destroy(t);
        return slda_set_err(errstr, errstr_size, r.code ? r.code : SLDA_ERR_CORRUPT, "%s", err);
    }
    t->cb = track->cb;
    t->cb_opaque = track->cb_opaque;
    slda_track_t tmp = *track;
    *track = *t;
    *t = tmp;
    slda_track_destroy(t);
    return SLDA_OK;
}

slda_err_t slda_track_save(const slda_track_t *track, const char *path, const char *model_name,
                           uint64_t update, char *errstr, size_t errstr_size)
{
    slda_outfile_t out;
    slda_err_t e = slda_outfile_open(&out, "tracking state", path, errstr, errstr_size);
    if (e)
        return e;
    slda_track_write_json(track, out.fp, model_name, update);
    if (ferror(out.fp)) {
        int en = errno;
        slda_outfile_abort(&out);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "tracking state \"%s\": %s", path,
                            strerror(en ? en : EIO));
    }
    return slda_outfile_commit(&out, errstr, errstr_size);
}

slda_err_t slda_track_load(slda_track_t *track, const char *path, char *errstr,
                           size_t errstr_size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "tracking state \"%s\": %s", path,
                            strerror(errno));
    size_t len;
    char *buf = slda_read_all(f, &len);
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(buf);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "tracking state \"%s\": read error",
                            path);
    }
    char err[400];
    slda_err_t e = slda_track_read_json(track, buf ? buf : "", len, err, sizeof err);
    free(buf);
    if (e)
        return slda_set_err(errstr, errstr_size, e, "tracking state \"%s\": %s", path, err);
    return SLDA_OK;
}

