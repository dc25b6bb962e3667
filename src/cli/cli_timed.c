/* cli_timed.c - train --time-field: JSON lines with each document's event time in a field.
 *
 * Each line goes through the Kafka message decoder (the document a message with this value
 * makes in `run`) and its time through slda_time_from_json (ISO 8601, a Twitter created_at, or
 * epoch seconds or milliseconds; src/track/evtime.c), so a record without a valid time is
 * rejected like any other bad record, with "path:line: " in front of the reason. Blank lines
 * are not records. Input may be gzip-compressed (io/gzfile.h) or standard input ("-"). The
 * reader is the trainer's alone; documents are tokenised through the model it was opened with.
 */
#include "cli/cli.h"
#include "core/slda_int.h"
#include "io/docmsg.h"
#include "io/gzfile.h"
#include "track/track.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slda_cli_timed_s {
    FILE *f;
    char *path, *field;
    char *line;
    size_t cap;
    uint64_t lineno;
    slda_model_t *model;
    uint32_t max_bytes;
    char why[256];
};

slda_cli_timed_t *slda_cli_timed_open(const slda_conf_t *conf, slda_model_t *model,
                                      const char *path, const char *field, char *errstr,
                                      size_t errstr_size)
{
    slda_cli_timed_t *rd = slda_xcalloc(1, sizeof *rd);
    int is_stdin = !strcmp(path, "-");
    FILE *in = is_stdin ? stdin : fopen(path, "rb");
    if (!in) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "input \"%s\": %s", path, strerror(errno));
        free(rd);
        return NULL;
    }
    rd->f = slda_gz_open(in, !is_stdin, rd->why, sizeof rd->why);
    if (!rd->f) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "input \"%s\": %s", path, strerror(errno));
        if (!is_stdin)
            fclose(in);
        free(rd);
        return NULL;
    }
    rd->path = slda_xstrdup(path);
    rd->field = slda_xstrdup(field);
    rd->model = model;
    rd->max_bytes = 0; /* documents of any size, as the file readers take them */
    (void)conf;
    return rd;
}

slda_err_t slda_cli_timed_next(slda_cli_timed_t *rd, slda_doc_t *doc, char *errstr,
                               size_t errstr_size)
{
    char err[900];
    for (;;) {
        errno = 0;
        ssize_t len = getline(&rd->line, &rd->cap, rd->f);
        if (len < 0) {
            if (ferror(rd->f))
                return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s:%llu: %s", rd->path,
                                    (unsigned long long)rd->lineno + 1,
                                    rd->why[0] ? rd->why : strerror(errno ? errno : EIO));
            return SLDA_ERR_EOF;
        }
        rd->lineno++;
        while (len > 0 && (rd->line[len - 1] == '\n' || rd->line[len - 1] == '\r'))
            rd->line[--len] = 0;
        size_t i = 0;
        while (i < (size_t)len && (rd->line[i] == ' ' || rd->line[i] == '\t'))
            i++;
        if (i == (size_t)len)
            continue; /* blank lines are not records, as in the JSON-lines reader */
        int64_t ms = 0;
        slda_err_t e = slda_time_from_json(rd->line, (size_t)len, rd->field, &ms, err, sizeof err);
        if (e == SLDA_OK)
            e = slda_doc_from_message(rd->model, SLDA_INFMT_JSON, rd->line, (size_t)len, NULL, 0,
                                      rd->max_bytes, doc, err, sizeof err);
        if (e != SLDA_OK)
            return slda_set_err(errstr, errstr_size, e, "%s:%llu: %s", rd->path,
                                (unsigned long long)rd->lineno, err);
        doc->time_ms = ms;
        return SLDA_OK;
    }
}

void slda_cli_timed_close(slda_cli_timed_t *rd)
{
    if (!rd)
        return;
    if (rd->f && rd->f != stdin)
        fclose(rd->f);
    free(rd->line);
    free(rd->path);
    free(rd->field);
    free(rd);
}
