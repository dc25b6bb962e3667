/* reader_ahead.c - records of text read ahead and tokenised on the worker threads, looked up in order.
 *
 * Raw text, JSON lines and CSV/TSV files are read through here (their rows'
 * next). Records are read in batches on the caller's thread; each record's
 * expensive part runs on the model's worker threads (core/pool.c): decoding
 * (JSON: parsing the line; CSV/TSV rows are split on the caller's thread, a
 * quoted field may span lines), its time field, and tokenising into a bag
 * (bag.c and record.c: tokenising only reads the tokenizer). The bags' words
 * are looked up in the vocabulary on the caller's thread, in record order,
 * so the documents, their ids and times and the vocabulary are those of
 * reading one record at a time, whatever the number of threads, and a
 * rejected record is reported in its place with its path:line.
 * From a pipe: one minibatch of records at a time (a live stream is not held
 * back), each looked up when served. From a file: a pipeline of batches of
 * 256 records - while the workers tokenise batch k+1, the caller looks up
 * batch k and reads batch k+2 (lookup_and_read) - so reading and lookups
 * overlap tokenising. A read error or the end of input is returned after the
 * records read before it.
 */
#include "engine/model.h"
#include "io/reader.h"
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

/* How a format's records are read ahead (from its row of format.c's table). */
typedef enum {
    AHEAD_TEXT,   /* raw text: the line is the text */
    AHEAD_DECODE, /* JSON lines: the line is decoded on a worker (row->decode) */
    AHEAD_RECORD  /* CSV/TSV: row->next_record on the caller's thread, copied */
} ahead_mode_t;

typedef struct ahead_item_s {
    uint64_t lineno;
    size_t off, len;        /* the line in buf (text, JSON) */
    slda_err_t err;         /* of reading, decoding, tokenising, then (files) of the lookup */
    int reported;           /* err was counted and msg has its path:line (read on the caller) */
    int64_t ms;             /* the time field's, 0 without one */
    char *id;               /* the record's id (malloc'ed, moved to the document), or NULL */
    char msg[512];
} ahead_item_t;

/* Lines read together: their text, their bags and (files) their documents. */
typedef struct text_batch_s {
    char *buf;
    size_t blen, bcap;
    ahead_item_t *items;
    slda_bag_t **bags;      /* one per item slot, kept */
    slda_record_t *recs;    /* one per item slot, kept (JSON, CSV/TSV) */
    slda_doc_t *docs;       /* files: the documents, looked up ahead */
    uint32_t n, cap;
    slda_err_t end;         /* SLDA_OK, or what ended the reading (EOF, I/O error) */
    char enderr[512];
} text_batch_t;

struct text_ahead_s {
    ahead_mode_t mode;
    text_batch_t b[3];
    int serve, tokd, raw;   /* files: batch served, tokenised, read (indices into b) */
    uint32_t pos;           /* next item of the batch served */
    int started, done;
    uint64_t lineno;        /* the reader's line number after what was read */
    slda_reader_t *rd;
};

