/* reader_text.c - raw text: one document per line of a file, or one per message value.
 *
 * Invariants. In a file, every non-blank line is a document (a line left
 * with no tokens - only stop words, digits or punctuation - is an empty
 * document: SLDA_ERR_EMPTY, counted); blank lines separate paragraphs and are
 * skipped. Lines are tokenised through the model's tokenizer and vocabulary
 * (bag.c), so lower-casing, stop words, the size limit and vocabulary
 * handling are the same as for Kafka messages, whose whole value is a text
 * (slda_reader_text_decode). A line's document id is its line number. Errors
 * get the "path:line: " prefix and are counted. Text is what format detection
 * falls back to (format.c).
 *
 * Text is read ahead and tokenised into bags on the model's worker threads
 * (bag.c: tokenising only reads the tokenizer); the bags' words are looked
 * up in the vocabulary on the caller's thread, in line order, so the
 * documents and the vocabulary are those of reading one line at a time.
 * From a pipe: one minibatch of lines at a time (a live stream is not held
 * back), each looked up when served. From a file: a pipeline of batches of
 * 256 lines - while the workers tokenise batch k+1, the caller looks up
 * batch k and reads batch k+2 (lookup_and_read) - so reading and lookups
 * overlap tokenising. A read error or the end of input is returned after the
 * lines read before it.
 */
#include "engine/model.h"
#include "io/reader.h"
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

typedef struct ahead_item_s {
    uint64_t lineno;
    size_t off, len;        /* the line in buf */
    slda_err_t err;         /* of tokenising, then (files) of the lookup */
    char msg[512];
} ahead_item_t;

/* Lines read together: their text, their bags and (files) their documents. */
typedef struct text_batch_s {
    char *buf;
    size_t blen, bcap;
    ahead_item_t *items;
    slda_bag_t **bags;      /* one per item slot, kept */
    slda_doc_t *docs;       /* files: the documents, looked up ahead */
    uint32_t n, cap;
    slda_err_t end;         /* SLDA_OK, or what ended the reading (EOF, I/O error) */
    char enderr[512];
} text_batch_t;

struct text_ahead_s {
    text_batch_t b[3];
    int serve, tokd, raw;   /* files: batch served, tokenised, read (indices into b) */
    uint32_t pos;           /* next item of the batch served */
    int started, done;
    uint64_t lineno;        /* the reader's line number after what was read */
    slda_reader_t *rd;
};

static void slda_reader_text_close(slda_reader_t *rd)
{
    struct text_ahead_s *a = rd->ahead;
    if (!a)
        return;
    for (int k = 0; k < 3; k++) {
        text_batch_t *b = &a->b[k];
        for (uint32_t i = 0; i < b->cap; i++) {
            slda_bag_free(b->bags[i]);
            if (b->docs)
                slda_doc_clear(&b->docs[i]);
        }
        free(b->bags);
        free(b->docs);
        free(b->items);
        free(b->buf);
    }
    free(a);
    rd->ahead = NULL;
}

/* Count the decoder's error and prefix it with path:line. */
static slda_err_t reject(slda_reader_t *rd, slda_err_t err, const char *msg, char *errstr,
                         size_t errstr_size)
{
    return slda_reader_fail(rd, err, errstr, errstr_size, "%s", msg);
}

