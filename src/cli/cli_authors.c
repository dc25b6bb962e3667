/* cli_authors.c - `streamlda authors`: an author-topic model's authors, their topic mixtures,
 * and the authors who drive a topic.
 *
 * model.kind=atm (docs/models.md). Authors are listed by the tokens they have written (T_a,
 * the size their counts stand for), each with its largest topics; --topic K ranks them by
 * the tokens of topic K they wrote (N_a[k]) instead: who drives that topic. --json gives
 * the same as one object; --npy/--names export every author's mixture (engine/authors.h's
 * theta_a) with the list of names. A snapshot of another kind is refused with the reason.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "core/json.h"
#include "core/topn.h"
#include "core/slda_int.h"
#include "engine/authors.h"
#include "engine/model.h"
#include "io/snapshot.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char authors_usage[] =
    "Usage: streamlda authors [--top N] [--topics N] [--topic K] [--json]\n"
    "                         [--npy FILE --names FILE] SNAPSHOT\n"
    "The authors of an author-topic model (model.kind=atm), the most prolific first, one a\n"
    "line with its largest topics and their shares of its mixture:\n"
    "  NAME tokens=T: topic K 0.41, topic K 0.22, ...\n"
    "      --top N     authors listed (default 20; 0 = all)\n"
    "      --topics N  topics shown per author (default 3)\n"
    "      --topic K   the authors who drive topic K: ranked by the tokens of topic K they\n"
    "                  wrote (N_a[K]), with that count and the share of their own mixture\n"
    "      --json      one JSON object: {\"model\",\"K\",\"authors\",\"capacity\",\"evicted\",\n"
    "                  \"list\":[{\"author\",\"tokens\",\"mass\",\"topics\":[[K,share],...]}]}\n"
    "                  (mass: |N_a|, the total of its counts; a document's prior is\n"
    "                  (mass + alpha_sum) x mixture = N_a + alpha)\n"
    "      --npy FILE  with --names: every author's mixture (A x K float32 .npy, rows in\n"
    "      --names FILE  the order of the names file, one name a line)\n"
    "  -h, --help      this help\n"
    "Exit status 1 with the reason for a snapshot that cannot be read or is not atm.\n";

typedef struct rank_s {
    double key;
    uint32_t id;
} rank_t;

static int by_key_desc(const void *pa, const void *pb)
{
    const rank_t *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? 1 : -1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The m largest entries of theta (K) into top (indices), largest first; key: m doubles. */
static uint32_t top_topics(const float *theta, uint32_t K, uint32_t m, uint32_t *top, double *key)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < K; k++)
        slda_topn_push(top, key, &n, m, k, theta[k]);
    return n;
}

