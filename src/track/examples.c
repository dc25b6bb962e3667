/* examples.c - each topic's representative documents: id, event time, share, a snippet.
 *
 * A topic keeps the track.examples documents (default 5) whose mixtures gave it the largest
 * share when they were trained (at least SLDA_EXAMPLE_MIN: a document mostly about it), each
 * with its id, event time and the start of its text (the reader keeps SLDA_DOC_SNIPPET bytes,
 * cut at a character, when tracking asks for it) and its words by key (sample.c's documents).
 * A document already kept for the topic (the same id: a second pass, a replay) is not kept
 * twice. The lists move with the model: the documents are scored again under a model with a
 * quarter more updates than when they were scored (slda_track_examples_rescore, with the
 * windows' samples), each list re-sorted and cleared of those now under the floor; when the
 * slot's words change (the tracker's birth or change at a snapshot, the engine's birth,
 * retirement or merge of the slot) its list is emptied and fills again from the documents
 * trained from then on (at a snapshot: those trained since the one before, which made the
 * change), so a topic does not show the documents of what its slot held before.
 * Bounded: K x track.examples entries of fixed size. One thread (the tracker's).
 */
#include "track/track_priv.h"
#include "core/json.h"
#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

void slda_track_examples_init(slda_track_t *track)
{
    uint32_t n = track->o.examples;
    track->ex = n ? slda_xcalloc((size_t)track->K * n, sizeof *track->ex) : NULL;
    track->nex = n ? slda_xcalloc(track->K, sizeof *track->nex) : NULL;
}

void slda_track_examples_free(slda_track_t *track)
{
    for (uint32_t k = 0; track->nex && k < track->K; k++)
        for (uint32_t i = 0; i < track->nex[k]; i++)
            slda_sdoc_unref(track->ex[(size_t)k * track->o.examples + i].doc);
    free(track->ex);
    free(track->nex);
    track->ex = NULL;
    track->nex = NULL;
}

/* src into dst (size bytes): a byte that is not part of valid UTF-8 (a message key may hold
 * any bytes; the cut at size may split a character) becomes '?', a control character a space:
 * the text goes into JSON and onto pages. */
static void copy_clean(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
    size_t len = strlen(dst), bad;
    const char *why;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
            dst[i] = ' ';
    while (!slda_utf8_valid(dst, len, &bad, &why) && bad < len)
        dst[bad] = '?';
}

void slda_track_examples_put(slda_track_t *track, uint32_t k, double score, int64_t ms,
                             const char *id, const char *text, slda_sdoc_t *doc,
                             uint64_t scored_at)
{
    uint32_t cap = track->o.examples, n = track->nex[k];
    slda_example_t *l = track->ex + (size_t)k * cap;
    char clean[sizeof l->id];
    copy_clean(clean, sizeof clean, id);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(l[i].id, clean)) { /* kept already: its better score stays */
            if (score <= l[i].score)
                return;
            slda_sdoc_unref(l[i].doc);
            memmove(&l[i], &l[i + 1], (n - i - 1) * sizeof *l);
            n--;
            break;
        }
    if (n == cap && score <= l[n - 1].score)
        return;
    if (n == cap)
        slda_sdoc_unref(l[cap - 1].doc); /* the weakest goes */
    uint32_t i = n < cap ? n++ : cap - 1;
    while (i > 0 && l[i - 1].score < score) {
        l[i] = l[i - 1];
        i--;
    }
    l[i].score = score;
    l[i].ms = ms;
    l[i].seq = track->docs;
    l[i].scored_at = scored_at;
    l[i].doc = doc;
    if (doc)
        doc->refs++;
    copy_clean(l[i].id, sizeof l[i].id, id);
    copy_clean(l[i].text, sizeof l[i].text, text);
    track->nex[k] = n;
}

void slda_track_examples_offer(slda_track_t *track, int64_t ms, const float *theta,
                               const slda_model_t *model, const slda_doc_t *doc)
{
    if (!track->ex || !doc || !doc->id || !*doc->id)
        return;
    double tot = 0;
    for (uint32_t k = 0; k < track->K; k++)
        tot += theta[k];
    if (!(tot > 0))
        return;
    slda_sdoc_t *words = NULL; /* its words by key, made once if a topic keeps it */
    for (uint32_t k = 0; k < track->K; k++) {
        double s = theta[k] / tot;
        if (s < SLDA_EXAMPLE_MIN)
            continue;
        if (!words && model)
            words = slda_sdoc_new(model, doc, theta, track->K);
        if (words)
            words->refs++; /* held across the put, which may not keep it */
        slda_track_examples_put(track, k, s, ms, doc->id, doc->text, words,
                                model ? slda_model_updates(model) : 0);
        if (words && words->refs == 1) { /* no list kept it: freed */
            slda_sdoc_unref(words);
            words = NULL;
        } else if (words) {
            slda_sdoc_unref(words);
        }
    }
}

