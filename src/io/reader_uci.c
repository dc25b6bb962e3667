/* reader_uci.c - UCI bag-of-words (docword.X.txt): header D, W, NNZ, then "docID wordID count".
 *
 * Invariants. Entries are grouped by docID; a document is the run of
 * consecutive entries with the same docID, gathered in rd->uci_cur and handed
 * over when the next docID or the end arrives. A bad entry line is reported
 * and dropped on its own: the rest of its document still comes through, and
 * its error comes before the document. Word ids are 1-based in the file and
 * map to vocabulary id wordID-1 of the model's fixed vocabulary
 * (vocab.file). If the file ends before NNZ entry lines, SLDA_ERR_TRUNCATED
 * is reported once (after the last document), then SLDA_ERR_EOF. A read
 * error is reported after the lines read before it, then the document being
 * gathered comes out as at the end. Detected from a name docword*.txt, or
 * from a first line holding a lone count (the header's D) when the
 * vocabulary is fixed.
 *
 * Threads. A file is read in blocks of UCI_BLOCK bytes, split into lines in
 * place, and parsed on the model's worker threads in pieces of UCI_PIECE
 * lines (parsing only reads the vocabulary, which a UCI reader never
 * changes) while the caller reads the next block; the caller then groups
 * the parsed entries into documents in line order (a document built whole on
 * a worker, with no rejected line among its entries, is passed at once). A
 * pipe is read a line at a time (a live stream is not held back), parsed as
 * it is served. Parsing was two thirds of reading KOS's instructions, reading
 * the lines a quarter.
 */
#include "engine/model.h"
#include "io/reader.h"
#include "core/pool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

static slda_err_t slda_reader_uci_open(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    slda_err_t err = header_value(rd, "documents D", &rd->uci_ndocs, errstr, errstr_size);
    if (err == SLDA_OK)
        err = header_value(rd, "words W", &rd->uci_nwords, errstr, errstr_size);
    if (err == SLDA_OK)
        err = header_value(rd, "entries NNZ", &rd->uci_nnz, errstr, errstr_size);
    return err;
}

typedef struct entry_s {
    uint32_t line;    /* its line: the how-manieth of its piece (from 1) */
    uint32_t len;
    uint32_t run;     /* a good entry: its run in the piece's runs */
    size_t off;       /* its line in the batch's buffer */
    slda_err_t err;   /* SLDA_OK, or why the line is rejected (msg) */
    char *msg;        /* malloc'ed, for a rejected line (freed when served) */
    uint64_t doc;
    uint32_t word;    /* vocabulary id (0-based) */
    uint32_t count;
} entry_t;

/* A run: the good entries of one docID in a row (rejected lines between
 * them do not end it). A run with runs before and after it in its piece is
 * a whole document, which the worker builds; the serving thread gathers the
 * others, which may go on in the pieces before or after. */
typedef struct run_s {
    slda_doc_t doc;   /* built (run_built): the document (until served) */
    uint32_t end;     /* 1 + the index of its last entry in the piece */
    uint32_t errs;    /* rejected lines between its entries */
} run_t;

/* Whole lines of a batch, split and parsed by one worker. */
typedef struct piece_s {
    size_t from, to;  /* bytes of the batch's buffer; the last line may lack its "\n" */
    int stripped;     /* a pipe's lines: their "\r" was stripped when read */
    uint32_t lines;   /* lines in it, empty ones too (set by the parse) */
    entry_t *e;       /* its non-empty lines (set by the parse) */
    uint32_t n, cap;
    run_t *r;         /* its runs (set by the parse) */
    uint32_t nr, capr;
} piece_t;

/* Run k of pc is a whole document, built by the worker: neither its first nor its last. */
static inline int run_built(const piece_t *pc, uint32_t k)
{
    return k > 0 && k + 1 < pc->nr;
}

/* Lines read together. */
typedef struct uci_batch_s {
    char *buf;
    size_t blen, bcap;
    piece_t *pc;
    uint32_t npc, cappc;
    slda_err_t end;   /* SLDA_OK, or what ended the reading (EOF, SLDA_ERR_IO) */
} uci_batch_t;