int slda_cli_authors(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"top", required_argument, 0, 'n'},   {"topics", required_argument, 0, 't'},
        {"topic", required_argument, 0, 'k'}, {"json", no_argument, 0, 'j'},
        {"npy", required_argument, 0, 'N'},   {"names", required_argument, 0, 'A'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    long top = 20, ntop = 3, topic = -1;
    int c, json = 0;
    const char *npy = NULL, *names = NULL;
    char why[1200];
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(authors_usage, stdout); return SLDA_EXIT_OK;
        case 'n': top = slda_cli_opt_long(optarg, 0, 100000000); break;
        case 't': ntop = slda_cli_opt_long(optarg, 1, SLDA_MAX_TOPICS); break;
        case 'k': topic = slda_cli_opt_long(optarg, 0, SLDA_MAX_TOPICS - 1); break;
        case 'j': json = 1; break;
        case 'N': npy = optarg; break;
        case 'A': names = optarg; break;
        default: fputs(authors_usage, stderr); return SLDA_EXIT_USAGE;
        }
        if (top < 0 || ntop < 0 || (c == 'k' && topic < 0)) {
            fputs(authors_usage, stderr);
            return SLDA_EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || !npy != !names) {
        if (!npy != !names)
            fprintf(stderr, "streamlda authors: --npy and --names go together\n");
        fputs(authors_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    slda_model_t *model = slda_cli_snap_load(argv[optind], NULL, why, sizeof why);
    if (!model) {
        fprintf(stderr, "streamlda: %s\n", why);
        return SLDA_EXIT_FAIL;
    }
    const slda_authors_t *a = slda_model_authors(model);
    uint32_t K = slda_model_topics(model);
    int rc = SLDA_EXIT_OK;
    if (!a) {
        fprintf(stderr, "streamlda authors: \"%s\" is not an author-topic model (model.kind=lda; "
                        "train with -X model.kind=atm and an author field)\n", argv[optind]);
        slda_model_destroy(model);
        return SLDA_EXIT_FAIL;
    }
    if (topic >= (long)K) {
        fprintf(stderr, "streamlda authors: --topic %ld: the model has topics 0..%u\n", topic,
                K - 1);
        slda_model_destroy(model);
        return SLDA_EXIT_USAGE;
    }
    if (npy) {
        if (slda_export_authors(model, npy, names, why, sizeof why) != SLDA_OK) {
            fprintf(stderr, "streamlda: %s\n", why);
            slda_model_destroy(model);
            return SLDA_EXIT_FAIL;
        }
    }
    uint32_t max = slda_authors_max_id(a), n = 0;
    rank_t *r = slda_xmalloc(((size_t)max + 1) * sizeof *r);
    for (uint32_t id = 0; id < max; id++) {
        if (!slda_authors_name(a, id))
            continue;
        r[n].id = id;
        r[n++].key = topic >= 0 ? slda_authors_counts(a, id)[topic] : slda_authors_tokens(a, id);
    }
    qsort(r, n, sizeof *r, by_key_desc);
    uint32_t show = top == 0 || (uint32_t)top > n ? n : (uint32_t)top;
    float *theta = slda_xmalloc(K * sizeof *theta);
    uint32_t *tt = slda_xmalloc((size_t)ntop * sizeof *tt + 4);
    double *tkey = slda_xmalloc((size_t)ntop * sizeof *tkey + 8);
    if (json) {
        printf("{\"model\":");
        slda_json_write_string(stdout, slda_model_name(model) ? slda_model_name(model) : "");
        printf(",\"K\":%u,\"authors\":%u,\"capacity\":%u,\"evicted\":%" PRIu64, K, n,
               slda_authors_capacity(a), slda_authors_evicted(a));
        if (topic >= 0)
            printf(",\"topic\":%ld", topic);
        printf(",\"list\":[");
    } else if (topic >= 0) {
        printf("topic %ld: the authors who wrote most of it (tokens of the topic, share of "
               "their mixture)\n", topic);
    }
    for (uint32_t i = 0; i < show; i++) {
        uint32_t id = r[i].id;
        slda_author_mixture(model, id, theta);
        uint32_t m = top_topics(theta, K, (uint32_t)ntop, tt, tkey);
        const char *name = slda_authors_name(a, id);
        if (json) {
            printf("%s{\"author\":", i ? "," : "");
            slda_json_write_string(stdout, name);
            printf(",\"tokens\":");
            slda_cli_json_num(stdout, slda_authors_tokens(a, id));
            printf(",\"mass\":"); /* |N_a|: the weight of its mixture as a prior */
            slda_cli_json_num(stdout, slda_authors_mass(a, id));
            if (topic >= 0) {
                printf(",\"topic_tokens\":");
                slda_cli_json_num(stdout, r[i].key);
            }
            printf(",\"topics\":[");
            for (uint32_t j = 0; j < m; j++) {
                printf("%s[%u,", j ? "," : "", tt[j]);
                slda_cli_json_num(stdout, theta[tt[j]]);
                putchar(']');
            }
            printf("]}");
            continue;
        }
        if (topic >= 0) {
            printf("%s topic_tokens=%.1f share=%.3f tokens=%.0f\n", name, r[i].key,
                   theta[topic], slda_authors_tokens(a, id));
            continue;
        }
        printf("%s tokens=%.0f:", name, slda_authors_tokens(a, id));
        for (uint32_t j = 0; j < m; j++)
            printf("%s topic %u %.3f", j ? "," : "", tt[j], theta[tt[j]]);
        putchar('\n');
    }
    if (json)
        printf("]}\n");
    free(theta);
    free(tt);
    free(tkey);
    free(r);
    slda_model_destroy(model);
    return rc;
}
