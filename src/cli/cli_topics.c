/* cli_topics.c - `streamlda topics`: a snapshot's topics, their top words, weights and labels;
 * the topics of a word (--search); each topic's representative documents (--docs).
 *
 * One topic a line, or one JSON object with --json. A topic's weight is its share of the topic
 * totals NZ (the share of the model's tokens it holds; slda_align_weights, src/track/align.c),
 * the same number `diff` and `report` show. The topic ids are the model's slots, the ids the
 * service's output records and tracking use. A topic's user label (`streamlda label`, the
 * service's page) is printed in quotes after its id; --labels prints the automatic label
 * (track/label.c) in brackets for the others. --search WORD... ranks the topics by the share
 * of the words' occurrences they hold (p(k|w) from the word's row, averaged over the words
 * given), and also lists the topics whose labels contain the text. --docs reads the tracking
 * state beside the snapshot (<snapshot>.track.json, written by the service and by train
 * --snapshot-dir) for each topic's representative documents. An author-topic model's topics
 * can list the authors who wrote most of each (--authors N); a pachinko allocation model's
 * super-topics follow the topics with the topics each groups. Reads one snapshot; exit 1 with
 * the path and the reason when it cannot be read.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "cli/report.h"
#include "core/json.h"
#include "core/topn.h"
#include "core/slda_int.h"
#include "engine/authors.h"
#include "engine/model.h"
#include "engine/pam.h"
#include "track/align.h"
#include "track/track.h"

#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_MIN 0.01 /* a topic is listed when it holds this share of the words' occurrences */

static const char topics_usage[] =
    "Usage: streamlda topics [-n N] [--weights] [--labels] [--json] [--search WORDS] [--docs]\n"
    "                        [--authors N] SNAPSHOT\n"
    "Print the N most probable words of each topic (default 10), one topic a line:\n"
    "  topic K: word word ...\n"
    "A topic with a user label (streamlda label) prints it after its id: topic K \"label\": ...\n"
    "  -n, --words N   words per topic\n"
    "  -w, --weights   print each topic's weight, its share of the topic totals NZ\n"
    "                  (the share of the model's tokens it holds):\n"
    "                    topic K 0.0421: word word ...\n"
    "  -l, --labels    print the automatic label (the topic's most relevant words, as LDAvis\n"
    "                  ranks them) of each topic without a user label: topic K [label]: ...\n"
    "  -s, --search WORDS  only the topics of these words: those holding at least 1% of the\n"
    "                  words' occurrences, most first, with that share (topic K 0.62 ...),\n"
    "                  and those whose label contains WORDS\n"
    "  -d, --docs      each topic's representative documents (id, event time, snippet) from\n"
    "                  the tracking state beside the snapshot (SNAPSHOT.track.json)\n"
    "  -a, --authors N an author-topic model (model.kind=atm): each topic's N authors who\n"
    "                  wrote most of it, after its words:  | by NAME NAME ...\n"
    "      --json      one JSON object: {\"model\",\"K\",\"updates\",\"docs\",\"topics\":\n"
    "                  [{\"topic\",\"weight\",\"label\",\"auto\",\"words\",\"probs\"}]}\n"
    "                  (+ \"share\" with --search, \"examples\" with --docs, \"authors\"\n"
    "                  with --authors)\n"
    "A pachinko allocation model (model.kind=pam) adds one line per super-topic with the\n"
    "topics it groups, the largest shares of its prior first (JSON: \"supers\":\n"
    "[{\"super\",\"topics\":[[K,share],...],\"alpha\":[K values]}] and \"alpha0\"):\n"
    "  super X: topic K 0.41, topic K 0.22, ...\n"
    "  -h, --help      this help\n"
    "Exit status 1 with the path and the reason for a snapshot that cannot be read (with\n"
    "--docs, also for a tracking state that is missing or cannot be used: the topics are\n"
    "printed without documents).\n";

typedef struct topics_opts_s {
    long n, nauth; /* nauth: --authors */
    int weights, labels, json, docs;
    const char *search;
} topics_opts_t;

/* Share of the query words' occurrences each topic holds (mean over the words the model
 * holds) into share[K]; returns how many of the query's words the model holds (0: none). */
static size_t search_shares(slda_model_t *model, const char *query, double *share)
{
    uint32_t K = slda_model_topics(model);
    double sigma = slda_model_scale(model);
    slda_doc_t doc;
    char err[300];
    size_t held = 0;
    slda_doc_init(&doc);
    for (uint32_t k = 0; k < K; k++)
        share[k] = 0;
    if (slda_doc_from_text(model, query, strlen(query), &doc, err, sizeof err) != SLDA_OK) {
        slda_doc_clear(&doc);
        return 0;
    }
    for (uint32_t i = 0; i < doc.npairs; i++) {
        if (!slda_model_row_held(model, doc.word[i]))
            continue;
        const float *row = slda_model_row(model, doc.word[i]);
        double tot = 0;
        for (uint32_t k = 0; k < K; k++)
            tot += row[k];
        if (!(tot * sigma > 0))
            continue;
        held++;
        for (uint32_t k = 0; k < K; k++)
            share[k] += row[k] / tot;
    }
    for (uint32_t k = 0; held && k < K; k++)
        share[k] /= (double)held;
    slda_doc_clear(&doc);
    return held;
}

