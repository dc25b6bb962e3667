/* 0088-track_drift_peers.c - `streamlda report`'s drift events: a topic that moves away from its
 * words over several snapshots makes one; topics that all move alike (the model refining itself
 * in one pass, not the stream changing) make none.
 *
 * On shuffled, stationary Reuters-21578 at K=50 the report raised `drift` events for six slots
 * that had moved just past 0.5 (JS) from their words at the warm-up's end, 20,000 documents on,
 * while the median slot had moved 0.45: the whole model had been learning. A drift event now
 * needs the slot to have moved further than the slots anchored with it (their median) by half
 * the threshold as well (report_collect.c, anchor_dists).
 *
 * Ten themes of 40 words each ("t", the theme's letter, two letters), a document drawing from
 * a window of 10 of its theme's words.
 * After 1,000 documents (the warm-up) the windows slide by 2 words every 100 documents:
 *  - "all": every theme's window slides: every slot moves about as far as its peers: no drift
 *    event (the old rule: one per slot, 10);
 *  - "one": only theme 0's window slides: its slot, alone, moves: drift events for it only.
 * The snapshots are written through the library, one model trained minibatch by minibatch.
 */
#include "streamlda.h"
#include "testutil.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define THEMES 10
#define STEPS 30   /* minibatches of 100 documents */
#define WARM 10    /* of them, before any window slides */

static char errbuf[1024];

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* One minibatch of 100 documents, 10 per theme, at step `step`; `all`: every theme slides. */
static void step(slda_model_t *model, int at, int all, uint64_t *rng)
{
    slda_doc_t docs[100];
    for (int d = 0; d < 100; d++) {
        int theme = d % THEMES;
        int slide = at < WARM || (!all && theme) ? 0 : 2 * (at - WARM + 1);
        if (slide > 30)
            slide = 30;
        char text[600];
        size_t used = 0;
        for (int w = 0; w < 25; w++)
        { /* "t" + the theme's letter + the word's two letters: "tabc" */
            int j = slide + (int)(lcg(rng) % 10);
            used += (size_t)snprintf(text + used, sizeof text - used, "t%c%c%c ", 'a' + theme,
                                     'a' + j / 26, 'a' + j % 26);
        }
        slda_doc_init(&docs[d]);
        CHECK_OK(slda_doc_from_text(model, text, used, &docs[d], errbuf, sizeof errbuf), errbuf);
    }
    CHECK_OK(slda_model_train(model, docs, 100, NULL, NULL, errbuf, sizeof errbuf), errbuf);
    slda_docs_clear(docs, 100);
}

/* The report's drift events of a run into dir; *topic0 those of the slot holding theme 0. */
static int drift_events(const char *S, const char *T, const char *dir, int all, int *topic0)
{
    mkdir(dir, 0777);
    slda_conf_t *conf = slda_conf_new();
    slda_conf_set(conf, "topics", "10", errbuf, sizeof errbuf);
    slda_conf_set(conf, "text.stopwords", "none", errbuf, sizeof errbuf);
    slda_conf_set(conf, "model.name", "m", errbuf, sizeof errbuf);
    slda_conf_set(conf, "seed", "2", errbuf, sizeof errbuf);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf);
    CHECK_TRUE(model != NULL, "%s", errbuf);
    uint64_t rng = 7;
    const int64_t day = 86400000, t0 = 1262304000000; /* 2010-01-01 */
    char path[4400];
    for (int i = 0; i < STEPS; i++) {
        step(model, i, all, &rng);
        snprintf(path, sizeof path, "%s/m-%020llu.slda", dir,
                 (unsigned long long)slda_model_updates(model));
        slda_snapshot_meta_t meta = {t0 + i * day};
        CHECK_OK(slda_snapshot_write_meta(model, &meta, path, errbuf, sizeof errbuf), errbuf);
    }
    /* the slot of theme 0: the one whose most probable word is one of theme 0's */
    char *words = NULL;
    CHECK_INT(slda_test_run(&words, "\"%s\" topics -n 1 \"%s\"", S, path), 0);
    int slot0 = -1;
    for (const char *l = words; l && *l;) {
        int k;
        char w[64];
        if (sscanf(l, "topic %d: %63s", &k, w) == 2 && !strncmp(w, "ta", 2))
            slot0 = k;
        const char *nl = strchr(l, '\n');
        l = nl ? nl + 1 : l + strlen(l);
    }
    if (slot0 < 0)
        fprintf(stderr, "  no slot holds theme 0: %s\n", words);
    free(words);
    char *out = NULL;
    CHECK_INT(slda_test_run(&out, "\"%s\" report \"%s\" --json - 2>\"%s/err\"", S, dir, T), 0);
    int n = 0;
    *topic0 = 0;
    for (const char *p = out; (p = strstr(p, "{\"kind\":\"drift\",\"topic\":")); p++) {
        n++;
        *topic0 += atoi(p + strlen("{\"kind\":\"drift\",\"topic\":")) == slot0;
    }
    fprintf(stderr, "  %s: %d drift event(s), %d of the slot of theme 0 (%d)\n", dir, n, *topic0,
            slot0);
    free(out);
    slda_model_destroy(model);
    slda_conf_destroy(conf);
    return n;
}

int main(void)
{
    const char *S = getenv("STREAMLDA");
    if (!S) {
        fprintf(stderr, "STREAMLDA must be set\n");
        return 1;
    }
    char *T = slda_test_tmpdir();
    char all[4200], one[4200];
    snprintf(all, sizeof all, "%s/all", T);
    snprintf(one, sizeof one, "%s/one", T);
    int t0;
    CHECK_INT(drift_events(S, T, all, 1, &t0), 0); /* every slot moved alike */
    int n = drift_events(S, T, one, 0, &t0);
    CHECK_TRUE(n >= 1 && t0 == n, "%d drift event(s), %d of theme 0's slot", n, t0);
    slda_test_run(NULL, "rm -rf \"%s\"", T);
    free(T);
    return slda_test_done("0088-track_drift_peers");
}