struct uci_ahead_s {
    uci_batch_t b[2];
    int serve;              /* b[serve] is served, b[1 - serve] read ahead */
    uint32_t pi, ei;        /* next entry served: piece, entry */
    uint64_t lines;         /* lines before piece pi */
    int started, ended;     /* ended: the end of the input was served */
    slda_doc_t *built;      /* a built document whose entries are served (emitted next) */
    char *carry;            /* a file: the partial line the last block ended with */
    size_t carry_len, carry_cap;
};

#define UCI_BLOCK ((size_t)1 << 18) /* bytes read at a time from a file */
#define UCI_PIECE ((size_t)1 << 14) /* bytes a worker splits and parses at a time */

/* Messages and documents not served (served ones are freed or moved out as
 * they go). */
static void batch_free(uci_batch_t *b)
{
    for (uint32_t k = 0; k < b->cappc; k++) {
        for (uint32_t i = 0; i < b->pc[k].n; i++)
            free(b->pc[k].e[i].msg);
        for (uint32_t i = 0; i < b->pc[k].nr; i++)
            slda_doc_clear(&b->pc[k].r[i].doc);
        free(b->pc[k].e);
        free(b->pc[k].r);
    }
    free(b->pc);
    free(b->buf);
}

static void slda_reader_uci_close(slda_reader_t *rd)
{
    struct uci_ahead_s *a = rd->uci_ahead;
    if (!a)
        return;
    batch_free(&a->b[0]);
    batch_free(&a->b[1]);
    free(a->carry);
    free(a);
    rd->uci_ahead = NULL;
}

static void room(uci_batch_t *b, size_t bytes)
{
    if (b->bcap < bytes + 1) { /* + 1: the parse ends an unended last line with a NUL */
        b->bcap = bytes + 1 > 2 * b->bcap ? bytes + 1 : 2 * b->bcap;
        b->buf = slda_xrealloc(b->buf, b->bcap);
    }
}

static void add_piece(uci_batch_t *b, size_t from, size_t to, int stripped)
{
    if (b->npc == b->cappc) {
        uint32_t cap = b->cappc ? 2 * b->cappc : 16;
        b->pc = slda_xrealloc(b->pc, cap * sizeof *b->pc);
        memset(b->pc + b->cappc, 0, (cap - b->cappc) * sizeof *b->pc);
        b->cappc = cap;
    }
    piece_t *pc = &b->pc[b->npc++];
    pc->from = from;
    pc->to = to;
    pc->stripped = stripped;
    pc->lines = pc->n = pc->nr = 0;
}

/* A file: the next UCI_BLOCK bytes into b after the partial line the last
 * block ended with, cut into pieces of whole lines (the workers split them:
 * no copy per line, as getline and a batch buffer made). At the end of the
 * input the last line may have no "\n"; a read error drops a partial line. */
static void read_block(slda_reader_t *rd, struct uci_ahead_s *a, uci_batch_t *b)
{
    size_t carry = a->carry_len, got, whole;
    b->npc = 0;
    b->end = SLDA_OK;
    room(b, carry + UCI_BLOCK);
    if (carry)
        memcpy(b->buf, a->carry, carry);
    got = fread(b->buf + carry, 1, UCI_BLOCK, rd->f);
    b->blen = carry + got;
    if (got < UCI_BLOCK) {
        rd->eof = 1;
        b->end = ferror(rd->f) ? SLDA_ERR_IO : SLDA_ERR_EOF;
        if (b->end == SLDA_ERR_IO)
            rd->read_errno = errno;
    }
    if (b->end == SLDA_ERR_EOF) {
        whole = b->blen;
    } else {
        char *nl = memrchr(b->buf, '\n', b->blen);
        whole = nl ? (size_t)(nl - b->buf) + 1 : 0;
    }
    for (size_t from = 0; from < whole;) {
        size_t to = from + UCI_PIECE;
        if (to >= whole) {
            to = whole;
        } else {
            char *nl = memchr(b->buf + to, '\n', whole - to);
            to = nl ? (size_t)(nl - b->buf) + 1 : whole;
        }
        add_piece(b, from, to, 0);
        from = to;
    }
    a->carry_len = b->end == SLDA_OK ? b->blen - whole : 0;
    if (a->carry_cap < a->carry_len) {
        a->carry_cap = a->carry_len;
        a->carry = slda_xrealloc(a->carry, a->carry_cap);
    }
    if (a->carry_len)
        memcpy(a->carry, b->buf + whole, a->carry_len);
}

