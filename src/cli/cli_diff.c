/* cli_diff.c - `streamlda diff`: the topics of two snapshots aligned, and what moved.
 *
 * Each topic of A is paired with one topic of B by optimal assignment (Hungarian algorithm,
 * src/track/align.c) on the Jensen-Shannon distance of their word distributions, words matched
 * by string, so two models with different vocabularies (or different K: the larger one's extra
 * topics are unmatched) compare. For each pair: the distance, both weights, both top-word lists
 * and the words gained and lost; then the unmatched topics and a summary line. Both models are
 * in memory for the whole command.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "core/json.h"
#include "core/slda_int.h"
#include "engine/model.h"
#include "track/align.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char diff_usage[] =
    "Usage: streamlda diff [OPTIONS] A B\n"
    "Align the topics of two snapshots (or models) A and B: each topic of A is paired with one\n"
    "topic of B by optimal assignment (Hungarian algorithm) on the Jensen-Shannon distance of\n"
    "their word distributions, words matched by string (0 = the same distribution, 1 = no word\n"
    "in common). With different K the extra topics of the larger model are unmatched.\n"
    "  -n, --words N   words shown per topic and compared for gained/lost (default 10)\n"
    "      --top M     words per topic in the distance (default 100), plus one bucket for the\n"
    "                  rest of each distribution; 0 = full rows over both vocabularies (exact,\n"
    "                  O(K^2 W): slow for large K)\n"
    "      --json      one JSON object instead of text\n"
    "  -h, --help      this help\n"
    "Text output: one block per pair (in A's topic order), then unmatched topics, then\n"
    "  summary pairs=N identical=N moved=N mean_js=X median_js=X max_js=X unmatched_a=N\n"
    "          unmatched_b=N\n"
    "(identical: distance 0; moved: paired with a topic of another id).\n"
    "Exit status: 0 compared, 1 a snapshot cannot be read, 2 usage error.\n";

typedef struct diff_side_s {
    const char *path;
    slda_model_t *model;
    double *wt;
    uint32_t *ids; /* K x n top words */
    size_t *nids;
} diff_side_t;

static void diff_side_init(diff_side_t *s, size_t n)
{
    uint32_t K = slda_model_topics(s->model);
    s->wt = slda_xmalloc(K * sizeof *s->wt);
    slda_align_weights(s->model, s->wt);
    s->ids = slda_xmalloc((size_t)K * n * sizeof *s->ids);
    s->nids = slda_xmalloc(K * sizeof *s->nids);
    for (uint32_t k = 0; k < K; k++)
        s->nids[k] = slda_cli_top_words(s->model, k, n, s->ids + (size_t)k * n);
}

static void diff_side_clear(diff_side_t *s)
{
    free(s->wt);
    free(s->ids);
    free(s->nids);
    slda_model_destroy(s->model);
}

/* The words of topic k of `from` whose string is not among topic j's of `in`. */
static size_t words_missing(const diff_side_t *from, uint32_t k, const diff_side_t *in,
                            uint32_t j, size_t n, const char **out)
{
    size_t m = 0;
    const uint32_t *fi = from->ids + (size_t)k * n, *ii = in->ids + (size_t)j * n;
    for (size_t x = 0; x < from->nids[k]; x++) {
        const char *w = slda_model_word(from->model, fi[x]);
        int found = 0;
        for (size_t y = 0; y < in->nids[j] && !found; y++)
            found = !strcmp(w, slda_model_word(in->model, ii[y]));
        if (!found)
            out[m++] = w;
    }
    return m;
}

static void print_strs(FILE *f, const char **w, size_t n, int json)
{
    if (json)
        fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (json) {
            if (i)
                fputc(',', f);
            slda_json_write_string(f, w[i]);
        } else {
            fprintf(f, " %s", w[i]);
        }
    }
    if (json)
        fputc(']', f);
}

static void print_topic_words(FILE *f, const diff_side_t *s, uint32_t k, size_t n, int json)
{
    if (json) {
        slda_cli_json_words(f, s->model, s->ids + (size_t)k * n, s->nids[k]);
        return;
    }
    for (size_t i = 0; i < s->nids[k]; i++)
        fprintf(f, " %s", slda_model_word(s->model, s->ids[(size_t)k * n + i]));
}

static void diff_unmatched(const diff_side_t *s, const char *side, const char *used, size_t n,
                           int json, int *first)
{
    uint32_t K = slda_model_topics(s->model);
    for (uint32_t k = 0; k < K; k++) {
        if (used[k])
            continue;
        if (json) {
            printf("%s{\"topic\":%u,\"weight\":", *first ? "" : ",", k);
            slda_cli_json_num(stdout, s->wt[k]);
            printf(",\"words\":");
            print_topic_words(stdout, s, k, n, 1);
            printf("}");
            *first = 0;
        } else {
            printf("unmatched %s %u weight %.4f:", side, k, s->wt[k]);
            print_topic_words(stdout, s, k, n, 0);
            putchar('\n');
        }
    }
}