/* Topic k's list sorted by score again, without the documents under SLDA_EXAMPLE_MIN. */
static void examples_resort(slda_track_t *track, uint32_t k)
{
    slda_example_t *l = track->ex + (size_t)k * track->o.examples;
    uint32_t n = 0;
    for (uint32_t i = 0; i < track->nex[k]; i++) {
        if (l[i].score < SLDA_EXAMPLE_MIN) {
            slda_sdoc_unref(l[i].doc);
            continue;
        }
        slda_example_t e = l[i];
        uint32_t j = n++;
        while (j > 0 && l[j - 1].score < e.score) {
            l[j] = l[j - 1];
            j--;
        }
        l[j] = e;
    }
    track->nex[k] = n;
}

void slda_track_examples_rescore(slda_track_t *track, const slda_model_t *model,
                                 double deadline)
{
    if (!track->ex)
        return;
    uint64_t up = slda_model_updates(model);
    float *theta = slda_xmalloc(track->K * sizeof *theta);
    slda_doc_t scratch;
    slda_doc_init(&scratch);
    for (uint32_t c = 0; c < track->K; c++) {
        uint32_t k = (track->ex_cursor + c) % track->K;
        slda_example_t *l = track->ex + (size_t)k * track->o.examples;
        int moved = 0;
        for (uint32_t i = 0; i < track->nex[k]; i++) {
            uint64_t at = l[i].scored_at;
            if (!l[i].doc || up < at + (at / 4 > 1 ? at / 4 : 1)) /* (a quarter more updates) */
                continue;
            double tot = 0;
            if (slda_sdoc_infer(l[i].doc, model, &scratch, theta, i + 1) == 0)
                for (uint32_t j = 0; j < track->K; j++)
                    tot += theta[j];
            l[i].score = tot > 0 ? theta[k] / tot : 0; /* none of its words left: it goes */
            l[i].scored_at = up;
            moved = 1;
        }
        if (moved)
            examples_resort(track, k);
        if (deadline > 0 && slda_mono_s() >= deadline) {
            track->ex_cursor = (k + 1) % track->K;
            break;
        }
    }
    slda_doc_clear(&scratch);
    free(theta);
}

void slda_track_examples_forget(slda_track_t *track, uint32_t k, uint64_t before)
{
    if (!track->nex || k >= track->K)
        return;
    slda_example_t *l = track->ex + (size_t)k * track->o.examples;
    uint32_t n = 0;
    for (uint32_t i = 0; i < track->nex[k]; i++) {
        if (l[i].seq >= before)
            l[n++] = l[i];
        else
            slda_sdoc_unref(l[i].doc);
    }
    track->nex[k] = n;
}

size_t slda_track_examples(const slda_track_t *track, uint32_t k, const slda_example_t **out)
{
    if (!track->nex || k >= track->K) {
        *out = NULL;
        return 0;
    }
    *out = track->ex + (size_t)k * track->o.examples;
    return track->nex[k];
}

size_t slda_track_example(const slda_track_t *track, uint32_t k, size_t i, const char **id,
                          int64_t *ms, double *score, const char **text)
{
    const slda_example_t *l;
    size_t n = slda_track_examples(track, k, &l);
    if (i < n) {
        if (id)
            *id = l[i].id;
        if (ms)
            *ms = l[i].ms;
        if (score)
            *score = l[i].score;
        if (text)
            *text = l[i].text;
    }
    return n;
}

void slda_track_write_examples(const slda_track_t *track, FILE *f, int by_topic)
{
    fprintf(f, by_topic ? "\"topics\":[" : "\"examples\":[");
    int first = 1;
    for (uint32_t k = 0; k < track->K; k++) {
        const slda_example_t *l;
        size_t n = slda_track_examples(track, k, &l);
        if (by_topic)
            fprintf(f, "%s[", k ? "," : "");
        for (size_t i = 0; i < n; i++) {
            char iso[40];
            slda_time_format(l[i].ms, iso, sizeof iso);
            fprintf(f, "%s{\"topic\":%u,\"score\":%.4f,\"update\":%llu,\"event_ms\":%lld,"
                       "\"time\":\"%s\",\"id\":",
                    (by_topic ? i == 0 : first) ? "" : ",", k, l[i].score,
                    (unsigned long long)l[i].scored_at, (long long)l[i].ms, iso);
            slda_json_write_string(f, l[i].id);
            fprintf(f, ",\"text\":");
            slda_json_write_string(f, l[i].text);
            fprintf(f, "}");
            first = 0;
        }
        if (by_topic)
            fprintf(f, "]");
    }
    fprintf(f, "]");
}

char *slda_track_json_examples(const slda_track_t *track, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    fprintf(f, "{\"K\":%u,\"per_topic\":%u,", track->K, track->o.examples);
    slda_track_write_examples(track, f, 1);
    fprintf(f, "}");
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
