/* reader_uci.c - UCI bag-of-words (docword.X.txt): header D, W, NNZ, then "docID wordID count".
 *
 * Invariants. Entries are grouped by docID; a document is the run of
 * consecutive entries with the same docID, gathered in rd->uci_cur and handed
 * over when the next docID (kept pending as look-ahead) or the end arrives.
 * A bad entry line is reported and dropped on its own: the rest of its
 * document still comes through. Word ids are 1-based in the file and map to
 * vocabulary id wordID-1 of the model's fixed vocabulary (vocab.file). If
 * the file ends before NNZ entry lines, SLDA_ERR_TRUNCATED is reported once
 * (after the last document), then SLDA_ERR_EOF.
 */
#include "reader.h"

#include <stdlib.h>
#include <string.h>

/* One header count (skipping empty lines). */
static slda_err_t header_value(slda_reader_t *rd, const char *what, uint64_t *out,
                               char *errstr, size_t errstr_size)
{
    const char *p;
    char ex[64];
    int64_t v;
    int r;
    while ((r = slda_reader_getline(rd)) == 1 && rd->linelen == 0)
        ;
    if (r < 0)
        return slda_reader_io_error(rd, errstr, errstr_size);
    if (r == 0)
        return slda_reader_fail(rd, SLDA_ERR_TRUNCATED, errstr, errstr_size,
                                "UCI header: file ends before the number of %s", what);
    p = slda_reader_skip_space(rd->line, rd->line + rd->linelen);
    if (!slda_reader_line_is_count(rd->line, rd->linelen) ||
        !slda_reader_parse_int(&p, rd->line + rd->linelen, &v))
        return slda_reader_fail(rd, SLDA_ERR_PARSE, errstr, errstr_size,
                                "UCI header: expected the number of %s, found \"%s\"", what,
                                slda_reader_excerpt(rd, ex, sizeof ex));
    *out = (uint64_t)v;
    return SLDA_OK;
}

slda_err_t slda_reader_uci_open(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    slda_err_t err = header_value(rd, "documents D", &rd->uci_ndocs, errstr, errstr_size);
    if (err == SLDA_OK)
        err = header_value(rd, "words W", &rd->uci_nwords, errstr, errstr_size);
    if (err == SLDA_OK)
        err = header_value(rd, "entries NNZ", &rd->uci_nnz, errstr, errstr_size);
    return err;
}

typedef struct entry_s {
    uint64_t doc;
    uint32_t word; /* vocabulary id (0-based) */
    uint32_t count;
} entry_t;

/* The common line: three runs of at most 18 digits between spaces and tabs
 * (no sign); 0 sends anything else to the general path below, which
 * accepts the same lines with the same values (and words the errors). A
 * third of the instructions reading KOS took: the general path spends a call
 * and checks per digit. */
static int entry_fields_fast(const char *p, const char *end, int64_t v[3])
{
    for (int i = 0; i < 3; i++) {
        const char *sp = p;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (i > 0 && p == sp)
            return 0;
        const char *d = p;
        int64_t x = 0;
        while (p < end && (unsigned)(*p - '0') < 10 && p - d < 18)
            x = x * 10 + (*p++ - '0');
        if (p == d || (p < end && (unsigned)(*p - '0') < 10))
            return 0;
        v[i] = x;
    }
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p == end;
}

/* Split the current line into three integers. */
static slda_err_t entry_fields(slda_reader_t *rd, int64_t v[3], char *errstr,
                               size_t errstr_size)
{
    const char *p = rd->line, *end = rd->line + rd->linelen;
    char ex[64];
    if (entry_fields_fast(p, end, v))
        return SLDA_OK;
    for (int i = 0; i < 3; i++) {
        const char *q = slda_reader_skip_space(p, end);
        if ((i > 0 && q == p) || !slda_reader_parse_int(&q, end, &v[i]))
            goto bad;
        p = q;
    }
    if (slda_reader_skip_space(p, end) == end)
        return SLDA_OK;
bad:
    return slda_reader_fail(rd, SLDA_ERR_PARSE, errstr, errstr_size,
                            "expected \"docID wordID count\", found \"%s\"",
                            slda_reader_excerpt(rd, ex, sizeof ex));
}

