/* reader_ldac.c - lda-c sparse documents: "N id:count id:count ..." per line, 0-based ids.
 *
 * Invariants. A line is one document and is accepted or rejected whole: N
 * must equal the number of pairs, every id must name a word of the model's
 * fixed vocabulary (0..W-1), every count must be >= 1. The document id is
 * the line number. A line "0" (no pairs) is an empty document. Detected from
 * a name ending in .dat when its vocabulary (vocab.txt beside it, or a fixed
 * one) is there, or from a first line of that shape.
 */
#include "io/reader.h"

#include <stdlib.h>
#include <unistd.h>

/* "id:count" at *p; advances *p. */
static int parse_pair(const char **p, const char *end, int64_t *id, int64_t *count)
{
    const char *q = *p;
    if (!slda_reader_parse_int(&q, end, id) || q >= end || *q != ':')
        return 0;
    q++;
    if (!slda_reader_parse_int(&q, end, count))
        return 0;
    if (q < end && *q != ' ' && *q != '\t')
        return 0;
    *p = q;
    return 1;
}

static slda_err_t bad_pair(slda_reader_t *rd, uint32_t i, char *errstr, size_t errstr_size)
{
    char ex[64];
    return slda_reader_fail(rd, SLDA_ERR_PARSE, errstr, errstr_size,
                            "pair %u: expected \"id:count\" in \"%s\"", i + 1,
                            slda_reader_excerpt(rd, ex, sizeof ex));
}

/* Check one pair against the vocabulary and add it. */
static slda_err_t add_pair(slda_reader_t *rd, slda_doc_t *doc, uint32_t i, int64_t id,
                           int64_t count, char *errstr, size_t errstr_size)
{
    uint32_t limit = slda_reader_vocab_limit(rd);
    if (id < 0 || id >= (int64_t)limit || !slda_vocab_word(slda_model_vocab(rd->model), (uint32_t)id))
        return slda_reader_fail(rd, SLDA_ERR_RANGE, errstr, errstr_size,
                                "pair %u: word id %lld out of range 0..%lld", i + 1,
                                (long long)id, (long long)limit - 1);
    if (count < 1 || count > SLDA_MAX_DOC_TOKENS)
        return slda_reader_fail(rd, SLDA_ERR_RANGE, errstr, errstr_size,
                                "pair %u: count %lld out of range 1..%u", i + 1,
                                (long long)count, SLDA_MAX_DOC_TOKENS);
    slda_doc_add(doc, (uint32_t)id, (uint32_t)count);
    return SLDA_OK;
}

static slda_err_t parse_line(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                             size_t errstr_size)
{
    const char *end = rd->line + rd->linelen, *p = slda_reader_skip_space(rd->line, end);
    char ex[64];
    int64_t n, id, count;
    uint32_t i = 0;
    slda_err_t err;
    if (!slda_reader_parse_int(&p, end, &n) || n < 0 ||
        (p < end && *p != ' ' && *p != '\t'))
        return slda_reader_fail(rd, SLDA_ERR_PARSE, errstr, errstr_size,
                                "expected \"N id:count ...\", found \"%s\"",
                                slda_reader_excerpt(rd, ex, sizeof ex));
    for (;;) {
        p = slda_reader_skip_space(p, end);
        if (p == end)
            break;
        if (!parse_pair(&p, end, &id, &count))
            return bad_pair(rd, i, errstr, errstr_size);
        if ((err = add_pair(rd, doc, i, id, count, errstr, errstr_size)) != SLDA_OK)
            return err;
        i++;
    }
    if ((int64_t)i != n)
        return slda_reader_fail(rd, SLDA_ERR_PARSE, errstr, errstr_size,
                                "N is %lld but the line has %u pairs", (long long)n, i);
    if (i == 0)
        return slda_reader_fail(rd, SLDA_ERR_EMPTY, errstr, errstr_size,
                                "document: no words (N = 0)");
    return SLDA_OK;
}

static slda_err_t slda_reader_ldac_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                        size_t errstr_size)
{
    for (;;) {
        slda_err_t err;
        int r = slda_reader_getline(rd);
        if (r < 0)
            return slda_reader_io_error(rd, errstr, errstr_size);
        if (r == 0)
            return SLDA_ERR_EOF;
        if (rd->linelen == 0)
            continue;
        err = parse_line(rd, doc, errstr, errstr_size);
        if (err != SLDA_OK) {
            slda_doc_clear(doc);
            return err;
        }
        slda_doc_finish(doc);
        slda_reader_set_id(doc, rd->lineno);
        return SLDA_OK;
    }
}

/* ---- detection (format.c's table) ---- */

static char *ldac_vocab(const char *path, int named)
{
    if (!named && !slda_reader_ends_with(slda_reader_base_name(path), ".dat"))
        return NULL;
    return slda_reader_sibling(path, "vocab.txt", 9);
}

static int ldac_by_name(const char *path, int fixed)
{
    if (!slda_reader_ends_with(slda_reader_base_name(path), ".dat"))
        return 0;
    char *vocab = ldac_vocab(path, 1); /* beside it, when it exists */
    int ldac = (vocab && access(vocab, R_OK) == 0) || fixed;
    free(vocab);
    return ldac;
}

static int ldac_by_line(const char *line, size_t len, int fixed)
{
    (void)fixed;
    return slda_reader_line_is_ldac(line, len);
}

/* Its row of format.c's table. */
const slda_format_row_t slda_format_ldac = {
    .name = "ldac", .alias = "lda-c", .title = "lda-c", .file = SLDA_FORMAT_LDAC,
    .needs_vocab = 1, .by_name = ldac_by_name, .by_line = ldac_by_line, .vocab = ldac_vocab,
    .next = slda_reader_ldac_next};