/* Read up to ahead_max non-blank lines into b. */
static void read_batch(slda_reader_t *rd, struct text_ahead_s *a, text_batch_t *b)
{
    b->n = 0;
    b->blen = 0;
    b->end = SLDA_OK;
    rd->lineno = a->lineno;
    while (b->n < rd->ahead_max) {
        slda_err_t err = slda_reader_next_nonblank(rd, b->enderr, sizeof b->enderr);
        if (err != SLDA_OK) {
            b->end = err;
            break;
        }
        if (b->n == b->cap) {
            uint32_t cap = b->cap ? b->cap * 2 : 64;
            b->items = slda_xrealloc(b->items, cap * sizeof *b->items);
            b->bags = slda_xrealloc(b->bags, cap * sizeof *b->bags);
            b->docs = slda_xrealloc(b->docs, cap * sizeof *b->docs);
            for (uint32_t i = b->cap; i < cap; i++) {
                b->bags[i] = slda_bag_new();
                slda_doc_init(&b->docs[i]);
            }
            b->cap = cap;
        }
        if (b->blen + rd->linelen + 1 > b->bcap) {
            while (b->blen + rd->linelen + 1 > b->bcap)
                b->bcap = b->bcap ? b->bcap * 2 : 65536;
            b->buf = slda_xrealloc(b->buf, b->bcap);
        }
        memcpy(b->buf + b->blen, rd->line, rd->linelen + 1);
        b->items[b->n] = (ahead_item_t){.lineno = rd->lineno, .off = b->blen, .len = rd->linelen};
        b->blen += rd->linelen + 1;
        b->n++;
    }
    a->lineno = rd->lineno;
}

typedef struct tok_job_s {
    const slda_model_t *model;
    text_batch_t *b;        /* to tokenise (worker threads) */
    struct text_ahead_s *a; /* files: the batch to look up and the one to read (caller) */
    int hint;               /* nothing looks words up meanwhile: find them too (bag.c) */
} tok_job_t;

static void tokenize_item(size_t i, uint32_t worker, void *opaque)
{
    tok_job_t *job = opaque;
    ahead_item_t *it = &job->b->items[i];
    (void)worker;
    slda_vocab_t *vocab = slda_model_vocab(job->model);
    it->err = slda_bag_tokenize(slda_model_tokenizer(job->model), slda_vocab_seed(vocab),
                                job->b->bags[i], job->b->buf + it->off, it->len, it->msg,
                                sizeof it->msg);
    if (it->err == SLDA_OK && job->hint)
        slda_bag_hint(vocab, job->b->bags[i], NULL);
}

/* Files, on the calling thread while the workers tokenise the next batch:
 * look up the tokenised batch's words, in line order, then read the batch
 * after. The documents and the vocabulary are those of one line at a time:
 * all of a file is read before training starts (train holds files in memory),
 * so looking ahead changes no vocabulary epoch. */
static void lookup_and_read(void *opaque)
{
    tok_job_t *job = opaque;
    struct text_ahead_s *a = job->a;
    text_batch_t *t = &a->b[a->tokd];
    for (uint32_t i = 0; i < t->n; i++) {
        ahead_item_t *it = &t->items[i];
        slda_doc_init(&t->docs[i]);
        if (it->err == SLDA_OK)
            it->err = slda_doc_from_bag(slda_model_tokenizer(a->rd->model),
                                        slda_model_vocab(a->rd->model), t->bags[i], &t->docs[i],
                                        it->msg, sizeof it->msg);
    }
    read_batch(a->rd, a, &a->b[a->serve]); /* served already: its slot is free */
}

/* Files: the batch looked up becomes the one served; the one tokenised now,
 * the next to look up; the one just read, the next to tokenise. */
static void advance(slda_reader_t *rd, struct text_ahead_s *a)
{
    tok_job_t job = {rd->model, &a->b[a->raw], a, 0}; /* lookup_and_read runs meanwhile */
    slda_pool_run_pre(slda_model_pool(rd->model), a->b[a->raw].n, tokenize_item, lookup_and_read, &job);
    int served = a->serve;
    a->serve = a->tokd;
    a->tokd = a->raw;
    a->raw = served;
    a->pos = 0;
}

/* The next item of batch b as a document (its words looked up now, unless
 * looked up ahead), or its error with path:line. */
static slda_err_t serve_item(slda_reader_t *rd, struct text_ahead_s *a, text_batch_t *b,
                             int looked_up, slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    uint32_t i = a->pos++;
    ahead_item_t *it = &b->items[i];
    slda_err_t err = it->err;
    if (err == SLDA_OK && looked_up) {
        slda_doc_clear(doc);
        *doc = b->docs[i]; /* moved out */
        slda_doc_init(&b->docs[i]);
    } else if (err == SLDA_OK) {
        err = slda_doc_from_bag(slda_model_tokenizer(rd->model), slda_model_vocab(rd->model),
                                b->bags[i], doc, it->msg, sizeof it->msg);
    }
    if (err != SLDA_OK) {
        rd->lineno = it->lineno; /* for the error's path:line */
        err = reject(rd, err, it->msg, errstr, errstr_size);
        rd->lineno = a->lineno;
        return err;
    }
    slda_reader_set_id(doc, it->lineno);
    return SLDA_OK;
}