/* A pipe: lines up to the next non-empty one (a live stream is not held
 * back), as one piece. */
static void read_lines(slda_reader_t *rd, uci_batch_t *b)
{
    b->npc = 0;
    b->blen = 0;
    b->end = SLDA_OK;
    for (;;) {
        int r = slda_reader_getline(rd);
        if (r <= 0) {
            b->end = r < 0 ? SLDA_ERR_IO : SLDA_ERR_EOF;
            break;
        }
        room(b, b->blen + rd->linelen + 1);
        memcpy(b->buf + b->blen, rd->line, rd->linelen);
        b->blen += rd->linelen;
        b->buf[b->blen++] = '\n';
        if (rd->linelen > 0)
            break;
    }
    if (b->blen)
        add_piece(b, 0, b->blen, 1);
}

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

/* Split a line into three integers. */
static int entry_fields(const char *line, size_t len, int64_t v[3])
{
    const char *p = line, *end = line + len;
    if (entry_fields_fast(p, end, v))
        return 1;
    for (int i = 0; i < 3; i++) {
        const char *q = slda_reader_skip_space(p, end);
        if ((i > 0 && q == p) || !slda_reader_parse_int(&q, end, &v[i]))
            return 0;
        p = q;
    }
    return slda_reader_skip_space(p, end) == end;
}

/* What parsing reads besides the lines (fixed while a batch is parsed). */
typedef struct parse_job_s {
    const slda_vocab_t *vocab;
    uint64_t ndocs, limit;  /* header D; the highest word id usable */
    uci_batch_t *b;
    slda_reader_t *rd;      /* for read_next, on the caller's thread */
} parse_job_t;

