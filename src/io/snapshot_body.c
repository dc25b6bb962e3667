/* snapshot_body.c - the snapshot's body: blocks of vocabulary rows, then the end marker.
 *
 * A block (docs/snapshot-format.md, "Body") holds at most
 * SLDA_SNAP_BLOCK_ROWS rows: their ids, words, frequencies, ready flags, and
 * the raw lazy-scaled rows as one bin of little-endian float32. Ids increase
 * strictly over the whole body, so a duplicate shows; the end marker gives
 * the row count, which must equal the header's vocab_size and what the
 * blocks held, and nothing may follow it. Words and rows are checked (not
 * empty, no NUL, finite, ready 0 or 1) before they enter the model; the
 * block's arrays borrow from the input.
 */
#include "io/snapshot_priv.h"
#include "text/vocab.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t *slda_model_ids_in_use(const slda_model_t *model, uint32_t *n)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    uint32_t max = slda_vocab_max_id(vocab), count = 0, *ids;
    for (uint32_t id = 0; id < max; id++)
        count += slda_vocab_word(vocab, id) != NULL;
    ids = slda_xmalloc((size_t)count * sizeof *ids);
    count = 0;
    for (uint32_t id = 0; id < max; id++)
        if (slda_vocab_word(vocab, id))
            ids[count++] = id;
    *n = count;
    return ids;
}

/* One body block: ids, words, freqs, ready flags (one byte each) and rows as
 * one bin of n*K LE floats. scratch holds max(K*4, n) bytes. */
void slda_snap_block_write(msgpack_packer *pk, const slda_model_t *model,
                           const uint32_t *ids, uint32_t n, unsigned char *scratch)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    uint32_t K = slda_model_topics(model);
    size_t rowbytes = (size_t)K * 4;
    msgpack_pack_map(pk, 5);
    pack_key(pk, "ids");
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        msgpack_pack_uint32(pk, ids[i]);
    pack_key(pk, "words");
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        pack_key(pk, slda_vocab_word(vocab, ids[i]));
    pack_key(pk, "freqs");
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        msgpack_pack_double(pk, slda_vocab_freq(vocab, ids[i]));
    pack_key(pk, "ready");
    for (uint32_t i = 0; i < n; i++)
        scratch[i] = (unsigned char)slda_model_row_ready(model, ids[i]);
    msgpack_pack_bin_with_body(pk, scratch, n);
    pack_key(pk, "rows");
    msgpack_pack_bin(pk, n * rowbytes);
    for (uint32_t i = 0; i < n; i++) {
        slda_floats_to_le(slda_model_row(model, ids[i]), K, scratch);
        msgpack_pack_bin_body(pk, scratch, rowbytes);
    }
}

/* One body map: a block {"ids","words","freqs","rows": bin} or the end
 * marker {"end": true, "rows": n}. Borrowed pointers into the input. */
typedef struct snap_block_s {
    uint32_t nids, nwords, nfreqs;
    uint32_t *ids;
    const unsigned char **words;
    size_t *wlens;
    double *freqs;
    const unsigned char *rows, *ready;
    size_t rows_len, ready_len;
    int has_rows, is_end;
    uint64_t end_rows;
} snap_block_t;

enum { BK_IDS = 1, BK_WORDS = 2, BK_FREQS = 4, BK_READY = 8, BK_ROWS = 16, BK_END = 32,
       BK_END_ROWS = 64 };

static int block_array(slda_msgpack_t *mp, const char *what, uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    if (*n > SLDA_SNAP_BLOCK_ROWS)
        return slda_msgpack_fail(mp, "%s: %u entries, a block holds at most %d", what, *n,
                                 SLDA_SNAP_BLOCK_ROWS);
    return 0;
}

