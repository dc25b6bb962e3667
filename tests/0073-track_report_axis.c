/* 0073-track_report_axis.c - `streamlda report` draws one time axis: the snapshots' event time
 * (header event_ms) when every snapshot has one, else for all of them the time of their last
 * update, said on standard error; never a chart that mixes the two. Also: a model trained
 * further in memory and snapshotted at each step gives a point per snapshot in update order,
 * whatever order the files were written in.
 *
 * The snapshots are written here through the library (slda_snapshot_write_meta), one model
 * trained step by step, so they are one run; the report runs as a program.
 */
#include "streamlda.h"
#include "testutil.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char errbuf[1024];

/* Train model on one more minibatch of two themes. */
static void step(slda_model_t *model, int round)
{
    static const char *texts[2] = {"apple banana cherry fruit orchard pear juice",
                                   "engine piston turbine motor gearbox fuel torque"};
    slda_doc_t docs[40];
    for (int d = 0; d < 40; d++) {
        slda_doc_init(&docs[d]);
        const char *t = texts[(d + round) % 2];
        CHECK_OK(slda_doc_from_text(model, t, strlen(t), &docs[d], errbuf, sizeof errbuf), errbuf);
    }
    CHECK_OK(slda_model_train(model, docs, 40, NULL, NULL, errbuf, sizeof errbuf), errbuf);
    slda_docs_clear(docs, 40);
}

/* Snapshot `model` into dir under its update count, with event time ev (0: none). */
static void snap(const char *dir, const slda_model_t *model, int64_t ev)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/m-%020llu.slda", dir,
             (unsigned long long)slda_model_updates(model));
    slda_snapshot_meta_t meta = {ev};
    CHECK_OK(slda_snapshot_write_meta(model, &meta, path, errbuf, sizeof errbuf), errbuf);
}

int main(void)
{
    const char *S = getenv("STREAMLDA");
    if (!S) {
        fprintf(stderr, "STREAMLDA must be set\n");
        return 1;
    }
    char *T = slda_test_tmpdir();
    char all[4200], mixed[4200];
    snprintf(all, sizeof all, "%s/all", T);
    snprintf(mixed, sizeof mixed, "%s/mixed", T);
    mkdir(all, 0777);
    mkdir(mixed, 0777);

    slda_conf_t *conf = slda_conf_new();
    slda_conf_set(conf, "topics", "2", errbuf, sizeof errbuf);
    slda_conf_set(conf, "text.stopwords", "none", errbuf, sizeof errbuf);
    slda_conf_set(conf, "model.name", "m", errbuf, sizeof errbuf);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf);
    CHECK_TRUE(model != NULL, "%s", errbuf);
    const int64_t day = 86400000, t0 = 1262304000000; /* 2010-01-01 */
    for (int i = 0; i < 4; i++) {
        step(model, i);
        snap(all, model, t0 + i * day);
        snap(mixed, model, i == 2 ? 0 : t0 + i * day); /* the third without event time */
    }

    char *out;
    CHECK_INT(slda_test_run(&out, "\"%s\" report \"%s\" --json - 2>\"%s/err\"", S, all, T), 0);
    CHECK_CONTAINS(out, "\"time\":\"event\"");
    /* the points at the event times given, in update order */
    const char *p = out;
    for (int i = 0; i < 4; i++) {
        char want[64];
        snprintf(want, sizeof want, "\"time_ms\":%lld,\"event_time\":true",
                 (long long)(t0 + i * day));
        p = strstr(p, want);
        CHECK_NONNULL(p);
        if (!p) {
            fprintf(stderr, "  point %d (%s) missing in %.400s\n", i, want, out);
            break;
        }
    }
    free(out);

    CHECK_INT(slda_test_run(&out,
                            "\"%s\" report \"%s\" --json - --html \"%s/m.html\" "
                            "2>&1 >\"%s/m.json\"",
                            S, mixed, T, T),
              0);
    CHECK_CONTAINS(out, "1 of 4 snapshots carry no event time: the time axis is each snapshot's "
                        "last update for all");
    free(out);
    CHECK_INT(slda_test_run(&out, "cat \"%s/m.json\"", T), 0);
    CHECK_CONTAINS(out, "\"time\":\"updated\"");
    CHECK_NULL(strstr(out, "\"event_time\":true")); /* no point keeps its event time */
    CHECK_NULL(strstr(out, "\"time_ms\":1262304000000"));
    free(out);
    CHECK_INT(slda_test_run(&out, "grep -c 'class=\"chart\"' \"%s/m.html\"", T), 0);
    CHECK_INT(atoi(out), 2);
    free(out);
    CHECK_INT(slda_test_run(&out, "grep -c 'time of each snapshot' \"%s/m.html\"", T), 0);
    free(out);

    slda_model_destroy(model);
    slda_conf_destroy(conf);
    slda_test_run(NULL, "rm -rf \"%s\"", T);
    free(T);
    return slda_test_done("0073-track_report_axis");
}
