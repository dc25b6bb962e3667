/* update_log.c - bytes per document of update records and the perplexity cost of their value
 * encodings (bench/update_log.sh builds and runs it; docs/replication.md, "Measured").
 *
 *   update_log uci DOCWORD VOCAB K MINIBATCH SEED
 *   update_log text FILE K MINIBATCH SEED          (one document per line)
 *
 * Every tenth document (i % 10 == 9) is held out; the others are trained in order, one pass,
 * global.stale=0, the other properties at their defaults (births on), by four models: one
 * through slda_model_train, and one per value encoding (float32, float16, q8) through update
 * records - slda_update_local, slda_update_encode, slda_update_decode, slda_update_apply, the
 * way a replica applies the log. Text goes through the replicas' scratch vocabulary
 * (slda_update_doc_from_text); the UCI corpus has a fixed vocabulary, so its documents are
 * read once and shared. Prints, per model: encoded bytes per trained document and the
 * document-completion perplexity of the held-out documents (slda_eval_perplexity, seed 1),
 * and the change against float32 in percent. A fixed-vocabulary float32 run must give
 * slda_model_train's perplexity exactly (local + apply == train).
 * UPDATE_LOG_THIN="0.001 0.004": more models, one per share and per float32 and q8,
 * whose records are thinned (slda_update_thin) before encoding ("thin0.001", "thin0.001q8").
 * UPDATE_LOG_BYTES=1: no slda_model_train model (its perplexity printed as 0), for bytes.
 * UPDATE_LOG_STALE="0 1 4 16": instead of the encodings, float32 records whose local halves
 * read the model that many records behind (a replica's updates.staleness, always at its
 * bound), against train (global.stale=0).
 */
#include "streamlda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const char *err)
{
    fprintf(stderr, "update_log: %s: %s\n", what, err);
    exit(1);
}

static slda_conf_t *make_conf(const char *vocab, unsigned K, unsigned long long tokens,
                              unsigned seed)
{
    char err[512], v[64];
    slda_conf_t *conf = slda_conf_new();
    snprintf(v, sizeof v, "%u", K);
    if (slda_conf_set(conf, "topics", v, err, sizeof err) != SLDA_OK)
        die("topics", err);
    snprintf(v, sizeof v, "%u", seed);
    slda_conf_set(conf, "seed", v, err, sizeof err);
    slda_conf_set(conf, "global.stale", "0", err, sizeof err);
    snprintf(v, sizeof v, "%llu", tokens);
    slda_conf_set(conf, "corpus.tokens", v, err, sizeof err);
    if (vocab && slda_conf_set(conf, "vocab.file", vocab, err, sizeof err) != SLDA_OK)
        die("vocab.file", err);
    /* UPDATE_LOG_CONF="key=value ...": more properties, e.g. births=false */
    const char *extra = getenv("UPDATE_LOG_CONF");
    char *copy = strdup(extra ? extra : ""), *save = NULL;
    for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            die(kv, "UPDATE_LOG_CONF wants key=value");
        *eq = '\0';
        if (slda_conf_set(conf, kv, eq + 1, err, sizeof err) != SLDA_OK)
            die(kv, err);
    }
    free(copy);
    return conf;
}

typedef struct corpus_s {
    int text;
    char **lines;   /* text */
    slda_doc_t *docs; /* uci */
    size_t n;
} corpus_t;

static void read_text(corpus_t *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(path, "cannot open");
    char *line = NULL;
    size_t cap = 0, alloc = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (c->n == alloc) {
            alloc = alloc ? 2 * alloc : 4096;
            c->lines = realloc(c->lines, alloc * sizeof *c->lines);
        }
        c->lines[c->n++] = strdup(line);
    }
    free(line);
    fclose(f);
}

static void read_uci(corpus_t *c, slda_conf_t *conf, slda_model_t *model, const char *path)
{
    char err[512];
    slda_reader_t *rd = slda_reader_open(conf, model, path, SLDA_FORMAT_UCI, err, sizeof err);
    if (!rd)
        die(path, err);
    size_t alloc = 0;
    slda_doc_t doc;
    slda_err_t e;
    slda_doc_init(&doc);
    while ((e = slda_reader_next(rd, &doc, err, sizeof err)) != SLDA_ERR_EOF) {
        if (e != SLDA_OK)
            continue;
        if (c->n == alloc) {
            alloc = alloc ? 2 * alloc : 4096;
            c->docs = realloc(c->docs, alloc * sizeof *c->docs);
        }
        c->docs[c->n++] = doc;
        slda_doc_init(&doc);
    }
    slda_reader_close(rd);
}

/* arm < 0: slda_model_train; else the value encoding of the records, each
 * record's local half reading the model without the stale records before it
 * (a replica with updates.staleness = stale, at its worst: always that far
 * behind). */