static int snap_read_block_field(slda_msgpack_t *mp, snap_block_t *b, const unsigned char *key,
                                 size_t len, unsigned *seen)
{
    int bin = slda_msgpack_type(mp) == SLDA_MSGPACK_BIN;
    unsigned bit = slda_msgpack_eq(key, len, "ids") ? BK_IDS
                 : slda_msgpack_eq(key, len, "words") ? BK_WORDS
                 : slda_msgpack_eq(key, len, "freqs") ? BK_FREQS
                 : slda_msgpack_eq(key, len, "end") ? BK_END
                 : slda_msgpack_eq(key, len, "ready") ? BK_READY
                 : slda_msgpack_eq(key, len, "rows") ? (bin ? BK_ROWS : BK_END_ROWS) : 0;
    if (!bit)
        return slda_msgpack_skip(mp, "body value");
    if (*seen & bit)
        return slda_msgpack_fail(mp, "body: duplicate key \"%.*s\"", (int)len, (const char *)key);
    *seen |= bit;
    switch (bit) {
    case BK_IDS:
        if (block_array(mp, "body \"ids\"", &b->nids))
            return -1;
        for (uint32_t i = 0; i < b->nids; i++)
            if (slda_msgpack_u32(mp, "body \"ids\"", &b->ids[i]))
                return -1;
        return 0;
    case BK_WORDS:
        if (block_array(mp, "body \"words\"", &b->nwords))
            return -1;
        for (uint32_t i = 0; i < b->nwords; i++)
            if (slda_msgpack_str(mp, "body \"words\"", &b->words[i], &b->wlens[i]))
                return -1;
        return 0;
    case BK_FREQS:
        if (block_array(mp, "body \"freqs\"", &b->nfreqs))
            return -1;
        for (uint32_t i = 0; i < b->nfreqs; i++)
            if (slda_msgpack_double(mp, "body \"freqs\"", &b->freqs[i]))
                return -1;
        return 0;
    case BK_READY: return slda_msgpack_bin(mp, "body \"ready\"", &b->ready, &b->ready_len);
    case BK_ROWS: return slda_msgpack_bin(mp, "body \"rows\"", &b->rows, &b->rows_len);
    case BK_END:
        if (slda_msgpack_bool(mp, "end marker \"end\"", &b->is_end))
            return -1;
        return b->is_end ? 0 : slda_msgpack_fail(mp, "end marker: \"end\" is false");
    default: return slda_msgpack_uint(mp, "end marker \"rows\"", &b->end_rows);
    }
}