static slda_err_t parse_entry(slda_reader_t *rd, entry_t *e, char *errstr, size_t errstr_size)
{
    int64_t v[3];
    uint64_t limit = slda_reader_vocab_limit(rd);
    slda_err_t err = entry_fields(rd, v, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    if (rd->uci_nwords > 0 && rd->uci_nwords < limit)
        limit = rd->uci_nwords;
    if (v[0] < 1 || (uint64_t)v[0] > rd->uci_ndocs)
        return slda_reader_fail(rd, SLDA_ERR_RANGE, errstr, errstr_size,
                                "doc id %lld out of range 1..%llu", (long long)v[0],
                                (unsigned long long)rd->uci_ndocs);
    if (v[1] < 1 || (uint64_t)v[1] > limit ||
        !slda_vocab_word(rd->model->vocab, (uint32_t)(v[1] - 1)))
        return slda_reader_fail(rd, SLDA_ERR_RANGE, errstr, errstr_size,
                                "word id %lld out of range 1..%llu", (long long)v[1],
                                (unsigned long long)limit);
    if (v[2] < 1 || v[2] > SLDA_MAX_DOC_TOKENS)
        return slda_reader_fail(rd, SLDA_ERR_RANGE, errstr, errstr_size,
                                "count %lld out of range 1..%u", (long long)v[2], SLDA_MAX_DOC_TOKENS);
    e->doc = (uint64_t)v[0];
    e->word = (uint32_t)(v[1] - 1);
    e->count = (uint32_t)v[2];
    return SLDA_OK;
}

/* Hand the gathered document over, in arrays of its size: rd->uci_cur
 * keeps its own for the next one (growing a document's arrays pair by pair,
 * reallocated at each doubling, was a tenth of reading KOS's instructions,
 * and left each document up to twice the memory it needs). */
static slda_err_t emit(slda_reader_t *rd, slda_doc_t *doc)
{
    slda_doc_t *cur = &rd->uci_cur;
    slda_doc_finish(cur);
    slda_doc_init(doc);
    doc->npairs = doc->cap = cur->npairs;
    doc->ntokens = cur->ntokens;
    doc->word = slda_xmalloc(cur->npairs * sizeof *doc->word);
    doc->count = slda_xmalloc(cur->npairs * sizeof *doc->count);
    memcpy(doc->word, cur->word, cur->npairs * sizeof *doc->word);
    memcpy(doc->count, cur->count, cur->npairs * sizeof *doc->count);
    cur->npairs = cur->ntokens = 0;
    slda_reader_set_id(doc, rd->uci_doc);
    return SLDA_OK;
}

static slda_err_t at_end(slda_reader_t *rd, slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    if (rd->uci_cur.npairs > 0)
        return emit(rd, doc);
    if (!rd->uci_done && rd->uci_seen < rd->uci_nnz) {
        rd->uci_done = 1;
        return slda_reader_fail(rd, SLDA_ERR_TRUNCATED, errstr, errstr_size,
                                "file ends after %llu of %llu entries (NNZ)",
                                (unsigned long long)rd->uci_seen,
                                (unsigned long long)rd->uci_nnz);
    }
    return SLDA_ERR_EOF;
}

slda_err_t slda_reader_uci_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                size_t errstr_size)
{
    for (;;) {
        entry_t e = {0, 0, 0};
        slda_err_t err;
        int r = slda_reader_getline(rd);
        if (r < 0)
            return slda_reader_io_error(rd, errstr, errstr_size);
        if (r == 0)
            return at_end(rd, doc, errstr, errstr_size);
        if (rd->linelen == 0)
            continue;
        rd->uci_seen++;
        if ((err = parse_entry(rd, &e, errstr, errstr_size)) != SLDA_OK)
            return err;
        if (e.doc != rd->uci_doc && rd->uci_cur.npairs > 0) {
            /* First entry of the next document: read it again next time. */
            rd->pending = 1;
            rd->uci_seen--;
            return emit(rd, doc);
        }
        rd->uci_doc = e.doc;
        slda_doc_add(&rd->uci_cur, e.word, e.count);
    }
}
