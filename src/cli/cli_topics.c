/* cli_topics.c - `streamlda topics`: a snapshot's topics, their top words and weights (and, of an
 * author-topic model, the authors who wrote most of each: --authors N).
 *
 * One topic a line, or one JSON object with --json. A topic's weight is its share of the topic
 * totals NZ (the share of the model's tokens it holds; slda_align_weights, src/track/align.c),
 * the same number `diff` and `report` show. The topic ids are the model's slots, the ids the
 * service's output records and tracking use. Reads one snapshot; exit 1 with the path and the
 * reason when it cannot be read.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "core/json.h"
#include "core/slda_int.h"
#include "engine/authors.h"
#include "engine/pam.h"
#include "engine/model.h"
#include "track/align.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const char topics_usage[] =
    "Usage: streamlda topics [-n N] [--weights] [--authors N] [--json] SNAPSHOT\n"
    "Print the N most probable words of each topic (default 10), one topic a line:\n"
    "  topic K: word word ...\n"
    "  -n, --words N   words per topic\n"
    "  -w, --weights   print each topic's weight, its share of the topic totals NZ\n"
    "                  (the share of the model's tokens it holds):\n"
    "                    topic K 0.0421: word word ...\n"
    "A pachinko allocation model (model.kind=pam) adds one line per super-topic with the\n"
    "topics it groups, the largest shares of its prior first (JSON: \"supers\":\n"
    "[{\"super\",\"topics\":[[K,share],...],\"alpha\":[K values]}] and \"alpha0\"):\n"
    "  super X: topic K 0.41, topic K 0.22, ...\n"
    "  -a, --authors N an author-topic model (model.kind=atm): each topic's N authors who\n"
    "                  wrote most of it, after its words:  | by NAME NAME ...\n"
    "      --json      one JSON object: {\"model\",\"K\",\"updates\",\"docs\",\"topics\":\n"
    "                  [{\"topic\",\"weight\",\"words\",\"probs\"[,\"authors\"]}]}\n"
    "  -h, --help      this help\n"
    "Exit status 1 with the path and the reason for a snapshot that cannot be read.\n";

/* model.kind=pam: each super-topic's sub-topics, largest share of its prior alpha_x first
 * (the topics it groups): "super X: topic Y 0.41, topic Z 0.22, ..." (JSON: "supers"). */
static void print_supers(const slda_pam_t *pam, uint32_t K, int json)
{
    uint32_t S = slda_pam_supers(pam), show = K < 5 ? K : 5, best[5];
    const double *al = slda_pam_alpha_c(pam);
    if (json)
        printf("],\"alpha0\":%.6g,\"supers\":[", slda_pam_alpha0(pam));
    for (uint32_t x = 0; x < S; x++) {
        const double *a = al + (size_t)x * K;
        double A = 0;
        uint32_t m = 0;
        for (uint32_t y = 0; y < K; y++) {
            A += a[y];
            uint32_t i = m < show ? m++ : show;
            if (i == show && !(a[y] > a[best[show - 1]]))
                continue;
            if (i == show)
                i = show - 1;
            while (i > 0 && a[y] > a[best[i - 1]]) {
                best[i] = best[i - 1];
                i--;
            }
            best[i] = y;
        }
        printf(json ? "%s{\"super\":%u,\"topics\":[" : "%ssuper %u:", json && x ? "," : "", x);
        for (uint32_t i = 0; i < m; i++)
            printf(json ? "%s[%u,%.4f]" : "%s topic %u %.3f", i ? "," : "", best[i], a[best[i]] / A);
        if (json) { /* the whole prior, for readers that fold documents in themselves */
            printf("],\"alpha\":[");
            for (uint32_t y = 0; y < K; y++)
                printf("%s%.6g", y ? "," : "", a[y]);
        }
        printf(json ? "]}" : "\n");
    }
}