int slda_cli_diff(int argc, char **argv)
{
    static const struct option longopts[] = {{"words", required_argument, 0, 'n'},
                                             {"top", required_argument, 0, 't'},
                                             {"json", no_argument, 0, 'j'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    long n = 10, top = SLDA_ALIGN_TOP_DEFAULT;
    int c, json = 0, rc = SLDA_EXIT_FAIL;
    char why[1200], err[512];
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(diff_usage, stdout);
            return SLDA_EXIT_OK;
        } else if (c == 'j') {
            json = 1;
        } else if (c == 'n' && (n = slda_cli_opt_long(optarg, 1, 1000)) >= 0) {
            continue;
        } else if (c == 't' && (top = slda_cli_opt_long(optarg, 0, 1000000000)) >= 0) {
            continue;
        } else {
            fputs(diff_usage, stderr);
            return SLDA_EXIT_USAGE;
        }
    }
    if (optind != argc - 2) {
        fputs(diff_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    diff_side_t a = {argv[optind], NULL, NULL, NULL, NULL};
    diff_side_t b = {argv[optind + 1], NULL, NULL, NULL, NULL};
    if (!(a.model = slda_cli_snap_load(a.path, NULL, why, sizeof why)) ||
        !(b.model = slda_cli_snap_load(b.path, NULL, why, sizeof why))) {
        fprintf(stderr, "streamlda: %s\n", why);
        slda_model_destroy(a.model);
        return SLDA_EXIT_FAIL;
    }
    uint32_t Ka = slda_model_topics(a.model), Kb = slda_model_topics(b.model);
    double *dist = slda_xmalloc((size_t)Ka * Kb * sizeof *dist);
    int32_t *r2c = slda_xmalloc(Ka * sizeof *r2c);
    char *used_a = slda_xcalloc(Ka, 1), *used_b = slda_xcalloc(Kb, 1);
    const char **gained = slda_xmalloc((size_t)n * sizeof *gained);
    const char **lost = slda_xmalloc((size_t)n * sizeof *lost);
    double *js = slda_xmalloc((Ka < Kb ? Ka : Kb) * sizeof *js + 1);
    if (slda_align_distances(a.model, b.model, (uint32_t)top, dist, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda diff: %s\n", err);
        goto out;
    }
    slda_align_assign(dist, Ka, Kb, r2c);
    diff_side_init(&a, (size_t)n);
    diff_side_init(&b, (size_t)n);
    if (json) {
        printf("{\"a\":{\"path\":");
        slda_json_write_string(stdout, a.path);
        printf(",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64 "},\"b\":{\"path\":", Ka,
               slda_model_updates(a.model), slda_model_docs(a.model));
        slda_json_write_string(stdout, b.path);
        printf(",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64
               "},\"words_compared\":%ld,\"pairs\":[",
               Kb, slda_model_updates(b.model), slda_model_docs(b.model), top);
    }
    size_t npairs = 0, identical = 0, moved = 0;
    double sum = 0;
    for (uint32_t i = 0; i < Ka; i++) {
        if (r2c[i] < 0)
            continue;
        uint32_t j = (uint32_t)r2c[i];
        double d = dist[(size_t)i * Kb + j];
        used_a[i] = used_b[j] = 1;
        js[npairs++] = d;
        sum += d;
        identical += d == 0;
        moved += i != j;
        size_t ng = words_missing(&b, j, &a, i, (size_t)n, gained);
        size_t nl = words_missing(&a, i, &b, j, (size_t)n, lost);
        if (json) {
            printf("%s{\"a\":%u,\"b\":%u,\"js\":", npairs > 1 ? "," : "", i, j);
            slda_cli_json_num(stdout, d);
            printf(",\"weight_a\":");
            slda_cli_json_num(stdout, a.wt[i]);
            printf(",\"weight_b\":");
            slda_cli_json_num(stdout, b.wt[j]);
            printf(",\"words_a\":");
            print_topic_words(stdout, &a, i, (size_t)n, 1);
            printf(",\"words_b\":");
            print_topic_words(stdout, &b, j, (size_t)n, 1);
            printf(",\"gained\":");
            print_strs(stdout, gained, ng, 1);
            printf(",\"lost\":");
            print_strs(stdout, lost, nl, 1);
            printf("}");
        } else {
            printf("pair %u -> %u js %.6f weight %.4f -> %.4f\n  a:", i, j, d, a.wt[i], b.wt[j]);
            print_topic_words(stdout, &a, i, (size_t)n, 0);
            printf("\n  b:");
            print_topic_words(stdout, &b, j, (size_t)n, 0);
            printf("\n  gained:");
            print_strs(stdout, gained, ng, 0);
            printf("\n  lost:");
            print_strs(stdout, lost, nl, 0);
            putchar('\n');
        }
    }
    int first = 1;
    if (json)
        printf("],\"unmatched_a\":[");
    diff_unmatched(&a, "a", used_a, (size_t)n, json, &first);
    first = 1;
    if (json)
        printf("],\"unmatched_b\":[");
    diff_unmatched(&b, "b", used_b, (size_t)n, json, &first);
    qsort(js, npairs, sizeof *js, slda_cli_cmp_double);
    double mean = npairs ? sum / npairs : 0;
    double median = !npairs ? 0 : npairs % 2 ? js[npairs / 2]
                                            : 0.5 * (js[npairs / 2 - 1] + js[npairs / 2]);
    double max = npairs ? js[npairs - 1] : 0;
    if (json)
        printf("],\"summary\":{\"pairs\":%zu,\"identical\":%zu,\"moved\":%zu,\"mean_js\":%.6f,"
               "\"median_js\":%.6f,\"max_js\":%.6f,\"unmatched_a\":%u,\"unmatched_b\":%u}}\n",
               npairs, identical, moved, mean, median, max, Ka - (uint32_t)npairs,
               Kb - (uint32_t)npairs);
    else
        printf("summary pairs=%zu identical=%zu moved=%zu mean_js=%.6f median_js=%.6f "
               "max_js=%.6f unmatched_a=%u unmatched_b=%u\n",
               npairs, identical, moved, mean, median, max, Ka - (uint32_t)npairs,
               Kb - (uint32_t)npairs);
    rc = SLDA_EXIT_OK;
out:
    free(dist);
    free(r2c);
    free(used_a);
    free(used_b);
    free(gained);
    free(lost);
    free(js);
    diff_side_clear(&a);
    diff_side_clear(&b);
    return rc;
}