/* What ended batch b's reading, once its lines are served; then the end. */
static slda_err_t batch_end(struct text_ahead_s *a, text_batch_t *b, char *errstr,
                            size_t errstr_size)
{
    slda_err_t end = b->end;
    if (end != SLDA_ERR_EOF)
        snprintf(errstr, errstr_size, "%s", b->enderr);
    a->done = 1;
    return end;
}

static slda_err_t slda_reader_text_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                        size_t errstr_size)
{
    struct text_ahead_s *a = rd->ahead;
    if (!a) {
        a = rd->ahead = slda_xcalloc(1, sizeof *a);
        a->rd = rd;
        a->lineno = rd->lineno;
        a->serve = 0, a->tokd = 1, a->raw = 2;
    }
    if (a->done)
        return SLDA_ERR_EOF;
    if (!rd->ahead_pipeline) { /* a pipe: one batch at a time, looked up as served */
        text_batch_t *b = &a->b[0];
        if (a->pos == b->n) {
            if (a->started && b->end != SLDA_OK)
                return batch_end(a, b, errstr, errstr_size);
            a->started = 1;
            read_batch(rd, a, b);
            tok_job_t job = {rd->model, b, a, 1};
            slda_pool_run(slda_model_pool(rd->model), b->n, tokenize_item, &job);
            a->pos = 0;
            return slda_reader_text_next(rd, doc, errstr, errstr_size);
        }
        return serve_item(rd, a, b, 0, doc, errstr, errstr_size);
    }
    if (!a->started) { /* fill the pipeline: read, then tokenise while reading the next */
        a->started = 1;
        a->b[a->tokd].end = SLDA_OK; /* nothing to look up yet */
        read_batch(rd, a, &a->b[a->raw]);
        advance(rd, a);
        a->b[a->serve].n = 0;
    }
    for (;;) {
        text_batch_t *b = &a->b[a->serve];
        if (a->pos < b->n)
            return serve_item(rd, a, b, 1, doc, errstr, errstr_size);
        if (b->end != SLDA_OK)
            return batch_end(a, b, errstr, errstr_size);
        advance(rd, a);
    }
}

/* A message value in input.format=text: the whole value is the text. */
static slda_err_t text_decode(slda_record_t *rec, const char *val, size_t len, char *errstr,
                              size_t errstr_size)
{
    (void)errstr;
    (void)errstr_size;
    rec->field[SLDA_FIELD_TEXT] = (slda_field_t){val, len};
    return SLDA_OK;
}

/* One line as a record (its text; its id the line number), not looked up: for callers that
 * score documents without adding to the vocabulary (slda_reader_next_record). */
static slda_err_t text_next_record(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    int r = slda_reader_getline(rd);
    if (r < 0)
        return slda_reader_io_error(rd, errstr, errstr_size);
    if (r == 0)
        return SLDA_ERR_EOF;
    char id[24];
    int n = snprintf(id, sizeof id, "%llu", (unsigned long long)rd->lineno);
    slda_record_reset(&rd->rec);
    rd->rec.field[SLDA_FIELD_ID] = (slda_field_t){slda_record_copy(&rd->rec, id, (size_t)n),
                                                  (size_t)n};
    rd->rec.field[SLDA_FIELD_TEXT] = (slda_field_t){rd->line, rd->linelen};
    return SLDA_OK;
}

/* Its row of format.c's table: no detector (what no other row claims). */
const slda_format_row_t slda_format_text = {
    .name = "text", .alias = "txt", .title = "text", .file = SLDA_FORMAT_TEXT,
    .next = slda_reader_text_next, .close = slda_reader_text_close,
    .next_record = text_next_record, .decode = text_decode};
