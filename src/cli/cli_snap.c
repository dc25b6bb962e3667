/* cli_snap.c - what the commands on snapshots share: loading with a reason, top words, JSON.
 *
 * topics, diff and report (cli_topics.c, cli_diff.c, report_*.c) read snapshots and print the
 * top words of topics; these helpers keep their messages, word lists and number formats the
 * same across the three. Nothing here prints on its own: the loader returns its reason for the
 * command to print.
 */
#include "cli/cli_snap.h"
#include "core/json.h"
#include "core/slda_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

slda_model_t *slda_cli_snap_load(const char *path, slda_snapshot_meta_t *meta, char *why,
                                 size_t why_size)
{
    slda_err_t e;
    char err[1024];
    slda_model_t *model = slda_snapshot_read_meta(path, meta, &e, err, sizeof err);
    if (!model)
        snprintf(why, why_size, "%s (%s)", err, slda_err_name(e));
    return model;
}

long slda_cli_opt_long(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

size_t slda_cli_top_words(const slda_model_t *model, uint32_t k, size_t n, uint32_t *ids)
{
    float probs[1000];
    return slda_model_top_words(model, k, n > 1000 ? 1000 : n, ids, probs);
}

void slda_cli_json_words(FILE *f, const slda_model_t *model, const uint32_t *ids, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        slda_json_write_string(f, slda_model_word(model, ids[i]));
    }
    fputc(']', f);
}

void slda_cli_json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

void slda_cli_words_text(const slda_model_t *model, uint32_t k, size_t n, char *buf,
                         size_t size)
{
    uint32_t ids[32];
    size_t m = slda_cli_top_words(model, k, n > 32 ? 32 : n, ids), used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < m && used + 1 < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? " " : "",
                         slda_model_word(model, ids[i]));
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

int slda_cli_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