static slda_err_t reject(entry_t *e, slda_err_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static slda_err_t reject(entry_t *e, slda_err_t code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    e->msg = slda_xstrdup(msg);
    return e->err = code;
}

static void parse_entry(const parse_job_t *job, entry_t *e)
{
    const char *line = job->b->buf + e->off;
    int64_t v[3];
    char ex[64];
    e->err = SLDA_OK;
    e->msg = NULL;
    if (!entry_fields(line, e->len, v)) {
        reject(e, SLDA_ERR_PARSE, "expected \"docID wordID count\", found \"%s\"",
               slda_reader_excerpt_of(line, e->len, ex, sizeof ex));
        return;
    }
    if (v[0] < 1 || (uint64_t)v[0] > job->ndocs) {
        reject(e, SLDA_ERR_RANGE, "doc id %lld out of range 1..%llu", (long long)v[0],
               (unsigned long long)job->ndocs);
        return;
    }
    if (v[1] < 1 || (uint64_t)v[1] > job->limit ||
        !slda_vocab_word(job->vocab, (uint32_t)(v[1] - 1))) {
        reject(e, SLDA_ERR_RANGE, "word id %lld out of range 1..%llu", (long long)v[1],
               (unsigned long long)job->limit);
        return;
    }
    if (v[2] < 1 || v[2] > SLDA_MAX_DOC_TOKENS) {
        reject(e, SLDA_ERR_RANGE, "count %lld out of range 1..%u", (long long)v[2],
               SLDA_MAX_DOC_TOKENS);
        return;
    }
    e->doc = (uint64_t)v[0];
    e->word = (uint32_t)(v[1] - 1);
    e->count = (uint32_t)v[2];
}

/* The runs of a parsed piece; the documents of those between others. */
static void find_runs(piece_t *pc)
{
    uint32_t first = UINT32_MAX, errs = 0; /* errs: rejected lines since the last entry */
    for (uint32_t i = 0; i < pc->n; i++) {
        entry_t *e = &pc->e[i];
        if (e->err != SLDA_OK) {
            errs++;
            continue;
        }
        if (first == UINT32_MAX || e->doc != pc->e[first].doc) {
            if (pc->nr == pc->capr) {
                pc->capr = pc->capr ? 2 * pc->capr : 16;
                pc->r = slda_xrealloc(pc->r, pc->capr * sizeof *pc->r);
            }
            slda_doc_init(&pc->r[pc->nr].doc);
            pc->r[pc->nr].errs = 0;
            pc->nr++;
            first = i;
        } else {
            pc->r[pc->nr - 1].errs += errs;
        }
        errs = 0;
        e->run = pc->nr - 1;
        pc->r[pc->nr - 1].end = i + 1;
    }
    for (uint32_t i = 0; i < pc->n;) { /* each built run's entries: its document */
        entry_t *e = &pc->e[i];
        if (e->err != SLDA_OK || !run_built(pc, e->run)) {
            i++;
            continue;
        }
        uint32_t run = e->run, end = i, n = 0;
        for (; end < pc->n && (pc->e[end].err != SLDA_OK || pc->e[end].run == run); end++)
            n += pc->e[end].err == SLDA_OK;
        slda_doc_t *d = &pc->r[run].doc;
        d->word = slda_xmalloc(n * sizeof *d->word);
        d->count = slda_xmalloc(n * sizeof *d->count);
        d->cap = n;
        for (uint32_t j = i; j < end; j++) {
            if (pc->e[j].err != SLDA_OK)
                continue;
            d->word[d->npairs] = pc->e[j].word;
            d->count[d->npairs++] = pc->e[j].count;
        }
        slda_doc_finish(d); /* sorts, merges and sums ntokens, as slda_doc_add's documents */
        slda_reader_set_id(d, e->doc);
        i = end;
    }
}

/* Split piece i into lines and parse them (a worker). */
static void parse_piece(size_t i, uint32_t worker, void *opaque)
{
    const parse_job_t *job = opaque;
    piece_t *pc = &job->b->pc[i];
    char *buf = job->b->buf, *stop = buf + pc->to;
    (void)worker;
    for (char *s = buf + pc->from; s < stop;) {
        char *q = s;
        while (q < stop && *q != '\n') /* short lines: no call per line */
            q++;
        size_t len = (size_t)(q - s);
        pc->lines++;
        if (!pc->stripped && len > 0 && s[len - 1] == '\r')
            len--;
        s[len] = '\0';
        if (len > 0) {
            if (pc->n == pc->cap) {
                pc->cap = pc->cap ? 2 * pc->cap : 256;
                pc->e = slda_xrealloc(pc->e, pc->cap * sizeof *pc->e);
            }
            entry_t *e = &pc->e[pc->n++];
            e->line = pc->lines;
            e->off = (size_t)(s - buf);
            e->len = (uint32_t)len;
            parse_entry(job, e);
        }
        s = q + 1;
    }
    find_runs(pc);
}

/* On the caller's thread while the workers parse: read the next block. */
static void read_next(void *opaque)
{
    parse_job_t *job = opaque;
    struct uci_ahead_s *a = job->rd->uci_ahead;
    read_block(job->rd, a, &a->b[1 - a->serve]);
}

/* The next batch becomes the one served: a file's was read ahead (parse it,
 * reading the one after meanwhile, unless it ended the input); a pipe's is
 * read now, nothing ahead. */
static void advance(slda_reader_t *rd, struct uci_ahead_s *a)
{
    if (!rd->ahead_pipeline)
        read_lines(rd, &a->b[1 - a->serve]);
    a->serve = 1 - a->serve;
    uci_batch_t *b = &a->b[a->serve];
    parse_job_t job = {slda_model_vocab(rd->model), rd->uci_ndocs, slda_reader_vocab_limit(rd), b, rd};
    if (rd->uci_nwords > 0 && rd->uci_nwords < job.limit)
        job.limit = rd->uci_nwords;
    slda_pool_run_pre(slda_model_pool(rd->model), b->npc, parse_piece,
                      rd->ahead_pipeline && b->end == SLDA_OK ? read_next : NULL, &job);
    a->pi = a->ei = 0;
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

/* The document whose entries were all served: a built one, or the one
 * gathered. */
static slda_err_t emit_next(slda_reader_t *rd, struct uci_ahead_s *a, slda_doc_t *doc)
{
    if (!a->built)
        return emit(rd, doc);
    *doc = *a->built; /* moved out */
    slda_doc_init(a->built);
    a->built = NULL;
    return SLDA_OK;
}

static slda_err_t at_end(slda_reader_t *rd, slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    if (rd->uci_cur.npairs > 0 || rd->uci_ahead->built)
        return emit_next(rd, rd->uci_ahead, doc);
    if (!rd->uci_done && rd->uci_seen < rd->uci_nnz) {
        rd->uci_done = 1;
        return slda_reader_fail(rd, SLDA_ERR_TRUNCATED, errstr, errstr_size,
                                "file ends after %llu of %llu entries (NNZ)",
                                (unsigned long long)rd->uci_seen,
                                (unsigned long long)rd->uci_nnz);
    }
    return SLDA_ERR_EOF;
}

static slda_err_t slda_reader_uci_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                       size_t errstr_size)
{
    struct uci_ahead_s *a = rd->uci_ahead;
    if (!a) {
        a = rd->uci_ahead = slda_xcalloc(1, sizeof *a);
        a->lines = rd->lineno; /* the header's */
        a->serve = 1;          /* the first advance serves b[0] */
    }
    for (;;) {
        if (a->ended)
            return at_end(rd, doc, errstr, errstr_size);
        if (!a->started) {
            a->started = 1;
            if (rd->ahead_pipeline)
                read_block(rd, a, &a->b[0]);
            advance(rd, a);
        }
        uci_batch_t *b = &a->b[a->serve];
        if (a->pi == b->npc) {
            if (b->end == SLDA_OK) {
                advance(rd, a);
                continue;
            }
            a->ended = 1;
            rd->lineno = a->lines;
            if (b->end == SLDA_ERR_IO) /* after the lines read before it */
                return slda_reader_io_error(rd, errstr, errstr_size);
            continue;
        }
        piece_t *pc = &b->pc[a->pi];
        if (a->ei == pc->n) {
            a->lines += pc->lines;
            a->pi++;
            a->ei = 0;
            continue;
        }
        entry_t *e = &pc->e[a->ei];
        rd->lineno = a->lines + e->line; /* for the error's path:line */
        if (e->err != SLDA_OK) {
            a->ei++;
            rd->uci_seen++;
            slda_err_t err = slda_reader_fail(rd, e->err, errstr, errstr_size, "%s", e->msg);
            free(e->msg);
            e->msg = NULL;
            return err;
        }
        if (e->doc != rd->uci_doc && (rd->uci_cur.npairs > 0 || a->built))
            return emit_next(rd, a, doc); /* this entry opens the next document */
        rd->uci_doc = e->doc;
        if (run_built(pc, e->run) && !pc->r[e->run].errs) {
            /* a document built whole, no rejected line inside: its entries at
             * once (one by one: reading KOS 9.6 -> 10.3 ms on one thread) */
            a->built = &pc->r[e->run].doc;
            rd->uci_seen += pc->r[e->run].end - a->ei;
            a->ei = pc->r[e->run].end;
            continue;
        }
        a->ei++;
        rd->uci_seen++;
        if (run_built(pc, e->run))
            a->built = &pc->r[e->run].doc;
        else
            slda_doc_add(&rd->uci_cur, e->word, e->count);
    }
}

/* ---- detection (format.c's table) ---- */

static int is_docword(const char *base)
{
    return strncmp(base, "docword", 7) == 0 && slda_reader_ends_with(base, ".txt");
}

/* docword<X>.txt -> vocab<X>.txt */
static char *uci_vocab(const char *path, int named)
{
    const char *base = slda_reader_base_name(path);
    (void)named;
    if (!is_docword(base))
        return NULL;
    size_t xlen = strlen(base) - 7 - 4;
    char *name = slda_xmalloc(xlen + 10);
    snprintf(name, xlen + 10, "vocab%.*s.txt", (int)xlen, base + 7);
    char *guess = slda_reader_sibling(path, name, strlen(name));
    free(name);
    return guess;
}

static int uci_by_name(const char *path, int fixed)
{
    (void)fixed;
    return is_docword(slda_reader_base_name(path));
}

/* A lone count is a UCI header only with a fixed vocabulary to map ids. */
static int uci_by_line(const char *line, size_t len, int fixed)
{
    return fixed && slda_reader_line_is_count(line, len);
}

/* Its row of format.c's table. */
const slda_format_row_t slda_format_uci = {
    .name = "uci", .title = "UCI bag-of-words", .file = SLDA_FORMAT_UCI, .needs_vocab = 1,
    .by_name = uci_by_name, .by_line = uci_by_line, .vocab = uci_vocab,
    .open = slda_reader_uci_open, .next = slda_reader_uci_next, .close = slda_reader_uci_close};