/* 1 when the label contains the query, ASCII letters compared without case. */
static int label_has(const char *label, const char *query)
{
    size_t n = strlen(query);
    for (const char *p = label; p && *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)query[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int cmp_share_desc(const void *a, const void *b, void *ctx)
{
    const double *s = ctx;
    double x = s[*(const uint32_t *)a], y = s[*(const uint32_t *)b];
    return x < y ? 1 : x > y ? -1 : (*(const uint32_t *)a > *(const uint32_t *)b) -
                                    (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* The topics to print, in order, into order[]; returns how many. */
static uint32_t topics_pick(slda_model_t *model, const topics_opts_t *o,
                            const slda_track_words_t *words, double *share, uint32_t *order,
                            size_t *held)
{
    uint32_t K = slda_model_topics(model), n = 0;
    if (!o->search) {
        for (uint32_t k = 0; k < K; k++)
            order[n++] = k;
        return n;
    }
    *held = search_shares(model, o->search, share);
    for (uint32_t k = 0; k < K; k++) {
        char autol[200];
        slda_track_autolabel(model, &words[k], autol, sizeof autol);
        if (share[k] >= SEARCH_MIN || label_has(slda_model_label(model, k), o->search) ||
            label_has(autol, o->search))
            order[n++] = k;
    }
    qsort_r(order, n, sizeof *order, cmp_share_desc, share);
    return n;
}

/* model.kind=pam: each super-topic's sub-topics, largest share of its prior alpha_x first
 * (the topics it groups): "super X: topic Y 0.41, topic Z 0.22, ..." (JSON: "supers"). */
static void print_supers(const slda_pam_t *pam, uint32_t K, int json)
{
    uint32_t S = slda_pam_supers(pam), best[5];
    double share[5];
    const double *al = slda_pam_alpha_c(pam);
    if (json)
        printf("],\"alpha0\":%.6g,\"supers\":[", slda_pam_alpha0(pam));
    for (uint32_t x = 0; x < S; x++) {
        uint32_t m = slda_pam_super_top(pam, x, 5, best, share);
        printf(json ? "%s{\"super\":%u,\"topics\":[" : "%ssuper %u:", json && x ? "," : "", x);
        for (uint32_t i = 0; i < m; i++)
            printf(json ? "%s[%u,%.4f]" : "%s topic %u %.3f", i ? "," : "", best[i], share[i]);
        if (json) { /* the whole prior, for readers that fold documents in themselves */
            printf("],\"alpha\":[");
            for (uint32_t y = 0; y < K; y++)
                printf("%s%.6g", y ? "," : "", al[(size_t)x * K + y]);
        }
        printf(json ? "]}" : "\n");
    }
}

/* --authors: topic k's authors who wrote most of it, as text or a JSON member. */
static void topic_authors(const slda_model_t *model, uint32_t k, const topics_opts_t *o)
{
    const slda_authors_t *a = slda_model_authors(model);
    uint32_t aid[1000];
    if (!o->nauth || !a)
        return;
    uint32_t na = slda_authors_top(a, k, (uint32_t)o->nauth, aid);
    printf(o->json ? ",\"authors\":[" : " | by");
    for (uint32_t i = 0; i < na; i++) {
        if (o->json) {
            printf("%s", i ? "," : "");
            slda_json_write_string(stdout, slda_authors_name(a, aid[i]));
        } else {
            printf(" %s", slda_authors_name(a, aid[i]));
        }
    }
    if (o->json)
        printf("]");
}

static void topic_json(const slda_model_t *model, uint32_t k, const topics_opts_t *o,
                       double wt, const char *autol, const double *share, const uint32_t *ids,
                       const float *probs, size_t m)
{
    printf("{\"topic\":%u,\"weight\":", k);
    slda_cli_json_num(stdout, wt);
    printf(",\"label\":");
    if (slda_model_label(model, k))
        slda_json_write_string(stdout, slda_model_label(model, k));
    else
        printf("null");
    printf(",\"auto\":");
    slda_json_write_string(stdout, autol);
    if (o->search) {
        printf(",\"share\":");
        slda_cli_json_num(stdout, share[k]);
    }
    printf(",\"words\":");
    slda_cli_json_words(stdout, model, ids, m);
    printf(",\"probs\":[");
    for (size_t i = 0; i < m; i++) {
        printf("%s", i ? "," : "");
        slda_cli_json_num(stdout, probs[i]);
    }
    printf("]");
}

static void topic_text(const slda_model_t *model, uint32_t k, const topics_opts_t *o,
                       double wt, const char *autol, const double *share, const uint32_t *ids,
                       size_t m)
{
    printf("topic %u", k);
    if (o->search)
        printf(" %.4f", share[k]);
    if (o->weights)
        printf(" %.4f", wt);
    if (slda_model_label(model, k))
        printf(" \"%s\"", slda_model_label(model, k));
    else if (o->labels)
        printf(" [%s]", autol);
    putchar(':');
    for (size_t i = 0; i < m; i++)
        printf(" %s", slda_model_word(model, ids[i]));
    topic_authors(model, k, o);
    putchar('\n');
}

static int topics_print(slda_model_t *model, const topics_opts_t *o, const char *path)
{
    uint32_t K = slda_model_topics(model);
    double *wt = slda_xmalloc(K * sizeof *wt), *share = slda_xcalloc(K, sizeof *share);
    uint32_t *ids = slda_xmalloc((size_t)o->n * sizeof *ids), *order = slda_xmalloc(K * 4);
    float *probs = slda_xmalloc((size_t)o->n * sizeof *probs);
    slda_track_words_t *words = slda_xmalloc(K * sizeof *words);
    slda_report_examples_t *ex = NULL;
    size_t held = 0;
    int rc = SLDA_EXIT_OK;
    slda_align_weights(model, wt);
    slda_track_model_words(model, words, NULL);
    uint32_t n = topics_pick(model, o, words, share, order, &held);
    if (o->search && !held)
        fprintf(stderr, "streamlda topics: \"%s\": no word of the model (after tokenising: "
                        "stop words and unseen words are not held)\n", o->search);
    if (o->docs && !(ex = slda_report_examples_load(path, K, 0)))
        rc = SLDA_EXIT_FAIL;
    if (o->json) {
        printf("{\"model\":");
        slda_json_write_string(stdout, slda_model_name(model) ? slda_model_name(model) : "");
        printf(",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64
               ",\"weight\":\"share of NZ\",",
               K, slda_model_updates(model), slda_model_docs(model));
        if (o->search) {
            printf("\"search\":");
            slda_json_write_string(stdout, o->search);
            printf(",\"held\":%zu,", held);
        }
        printf("\"topics\":[");
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = order[i];
        char autol[200];
        size_t m = slda_model_top_words(model, k, (size_t)o->n, ids, probs);
        slda_track_autolabel(model, &words[k], autol, sizeof autol);
        if (o->json) {
            printf("%s", i ? "," : "");
            topic_json(model, k, o, wt[k], autol, share, ids, probs, m);
            topic_authors(model, k, o);
            if (ex)
                slda_report_examples_json(stdout, ex, k);
            printf("}");
        } else {
            topic_text(model, k, o, wt[k], autol, share, ids, m);
            if (ex)
                slda_report_examples_text(stdout, ex, k);
        }
    }
    if (slda_model_pam(model))
        print_supers(slda_model_pam(model), K, o->json);
    if (o->json)
        printf("]}\n");
    slda_report_examples_free(ex);
    free(wt);
    free(share);
    free(ids);
    free(order);
    free(probs);
    free(words);
    return rc;
}

int slda_cli_topics(int argc, char **argv)
{
    static const struct option longopts[] = {{"words", required_argument, 0, 'n'},
                                             {"weights", no_argument, 0, 'w'},
                                             {"labels", no_argument, 0, 'l'},
                                             {"search", required_argument, 0, 's'},
                                             {"docs", no_argument, 0, 'd'},
                                             {"json", no_argument, 0, 'j'},
                                             {"authors", required_argument, 0, 'a'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    topics_opts_t o = {.n = 10};
    int c;
    char why[1200];
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:a:wls:dh", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(topics_usage, stdout);
            return SLDA_EXIT_OK;
        } else if (c == 'w') {
            o.weights = 1;
        } else if (c == 'l') {
            o.labels = 1;
        } else if (c == 's') {
            o.search = optarg;
        } else if (c == 'd') {
            o.docs = 1;
        } else if (c == 'j') {
            o.json = 1;
        } else if (c == 'a') {
            if ((o.nauth = slda_cli_opt_long(optarg, 1, 1000)) < 0) {
                fputs(topics_usage, stderr);
                return SLDA_EXIT_USAGE;
            }
        } else if (c != 'n' || (o.n = slda_cli_opt_long(optarg, 1, 1000)) < 0) {
            fputs(topics_usage, stderr);
            return SLDA_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fputs(topics_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    slda_model_t *model = slda_cli_snap_load(argv[optind], NULL, why, sizeof why);
    if (!model) {
        fprintf(stderr, "streamlda: %s\n", why);
        return SLDA_EXIT_FAIL;
    }
    if (o.nauth && !slda_model_authors(model)) {
        fprintf(stderr, "streamlda topics: --authors: \"%s\" is not an author-topic model "
                        "(model.kind=atm)\n", argv[optind]);
        slda_model_destroy(model);
        return SLDA_EXIT_FAIL;
    }
    int rc = topics_print(model, &o, argv[optind]);
    slda_model_destroy(model);
    return rc;
}