void slda_reader_ahead_close(slda_reader_t *rd)
{
    struct text_ahead_s *a = rd->ahead;
    if (!a)
        return;
    for (int k = 0; k < 3; k++) {
        text_batch_t *b = &a->b[k];
        for (uint32_t i = 0; i < b->cap; i++) {
            slda_bag_free(b->bags[i]);
            slda_record_clear(&b->recs[i]);
            free(b->items[i].id);
            if (b->docs)
                slda_doc_clear(&b->docs[i]);
        }
        free(b->bags);
        free(b->recs);
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

/* Room for one more item in b. */
static void batch_grow(slda_reader_t *rd, text_batch_t *b)
{
    if (b->n < b->cap)
        return;
    uint32_t cap = b->cap ? b->cap * 2 : 64;
    b->items = slda_xrealloc(b->items, cap * sizeof *b->items);
    b->bags = slda_xrealloc(b->bags, cap * sizeof *b->bags);
    b->recs = slda_xrealloc(b->recs, cap * sizeof *b->recs);
    b->docs = slda_xrealloc(b->docs, cap * sizeof *b->docs);
    for (uint32_t i = b->cap; i < cap; i++) {
        b->bags[i] = slda_bag_new();
        slda_record_init(&b->recs[i]);
        memcpy(b->recs[i].name, rd->rec.name, sizeof rd->rec.name); /* the roles' fields */
        slda_doc_init(&b->docs[i]);
        b->items[i].id = NULL;
    }
    b->cap = cap;
}

/* Read up to ahead_max records into b: non-blank lines (text, JSON), or
 * records decoded here (CSV/TSV; a rejected one is an item with its error,
 * counted now and reported in its place). */
static void read_batch(slda_reader_t *rd, struct text_ahead_s *a, text_batch_t *b)
{
    b->n = 0;
    b->blen = 0;
    b->end = SLDA_OK;
    rd->lineno = a->lineno;
    while (b->n < rd->ahead_max) {
        batch_grow(rd, b);
        ahead_item_t *it = &b->items[b->n];
        free(it->id);
        *it = (ahead_item_t){.lineno = rd->lineno};
        if (a->mode == AHEAD_RECORD) {
            slda_err_t err = rd->row->next_record(rd, it->msg, sizeof it->msg);
            if (err == SLDA_ERR_EOF || err == SLDA_ERR_IO) {
                b->end = err;
                snprintf(b->enderr, sizeof b->enderr, "%s", it->msg);
                break;
            }
            it->lineno = rd->record_line;
            it->err = err;
            it->reported = err != SLDA_OK;
            if (err == SLDA_OK)
                slda_record_assign(&b->recs[b->n], &rd->rec);
            b->n++;
            continue;
        }
        slda_err_t err = slda_reader_next_nonblank(rd, b->enderr, sizeof b->enderr);
        if (err != SLDA_OK) {
            b->end = err;
            break;
        }
        if (b->blen + rd->linelen + 1 > b->bcap) {
            while (b->blen + rd->linelen + 1 > b->bcap)
                b->bcap = b->bcap ? b->bcap * 2 : 65536;
            b->buf = slda_xrealloc(b->buf, b->bcap);
        }
        memcpy(b->buf + b->blen, rd->line, rd->linelen + 1);
        it->lineno = rd->lineno;
        it->off = b->blen;
        it->len = rd->linelen;
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

/* A worker: decode (JSON), read the time field, tokenise into the item's bag. */
static void tokenize_item(size_t i, uint32_t worker, void *opaque)
{
    tok_job_t *job = opaque;
    ahead_item_t *it = &job->b->items[i];
    (void)worker;
    if (it->err != SLDA_OK)
        return;
    slda_vocab_t *vocab = slda_model_vocab(job->model);
    const slda_tokenizer_t *tok = slda_model_tokenizer(job->model);
    const char *line = job->b->buf + it->off;
    if (job->a->mode == AHEAD_TEXT) {
        it->err = slda_bag_tokenize(tok, slda_vocab_seed(vocab), job->b->bags[i], line, it->len,
                                    it->msg, sizeof it->msg);
    } else {
        slda_record_t *rec = &job->b->recs[i];
        if (job->a->mode == AHEAD_DECODE) {
            slda_record_reset(rec);
            it->err = job->a->rd->row->decode(rec, line, it->len, it->msg, sizeof it->msg);
        }
        if (it->err == SLDA_OK && slda_record_name(rec, SLDA_FIELD_TIME))
            it->err = slda_record_time(rec, &it->ms, it->msg, sizeof it->msg);
        if (it->err == SLDA_OK)
            it->err = slda_record_tokenize(tok, slda_vocab_seed(vocab), rec, job->b->bags[i],
                                           it->msg, sizeof it->msg);
        if (it->err == SLDA_OK)
            it->id = slda_record_id(rec);
    }
    if (it->err == SLDA_OK && job->hint)
        slda_bag_hint(vocab, job->b->bags[i], NULL);
}

/* A record slot whose buffers grew past this (a long record) gives them back once its document
 * is made: the read-ahead keeps three batches of slots, each slot its largest record's buffers
 * otherwise (20 Newsgroups JSON lines: peak RSS 80 MB against 37 MB before the read-ahead). */
#define SLOT_TRIM_BYTES ((size_t)8 << 10)

static void slot_trim(slda_record_t *rec)
{
    if (rec->bcap + (size_t)rec->js.cap * sizeof *rec->js.nodes +
            (size_t)rec->tcap * (sizeof *rec->tokens + sizeof *rec->token_len) > SLOT_TRIM_BYTES)
        slda_record_clear(rec); /* its role names stay */
}

/* What a looked-up document takes from its record besides its words, as slda_record_doc
 * gives it: its authors (model.kind=atm; raw text has none, so an author-topic model refuses
 * its lines unless authors are optional: infer) and the start of its text when the tracker
 * keeps representative documents (rec->keep_text). */
static slda_err_t item_finish(slda_reader_t *rd, const struct text_ahead_s *a,
                              slda_record_t *rec, slda_doc_t *doc, char *msg, size_t n)
{
    if (a->mode != AHEAD_TEXT) {
        rec->authors_optional = rd->rec.authors_optional;
        slda_err_t err = slda_record_authors(rec, rd->model, doc, msg, n);
        if (err != SLDA_OK) { /* a rejected document holds nothing */
            slda_doc_clear(doc);
            slot_trim(rec);
            return err;
        }
        if (rd->rec.keep_text && !doc->text)
            doc->text = slda_record_text(rec);
        if (!doc->group)
            doc->group = slda_record_group(rec);
        slot_trim(rec);
        return SLDA_OK;
    }
    if (slda_model_params(rd->model)->kind != SLDA_KIND_ATM || rd->rec.authors_optional)
        return SLDA_OK;
    slda_doc_clear(doc);
    return slda_set_err(msg, n, SLDA_ERR_PARSE, "raw text names no author (model.kind=atm "
                        "reads authors from JSON or CSV/TSV records: input.author.field)");
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
        if (it->err == SLDA_OK)
            it->err = item_finish(a->rd, a, &t->recs[i], &t->docs[i], it->msg, sizeof it->msg);
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
        if (err == SLDA_OK)
            err = item_finish(rd, a, &b->recs[i], doc, it->msg, sizeof it->msg);
    }
    if (err != SLDA_OK && it->reported) {
        snprintf(errstr, errstr_size, "%s", it->msg);
        return err;
    }
    if (err != SLDA_OK) {
        rd->lineno = it->lineno; /* for the error's path:line */
        err = reject(rd, err, it->msg, errstr, errstr_size);
        rd->lineno = a->lineno;
        return err;
    }
    if (it->id) {
        free(doc->id);
        doc->id = it->id; /* moved */
        it->id = NULL;
    } else {
        slda_reader_set_id(doc, it->lineno);
    }
    doc->time_ms = it->ms;
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

slda_err_t slda_reader_ahead_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                  size_t errstr_size)
{
    struct text_ahead_s *a = rd->ahead;
    if (!a) {
        a = rd->ahead = slda_xcalloc(1, sizeof *a);
        a->rd = rd;
        a->mode = rd->format == SLDA_FORMAT_TEXT ? AHEAD_TEXT
                  : rd->row->decode            ? AHEAD_DECODE
                                               : AHEAD_RECORD;
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
            return slda_reader_ahead_next(rd, doc, errstr, errstr_size);
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