static void run(const corpus_t *c, slda_conf_t *conf, int arm, double thin, size_t mb,
                size_t stale, double *ppl, double *bytes_per_doc)
{
    slda_update_t **fifo = calloc(stale + 2, sizeof *fifo);
    size_t nfifo = 0;
    char err[512];
    slda_model_t *model = slda_model_new(conf, err, sizeof err);
    if (!model)
        die("model", err);
    slda_update_scratch_t *scratch = c->text && arm >= 0 ? slda_update_scratch_new() : NULL;
    slda_doc_t *batch = calloc(mb, sizeof *batch);
    size_t nb = 0, trained = 0;
    unsigned long long bytes = 0;
    for (size_t i = 0; i <= c->n; i++) {
        if (i < c->n && i % 10 != 9) {
            slda_doc_t *d = &batch[nb];
            if (!c->text) {
                *d = c->docs[i];
            } else {
                slda_err_t e = scratch ? slda_update_doc_from_text(model, scratch, c->lines[i],
                                                                   strlen(c->lines[i]), d, err,
                                                                   sizeof err)
                                       : slda_doc_from_text(model, c->lines[i],
                                                            strlen(c->lines[i]), d, err,
                                                            sizeof err);
                if (e != SLDA_OK)
                    continue; /* empty after tokenising */
            }
            nb++;
        }
        if (nb == mb || (i == c->n && nb)) {
            if (arm < 0) {
                if (slda_model_train(model, batch, nb, NULL, NULL, err, sizeof err) != SLDA_OK)
                    die("train", err);
            } else {
                slda_update_t *upd, *dec;
                void *buf;
                size_t len;
                if (slda_update_local(model, scratch, batch, nb, 0, NULL, &upd, err, sizeof err))
                    die("update", err);
                slda_update_thin(upd, thin);
                if (slda_update_encode(upd, (slda_update_values_t)arm, &buf, &len, err,
                                       sizeof err) ||
                    slda_update_decode(buf, len, &dec, err, sizeof err))
                    die("update", err);
                fifo[nfifo++] = dec; /* applied once `stale` newer records wait */
                while (nfifo > stale) {
                    if (slda_update_apply(model, fifo[0], err, sizeof err))
                        die("apply", err);
                    slda_update_destroy(fifo[0]);
                    memmove(fifo, fifo + 1, --nfifo * sizeof *fifo);
                }
                bytes += len;
                trained += slda_update_docs(upd);
                free(buf);
                slda_update_destroy(upd);
            }
            if (c->text)
                slda_docs_clear(batch, nb);
            nb = 0;
            slda_update_scratch_clear(scratch);
        }
    }
    for (size_t i = 0; i < nfifo; i++) {
        char err2[512];
        if (slda_update_apply(model, fifo[i], err2, sizeof err2))
            die("apply", err2);
        slda_update_destroy(fifo[i]);
    }
    free(fifo);
    slda_model_flush(model);
    if (getenv("UPDATE_LOG_VERBOSE")) {
        slda_topic_counts_t tc;
        slda_model_topic_counts(model, &tc);
        fprintf(stderr, "arm %d stale %zu: births %llu deaths %llu merges %llu proposals %llu "
                "flagged %llu\n", arm, stale, (unsigned long long)tc.births,
                (unsigned long long)tc.deaths, (unsigned long long)tc.merges,
                (unsigned long long)tc.proposals, (unsigned long long)tc.flagged);
        slda_event_t ev[64];
        size_t nev = slda_model_events(model, 0, ev, 64);
        for (size_t i = 0; i < nev; i++)
            fprintf(stderr, "  %s topic %u other %u update %llu docs %u value %.4f\n",
                    slda_event_kind_name(ev[i].kind), ev[i].topic, ev[i].other,
                    (unsigned long long)ev[i].update, ev[i].docs, ev[i].value);
    }
    /* held-out documents, through the trained model's vocabulary */
    size_t nh = 0;
    slda_doc_t *held = calloc(c->n / 10 + 1, sizeof *held);
    for (size_t i = 9; i < c->n; i += 10) {
        if (!c->text)
            held[nh++] = c->docs[i];
        else if (slda_doc_from_text(model, c->lines[i], strlen(c->lines[i]), &held[nh], err,
                                    sizeof err) == SLDA_OK)
            nh++;
    }
    if (slda_eval_perplexity(model, held, nh, 1, ppl, NULL) != SLDA_OK)
        die("perplexity", "nothing scored");
    if (c->text)
        slda_docs_clear(held, nh);
    free(held);
    free(batch);
    *bytes_per_doc = trained ? (double)bytes / trained : 0;
    slda_update_scratch_destroy(scratch);
    slda_model_destroy(model);
}