static int snap_read_block(slda_msgpack_t *mp, snap_block_t *b, uint32_t K)
{
    uint32_t n;
    unsigned seen = 0;
    const unsigned need = BK_IDS | BK_WORDS | BK_FREQS | BK_READY | BK_ROWS;
    b->nids = b->nwords = b->nfreqs = 0;
    b->is_end = 0;
    if (slda_msgpack_map(mp, "body block", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        if (slda_msgpack_str(mp, "body key", &key, &len) ||
            snap_read_block_field(mp, b, key, len, &seen))
            return -1;
    }
    if (seen & BK_END) {
        if (seen != (BK_END | BK_END_ROWS))
            return slda_msgpack_fail(mp, "end marker: expected exactly \"end\" and a \"rows\" "
                                     "count");
        return 0;
    }
    if ((seen & need) != need || (seen & BK_END_ROWS))
        return slda_msgpack_fail(mp, "body block: keys ids, words, freqs, ready and rows (binary) "
                                 "are required");
    if (b->nwords != b->nids || b->nfreqs != b->nids)
        return slda_msgpack_fail(mp, "body block: %u ids, %u words, %u freqs", b->nids, b->nwords,
                                 b->nfreqs);
    if (b->ready_len != b->nids)
        return slda_msgpack_fail(mp, "body \"ready\": %zu bytes for %u ids", b->ready_len, b->nids);
    if (b->rows_len != (size_t)b->nids * K * 4)
        return slda_msgpack_fail(mp, "body \"rows\": %zu bytes, expected %zu (%u rows x K=%u x 4)",
                                 b->rows_len, (size_t)b->nids * K * 4, b->nids, K);
    return 0;
}

static int snap_put_row(slda_msgpack_t *mp, slda_model_t *model, const snap_block_t *b,
                        uint32_t i)
{
    char msg[256];
    uint32_t id = b->ids[i], K = slda_model_topics(model);
    const unsigned char *src = b->rows + (size_t)i * K * 4;
    float row[SLDA_MAX_TOPICS];
    int wl = (int)(b->wlens[i] > 40 ? 40 : b->wlens[i]);
    if (b->wlens[i] == 0 || memchr(b->words[i], '\0', b->wlens[i]))
        return slda_msgpack_fail(mp, "body: id %u: the word is empty or holds a NUL byte", id);
    if (!isfinite(b->freqs[i]) || b->freqs[i] < 0)
        return slda_msgpack_fail(mp, "body: id %u: freq %g", id, b->freqs[i]);
    if (b->ready[i] > 1)
        return slda_msgpack_fail(mp, "body: id %u: ready flag %u is not 0 or 1", id, b->ready[i]);
    for (uint32_t k = 0; k < K; k++) {
        uint32_t u = (uint32_t)src[4 * k] | (uint32_t)src[4 * k + 1] << 8 |
                     (uint32_t)src[4 * k + 2] << 16 | (uint32_t)src[4 * k + 3] << 24;
        memcpy(&row[k], &u, sizeof u);
        if (!isfinite(row[k]))
            return slda_msgpack_fail(mp, "body: id %u: row value %u is not finite", id, k);
    }
    if (slda_vocab_put(slda_model_vocab(model), id, (const char *)b->words[i], b->wlens[i],
                       b->freqs[i], msg, sizeof msg) != SLDA_OK)
        return slda_msgpack_fail(mp, "body: id %u (\"%.*s\"): %s", id, wl,
                                 (const char *)b->words[i], msg);
    slda_model_load_row(model, id, row, b->ready[i]);
    return 0;
}

/* Ids must increase strictly across the whole body, so duplicates show. */
static int snap_apply_block(slda_msgpack_t *mp, slda_model_t *model, const snap_block_t *b,
                            int64_t *prev)
{
    for (uint32_t i = 0; i < b->nids; i++) {
        uint32_t id = b->ids[i];
        if (id >= slda_model_rows(model))
            return slda_msgpack_fail(mp, "body: id %u >= W=%u", id, slda_model_rows(model));
        if ((int64_t)id == *prev)
            return slda_msgpack_fail(mp, "body: duplicate id %u", id);
        if ((int64_t)id < *prev)
            return slda_msgpack_fail(mp, "body: id %u after id %" PRId64 " (ids must increase)", id,
                                     *prev);
        if (snap_put_row(mp, model, b, i))
            return -1;
        *prev = id;
    }
    return 0;
}

int slda_snap_body_read(slda_msgpack_t *mp, slda_model_t *model, uint32_t nrows)
{
    snap_block_t b = {0};
    int64_t prev = -1;
    uint64_t total = 0;
    int rc = -1;
    b.ids = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.ids);
    b.words = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.words);
    b.wlens = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.wlens);
    b.freqs = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.freqs);
    for (;;) {
        if (mp->p == mp->end) {
            slda_msgpack_fail(mp, "body: data ends before the end marker");
            goto out;
        }
        if (snap_read_block(mp, &b, slda_model_topics(model)))
            goto out;
        if (b.is_end)
            break;
        if (total + b.nids > nrows) {
            slda_msgpack_fail(mp, "body: more rows than header \"vocab_size\" %u", nrows);
            goto out;
        }
        if (snap_apply_block(mp, model, &b, &prev))
            goto out;
        total += b.nids;
    }
    if (b.end_rows != total || total != nrows)
        slda_msgpack_fail(mp, "end marker: rows %" PRIu64 ", body held %" PRIu64
                          ", header vocab_size %u", b.end_rows, total, nrows);
    else if (mp->p != mp->end)
        slda_msgpack_fail(mp, "%zu bytes after the end marker", slda_msgpack_left(mp));
    else if (slda_vocab_size(slda_model_vocab(model)) != nrows)
        slda_msgpack_fail(mp, "vocabulary holds %u words after loading %u rows",
                          slda_vocab_size(slda_model_vocab(model)), nrows);
    else
        rc = 0;
out:
    free(b.ids);
    free(b.words);
    free(b.wlens);
    free(b.freqs);
    return rc;
}