/* The n authors with the most tokens of topic k (N_a[k]), largest first, into out. */
static uint32_t top_authors(const slda_authors_t *a, uint32_t k, uint32_t n, uint32_t *out)
{
    uint32_t m = 0, max = slda_authors_max_id(a);
    for (uint32_t id = 0; id < max; id++) {
        if (!slda_authors_name(a, id))
            continue;
        float v = slda_authors_counts(a, id)[k];
        if (m == n && !(v > slda_authors_counts(a, out[n - 1])[k]))
            continue;
        uint32_t i = m < n ? m++ : n - 1;
        while (i > 0 && v > slda_authors_counts(a, out[i - 1])[k]) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = id;
    }
    return m;
}

int slda_cli_topics(int argc, char **argv)
{
    static const struct option longopts[] = {{"words", required_argument, 0, 'n'},
                                             {"weights", no_argument, 0, 'w'},
                                             {"json", no_argument, 0, 'j'},
                                             {"authors", required_argument, 0, 'a'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    long n = 10, nauth = 0;
    int c, weights = 0, json = 0;
    char why[1200];
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:a:wh", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(topics_usage, stdout);
            return SLDA_EXIT_OK;
        } else if (c == 'w') {
            weights = 1;
        } else if (c == 'j') {
            json = 1;
        } else if (c == 'a') {
            if ((nauth = slda_cli_opt_long(optarg, 1, 1000)) < 0) {
                fputs(topics_usage, stderr);
                return SLDA_EXIT_USAGE;
            }
        } else if (c != 'n' || (n = slda_cli_opt_long(optarg, 1, 1000)) < 0) {
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
    uint32_t K = slda_model_topics(model);
    const slda_authors_t *authors = slda_model_authors(model);
    if (nauth && !authors) {
        fprintf(stderr, "streamlda topics: --authors: \"%s\" is not an author-topic model "
                        "(model.kind=atm)\n", argv[optind]);
        slda_model_destroy(model);
        return SLDA_EXIT_FAIL;
    }
    uint32_t *aid = slda_xmalloc((size_t)nauth * sizeof *aid + 4);
    double *wt = slda_xmalloc(K * sizeof *wt);
    uint32_t *ids = slda_xmalloc((size_t)n * sizeof *ids);
    float *probs = slda_xmalloc((size_t)n * sizeof *probs);
    slda_align_weights(model, wt);
    if (json) {
        printf("{\"model\":");
        slda_json_write_string(stdout, slda_model_name(model) ? slda_model_name(model) : "");
        printf(",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64
               ",\"weight\":\"share of NZ\",\"topics\":[",
               K, slda_model_updates(model), slda_model_docs(model));
    }
    for (uint32_t k = 0; k < K; k++) {
        size_t m = slda_model_top_words(model, k, (size_t)n, ids, probs);
        if (json) {
            printf("%s{\"topic\":%u,\"weight\":", k ? "," : "", k);
            slda_cli_json_num(stdout, wt[k]);
            printf(",\"words\":");
            slda_cli_json_words(stdout, model, ids, m);
            printf(",\"probs\":[");
            for (size_t i = 0; i < m; i++) {
                printf("%s", i ? "," : "");
                slda_cli_json_num(stdout, probs[i]);
            }
            printf("]");
            if (nauth) {
                uint32_t na = top_authors(authors, k, (uint32_t)nauth, aid);
                printf(",\"authors\":[");
                for (uint32_t i = 0; i < na; i++) {
                    printf("%s", i ? "," : "");
                    slda_json_write_string(stdout, slda_authors_name(authors, aid[i]));
                }
                printf("]");
            }
            printf("}");
            continue;
        }
        if (weights)
            printf("topic %u %.4f:", k, wt[k]);
        else
            printf("topic %u:", k);
        for (size_t i = 0; i < m; i++)
            printf(" %s", slda_model_word(model, ids[i]));
        if (nauth) {
            uint32_t na = top_authors(authors, k, (uint32_t)nauth, aid);
            printf(" | by");
            for (uint32_t i = 0; i < na; i++)
                printf(" %s", slda_authors_name(authors, aid[i]));
        }
        putchar('\n');
    }
    const slda_pam_t *pam = slda_model_pam(model);
    if (pam)
        print_supers(pam, K, json);
    if (json)
        printf("]}\n");
    free(aid);
    free(wt);
    free(ids);
    free(probs);
    slda_model_destroy(model);
    return SLDA_EXIT_OK;
}