int main(int argc, char **argv)
{
    corpus_t c = {0};
    int uci = argc == 7 && !strcmp(argv[1], "uci"), text = argc == 6 && !strcmp(argv[1], "text");
    if (!uci && !text) {
        fprintf(stderr, "usage: update_log uci DOCWORD VOCAB K MINIBATCH SEED\n"
                        "       update_log text FILE K MINIBATCH SEED\n");
        return 2;
    }
    int a = uci ? 4 : 3;
    unsigned K = (unsigned)atoi(argv[a]), seed = (unsigned)atoi(argv[a + 2]);
    size_t mb = (size_t)atoi(argv[a + 1]);
    unsigned long long tokens = 0;
    slda_conf_t *conf;
    if (uci) {
        char err[512];
        conf = make_conf(argv[3], K, 0, seed);
        slda_model_t *reader_model = slda_model_new(conf, err, sizeof err);
        if (!reader_model)
            die("model", err);
        read_uci(&c, conf, reader_model, argv[2]);
        slda_model_destroy(reader_model);
        for (size_t i = 0; i < c.n; i++)
            if (i % 10 != 9)
                tokens += c.docs[i].ntokens;
        slda_conf_destroy(conf);
        conf = make_conf(argv[3], K, tokens, seed);
    } else {
        char err[512];
        c.text = 1;
        read_text(&c, argv[2]);
        conf = make_conf(NULL, K, 0, seed);
        slda_model_t *m = slda_model_new(conf, err, sizeof err);
        slda_update_scratch_t *s = slda_update_scratch_new();
        for (size_t i = 0; i < c.n; i++) {
            slda_doc_t d;
            if (i % 10 != 9 &&
                slda_update_doc_from_text(m, s, c.lines[i], strlen(c.lines[i]), &d, err,
                                          sizeof err) == SLDA_OK) {
                tokens += d.ntokens;
                slda_doc_clear(&d);
            }
            if (i % 1000 == 0)
                slda_update_scratch_clear(s);
        }
        slda_update_scratch_destroy(s);
        slda_model_destroy(m);
        slda_conf_destroy(conf);
        conf = make_conf(NULL, K, tokens, seed);
    }
    static const char *const names[] = {"float32", "float16", "q8"};
    double ppl_train, ppl[3], bpd[3], dummy;
    ppl_train = 0;
    if (!getenv("UPDATE_LOG_BYTES"))
        run(&c, conf, -1, 0, mb, 0, &ppl_train, &dummy);
    const char *stales = getenv("UPDATE_LOG_STALE");
    if (stales && *stales) { /* float32 records at each staleness instead of the encodings */
        char *copy = strdup(stales), *save = NULL;
        printf("documents %zu (held out %zu), K=%u, minibatch %zu, seed %u\n", c.n, c.n / 10,
               K, mb, seed);
        printf("RESULT train 0 %.6f\n", ppl_train);
        for (char *v = strtok_r(copy, " ", &save); v; v = strtok_r(NULL, " ", &save)) {
            double p, b;
            run(&c, conf, 0, 0, mb, (size_t)atoi(v), &p, &b);
            printf("stale %-4s perplexity %10.3f %+8.3f%% vs train\n", v, p,
                   100 * (p / ppl_train - 1));
            printf("RESULT stale%s %.3f %.6f\n", v, b, p);
        }
        free(copy);
        return 0;
    }
    for (int arm = 0; arm < 3; arm++)
        run(&c, conf, arm, 0, mb, 0, &ppl[arm], &bpd[arm]);
    printf("documents %zu (held out %zu), K=%u, minibatch %zu, seed %u\n", c.n, c.n / 10, K, mb,
           seed);
    printf("%-10s %14s %12s %10s\n", "model", "bytes/doc", "perplexity", "vs float32");
    printf("%-10s %14s %12.3f %+9.3f%%\n", "train", "-", ppl_train,
           100 * (ppl_train / ppl[0] - 1));
    for (int arm = 0; arm < 3; arm++)
        printf("%-10s %14.1f %12.3f %+9.3f%%\n", names[arm], bpd[arm], ppl[arm],
               100 * (ppl[arm] / ppl[0] - 1));
    printf("RESULT train 0 %.6f\n", ppl_train);
    for (int arm = 0; arm < 3; arm++)
        printf("RESULT %s %.3f %.6f\n", names[arm], bpd[arm], ppl[arm]);
    const char *thins = getenv("UPDATE_LOG_THIN");
    char *tcopy = strdup(thins ? thins : ""), *tsave = NULL;
    for (char *v = strtok_r(tcopy, " ", &tsave); v; v = strtok_r(NULL, " ", &tsave))
        for (int arm = 0; arm < 3; arm += 2) { /* float32 and q8 */
            double p, b;
            run(&c, conf, arm, atof(v), mb, 0, &p, &b);
            printf("%-10s %14.1f %12.3f %+9.3f%%  (thinned at %s, %s)\n", "thin", b, p,
                   100 * (p / ppl[0] - 1), v, names[arm]);
            printf("RESULT thin%s%s %.3f %.6f\n", v, arm ? "q8" : "", b, p);
        }
    free(tcopy);
    if (!c.text)
        slda_docs_clear(c.docs, c.n);
    free(c.docs);
    for (size_t i = 0; c.text && i < c.n; i++)
        free(c.lines[i]);
    free(c.lines);
    slda_conf_destroy(conf);
    return 0;
}
