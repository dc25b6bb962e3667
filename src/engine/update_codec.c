/* update_codec.c - update records as bytes: envelope, MessagePack header and body, versions 1 and 2.
 *
 * Format (docs/replication.md, "Record format"): "SLDU", uint32 big-endian
 * format version, a MessagePack header map, a MessagePack body map, and a
 * big-endian XXH3-64 (seed 0) of every byte before it. The statistics are
 * float32, float16 or 8 bits per value with a float32 scale per row
 * (slda_update_encode's values argument). Lossy encodings change the values:
 * every replica, the producer included, applies the decoded record.
 * Version 2 (written) codes the integer arrays as varints and each row of
 * the statistics and of ntheta dense or sparse, whichever is shorter
 * (update_rows.c); it decodes to the values version 1 carried. Version 1
 * (u32 arrays, dense rows) is still read.
 *
 * Encoding depends on the record and the values argument only (keys in a
 * fixed order, msgpack-c's smallest encodings), so one record gives the same
 * bytes on every replica. Decoding checks envelope, version and checksum
 * before it parses anything, walks the MessagePack with core/msgpack.c's
 * bounds-checked reader, expects the keys in the writer's order, and checks
 * every index and count against the record's own sizes; anything else is
 * SLDA_ERR_CORRUPT, "update record: <what> at byte <offset>".
 */
#include "engine/update_priv.h"
#include "engine/labels.h"
#include "core/msgpack.h"

#include <msgpack.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UPD_MAGIC "SLDU"
#define UPD_MAGIC_LEN 4
#define UPD_VERSION 3u /* 3 for a record with labels, else 2; 1 to 3 are read */
#define UPD_VERSION_PLAIN 2u
#define UPD_VERSION_MIN 1u
#define UPD_HEAD_LEN (UPD_MAGIC_LEN + 4)
#define UPD_TRAILER_LEN 8

/* ------------------------------------------------------------------------ */
/* Codec: writer                                                             */

static void pack_key(msgpack_packer *pk, const char *key)
{
    msgpack_pack_str_with_body(pk, key, strlen(key));
}

/* Integers as a bin of varints (version 2). */
static void pack_u32s(msgpack_packer *pk, const uint32_t *v, uint64_t n)
{
    upd_buf_t b = {0};
    upd_buf_reserve(&b, 1);
    for (uint64_t i = 0; i < n; i++)
        upd_put_varint(&b, v[i]);
    msgpack_pack_bin_with_body(pk, b.p, b.n);
    free(b.p);
}

static void pack_f32s(msgpack_packer *pk, const float *v, uint64_t n)
{
    unsigned char *b = slda_xmalloc(4 * n + 1);
    for (uint64_t i = 0; i < n; i++)
        upd_put_f32(b + 4 * i, v[i]);
    msgpack_pack_bin_with_body(pk, b, 4 * n);
    free(b);
}

/* nrows rows of K values, each dense or sparse (version 2). */
static void pack_rows(msgpack_packer *pk, const float *x, uint64_t nrows, uint32_t K,
                      slda_update_values_t values)
{
    upd_buf_t b = {0};
    upd_buf_reserve(&b, 1);
    for (uint64_t r = 0; r < nrows; r++)
        upd_put_row(&b, x + r * K, K, values, UPD_VERSION_PLAIN); /* version 3 writes rows so too */
    msgpack_pack_bin_with_body(pk, b.p, b.n);
    free(b.p);
}

static const char *const values_names[] = {"float32", "float16", "q8"};

int slda_update_values_parse(const char *name, slda_update_values_t *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, values_names[i])) {
            *out = (slda_update_values_t)i;
            return 0;
        }
    return -1;
}

slda_err_t slda_update_encode(const slda_update_t *upd, slda_update_values_t values, void **buf,
                              size_t *len, char *errstr, size_t errstr_size)
{
    *buf = NULL;
    *len = 0;
    if (!upd || (unsigned)values > SLDA_UPDATE_Q8)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "update: bad arguments");
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    unsigned char head[UPD_HEAD_LEN];
    memcpy(head, UPD_MAGIC, UPD_MAGIC_LEN);
    /* a record without labels keeps version 2's bytes: replicas of an older build read it */
    uint32_t version = upd->nlabels ? UPD_VERSION : UPD_VERSION_PLAIN;
    for (int i = 0; i < 4; i++)
        head[UPD_MAGIC_LEN + i] = (unsigned char)(version >> (8 * (3 - i)));
    msgpack_sbuffer_write(&sb, (const char *)head, UPD_HEAD_LEN);

    /* header */
    msgpack_pack_map(&pk, upd->nlabels ? 10 : 9);
    pack_key(&pk, "base");
    msgpack_pack_uint64(&pk, upd->base);
    pack_key(&pk, "K");
    msgpack_pack_uint32(&pk, upd->K);
    pack_key(&pk, "tokens");
    msgpack_pack_uint64(&pk, upd->ntokens);
    pack_key(&pk, "docs");
    msgpack_pack_uint32(&pk, upd->ndocs);
    pack_key(&pk, "trained");
    msgpack_pack_uint32(&pk, upd->ntrained);
    pack_key(&pk, "revisit");
    if (upd->revisit)
        msgpack_pack_true(&pk);
    else
        msgpack_pack_false(&pk);
    pack_key(&pk, "marks");
    if (upd->marks)
        msgpack_pack_true(&pk);
    else
        msgpack_pack_false(&pk);
    pack_key(&pk, "values");
    pack_key(&pk, values_names[values]);
    pack_key(&pk, "inputs");
    msgpack_pack_array(&pk, upd->ninputs);
    for (size_t i = 0; i < upd->ninputs; i++) {
        msgpack_pack_array(&pk, 4);
        pack_key(&pk, upd->inputs[i].topic);
        msgpack_pack_int32(&pk, upd->inputs[i].partition);
        msgpack_pack_int64(&pk, upd->inputs[i].from);
        msgpack_pack_int64(&pk, upd->inputs[i].to);
    }
    if (upd->nlabels) { /* version 3: [[slot, text], ...] */
        pack_key(&pk, "labels");
        msgpack_pack_array(&pk, upd->nlabels);
        for (uint32_t i = 0; i < upd->nlabels; i++) {
            msgpack_pack_array(&pk, 2);
            msgpack_pack_uint32(&pk, upd->label_slot[i]);
            pack_key(&pk, upd->label_text[i]);
        }
    }

    /* body */
    msgpack_pack_map(&pk, 4 + (upd->ntheta ? 2 : 0) + (upd->scores ? 5 : 0));
    pack_key(&pk, "words");
    msgpack_pack_array(&pk, upd->nwords);
    for (uint32_t w = 0; w < upd->nwords; w++)
        msgpack_pack_str_with_body(&pk, upd->word[w], upd->wlen[w]);
    pack_key(&pk, "counts");
    pack_u32s(&pk, upd->wcount, upd->nwords);
    pack_key(&pk, "slots");
    pack_u32s(&pk, upd->slot, upd->nslots);
    pack_key(&pk, "stats");
    pack_rows(&pk, upd->stats, upd->nslots, upd->K, values);
    if (upd->ntheta) {
        pack_key(&pk, "lengths");
        pack_u32s(&pk, upd->lengths, upd->ndocs);
        pack_key(&pk, "ntheta");
        pack_rows(&pk, upd->ntheta, upd->ndocs, upd->K, SLDA_UPDATE_F32);
    }
    if (upd->scores) {
        pack_key(&pk, "scores");
        pack_f32s(&pk, upd->scores, upd->ndocs);
        pack_key(&pk, "npairs");
        pack_u32s(&pk, upd->npairs, upd->ndocs);
        pack_key(&pk, "pword");
        pack_u32s(&pk, upd->pword, upd->npairs_total);
        pack_key(&pk, "pcount");
        pack_u32s(&pk, upd->pcount, upd->npairs_total);
        pack_key(&pk, "pw");
        pack_f32s(&pk, upd->pw, upd->npairs_total);
    }
    uint64_t sum = slda_hash64(sb.data, sb.size, 0);
    unsigned char tr[UPD_TRAILER_LEN];
    for (int i = 0; i < 8; i++)
        tr[i] = (unsigned char)(sum >> (8 * (7 - i)));
    msgpack_sbuffer_write(&sb, (const char *)tr, UPD_TRAILER_LEN);
    *len = sb.size;
    *buf = msgpack_sbuffer_release(&sb);
    return SLDA_OK;
}

/* ------------------------------------------------------------------------ */
/* Codec: reader (core/msgpack.c's bounds-checked cursor, no msgpack_unpack) */

/* The key the format puts next: the keys come in a fixed order. */
static int expect_key(slda_msgpack_t *mp, const char *key)
{
    const unsigned char *s;
    size_t n;
    if (slda_msgpack_str(mp, "key", &s, &n))
        return -1;
    if (!slda_msgpack_eq(s, n, key)) {
        mp->p = s; /* point at the key */
        return slda_msgpack_fail(mp, "expected key \"%s\"", key);
    }
    return 0;
}

/* A key, then a bin of exactly n integers: 4-byte little-endian (version 1)
 * or varints (version 2). */
static int read_u32s(slda_msgpack_t *mp, const char *key, uint64_t n, uint32_t **out,
                     int version)
{
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, key) || slda_msgpack_bin(mp, key, &s, &len))
        return -1;
    if (version == 1 ? len != 4 * n : n > len)
        return slda_msgpack_fail(mp, "%s", key);
    *out = slda_xmalloc(4 * n + 4);
    const unsigned char *p = s, *end = s + len;
    for (uint64_t i = 0; i < n; i++) {
        if (version == 1)
            (*out)[i] = upd_get_le32(s + 4 * i);
        else if (upd_get_varint(&p, end, &(*out)[i]))
            return slda_msgpack_fail(mp, "%s: bad varint", key);
    }
    if (version >= 2 && p != end)
        return slda_msgpack_fail(mp, "%s: bytes after the last value", key);
    return 0;
}

/* Decoded rows of a record at most this many values (1 GiB): version 2's
 * sparse rows could otherwise ask a few bytes for gigabytes. */
#define UPD_MAX_VALUES ((uint64_t)1 << 28)

/* A key, then a bin of exactly nrows rows of K values (update_rows.c). */
static int read_rows(slda_msgpack_t *mp, const char *key, uint64_t nrows, uint32_t K,
                     slda_update_values_t values, int version, float **out)
{
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, key) || slda_msgpack_bin(mp, key, &s, &len))
        return -1;
    if (version == 1 ? len != upd_dense_bytes(values, K) * nrows : nrows > len)
        return slda_msgpack_fail(mp, "%s", key);
    if (nrows * K > UPD_MAX_VALUES)
        return slda_msgpack_fail(mp, "%s: %" PRIu64 " rows of %u values, more than %" PRIu64,
                                 key, nrows, K, UPD_MAX_VALUES);
    *out = slda_xmalloc((nrows * K + 1) * sizeof(float));
    const unsigned char *p = s, *end = s + len;
    for (uint64_t r = 0; r < nrows; r++) {
        const char *why = upd_get_row(&p, end, *out + r * K, K, values, version);
        if (why) {
            mp->p = s;
            return slda_msgpack_fail(mp, "%s: %s (row %" PRIu64 ")", key, why, r);
        }
    }
    if (p != end)
        return slda_msgpack_fail(mp, "%s: bytes after the last row", key);
    return 0;
}

static int read_f32s(slda_msgpack_t *mp, const char *key, uint64_t n, float **out)
{
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, key) || slda_msgpack_bin(mp, key, &s, &len))
        return -1;
    if (len != 4 * n)
        return slda_msgpack_fail(mp, "%s", key);
    *out = slda_xmalloc(4 * n + 4);
    for (uint64_t i = 0; i < n; i++) {
        (*out)[i] = upd_get_f32(s + 4 * i);
        if (!isfinite((*out)[i]))
            return slda_msgpack_fail(mp, "%s", key);
    }
    return 0;
}

/* One [topic, partition, from, to] of "inputs". */
static int decode_input(slda_msgpack_t *mp, slda_update_t *upd)
{
    const unsigned char *s;
    size_t len;
    uint32_t four;
    int64_t part, from, to;
    if (slda_msgpack_array(mp, "input", &four))
        return -1;
    if (four != 4)
        return slda_msgpack_fail(mp, "input");
    if (slda_msgpack_str(mp, "input topic", &s, &len))
        return -1;
    if (len > UPD_TOPIC_MAX || memchr(s, 0, len))
        return slda_msgpack_fail(mp, "input");
    if (slda_msgpack_int(mp, "input partition", &part))
        return -1;
    if (part < INT32_MIN || part > INT32_MAX)
        return slda_msgpack_fail(mp, "input");
    if (slda_msgpack_int(mp, "input from", &from) || slda_msgpack_int(mp, "input to", &to))
        return -1;
    if (from > to)
        return slda_msgpack_fail(mp, "input");
    upd_input_t *in = &upd->inputs[upd->ninputs++];
    in->topic = slda_xstrndup((const char *)s, len);
    in->partition = (int32_t)part;
    in->from = from;
    in->to = to;
    return 0;
}

/* "labels" (version 3): [slot, text] pairs, each slot below K and each text a label's
 * (labels.c's rules; "" removes one). */
static int decode_labels(slda_msgpack_t *mp, slda_update_t *upd)
{
    uint32_t n, two;
    if (expect_key(mp, "labels") || slda_msgpack_array(mp, "labels", &n))
        return -1;
    if (!n || n > slda_msgpack_left(mp) / 3)
        return slda_msgpack_fail(mp, "labels");
    upd->label_slot = slda_xcalloc(n, sizeof *upd->label_slot);
    upd->label_text = slda_xcalloc(n, sizeof *upd->label_text);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k;
        const unsigned char *s;
        size_t len;
        char why[200];
        if (slda_msgpack_array(mp, "label", &two))
            return -1;
        if (two != 2)
            return slda_msgpack_fail(mp, "label");
        if (slda_msgpack_uint(mp, "label topic", &k) || slda_msgpack_str(mp, "label text", &s, &len))
            return -1;
        if (k >= upd->K || len > SLDA_LABEL_MAX || memchr(s, 0, len))
            return slda_msgpack_fail(mp, "label");
        upd->label_slot[i] = (uint32_t)k;
        upd->label_text[i] = slda_xstrndup((const char *)s, len);
        upd->nlabels++;
        if (slda_label_check(upd->label_text[i], why, sizeof why))
            return slda_msgpack_fail(mp, "label text");
    }
    return 0;
}

static int decode_header(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t *values,
                         int version)
{
    uint32_t n;
    uint64_t v;
    if (slda_msgpack_map(mp, "header", &n))
        return -1;
    if (n != 9 && (n != 10 || version < 3))
        return slda_msgpack_fail(mp, "header");
    int labels = n == 10;
    if (expect_key(mp, "base") || slda_msgpack_uint(mp, "base", &upd->base))
        return -1;
    if (expect_key(mp, "K") || slda_msgpack_uint(mp, "K", &v))
        return -1;
    if (v < 1 || v > SLDA_MAX_TOPICS)
        return slda_msgpack_fail(mp, "K out of range");
    upd->K = (uint32_t)v;
    if (expect_key(mp, "tokens") || slda_msgpack_uint(mp, "tokens", &upd->ntokens))
        return -1;
    if (expect_key(mp, "docs") || slda_msgpack_uint(mp, "docs", &v))
        return -1;
    if (v > UINT32_MAX)
        return slda_msgpack_fail(mp, "docs");
    upd->ndocs = (uint32_t)v;
    if (expect_key(mp, "trained") || slda_msgpack_uint(mp, "trained", &v))
        return -1;
    if (v > upd->ndocs)
        return slda_msgpack_fail(mp, "trained");
    upd->ntrained = (uint32_t)v;
    if (expect_key(mp, "revisit") || slda_msgpack_bool(mp, "revisit", &upd->revisit) ||
        expect_key(mp, "marks") || slda_msgpack_bool(mp, "marks", &upd->marks))
        return -1;
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, "values") || slda_msgpack_str(mp, "values", &s, &len))
        return -1;
    int found = 0;
    for (int i = 0; i < 3; i++)
        if (slda_msgpack_eq(s, len, values_names[i])) {
            *values = (slda_update_values_t)i;
            found = 1;
        }
    if (!found)
        return slda_msgpack_fail(mp, "unknown values encoding");
    if (expect_key(mp, "inputs") || slda_msgpack_array(mp, "inputs", &n))
        return -1;
    upd->inputs = slda_xcalloc((size_t)n + 1, sizeof *upd->inputs);
    for (uint32_t i = 0; i < n; i++)
        if (decode_input(mp, upd))
            return -1;
    return labels ? decode_labels(mp, upd) : 0;
}

/* "words": non-empty strings without NUL bytes. */
static int decode_words(slda_msgpack_t *mp, slda_update_t *upd)
{
    uint32_t n;
    if (expect_key(mp, "words") || slda_msgpack_array(mp, "words", &n))
        return -1;
    upd->word = slda_xcalloc((size_t)n + 1, sizeof *upd->word);
    upd->wlen = slda_xcalloc((size_t)n + 1, sizeof *upd->wlen);
    for (uint32_t w = 0; w < n; w++) {
        const unsigned char *s;
        size_t len;
        if (slda_msgpack_str(mp, "word", &s, &len))
            return -1;
        if (len == 0 || len > UINT32_MAX || memchr(s, 0, len))
            return slda_msgpack_fail(mp, "word");
        upd->word[w] = slda_xstrndup((const char *)s, len);
        upd->wlen[w] = (uint32_t)len;
        upd->nwords++;
    }
    return 0;
}

/* "slots" (distinct word indexes) and "stats" (one row per slot). */
static int decode_stats(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t values,
                        int version)
{
    uint32_t K = upd->K;
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, "slots") || slda_msgpack_bin(mp, "slots", &s, &len))
        return -1;
    if (version == 1 ? len % 4 || len / 4 > upd->nwords : len > 5 * (size_t)upd->nwords)
        return slda_msgpack_fail(mp, "slots");
    upd->slot = slda_xmalloc(4 * (size_t)upd->nwords + 4);
    uint8_t *seen = slda_xcalloc(upd->nwords + 1, 1);
    const unsigned char *p = s, *end = s + len;
    while (version == 1 ? upd->nslots < len / 4 : p < end) {
        uint32_t w = 0;
        if (version == 1)
            w = upd_get_le32(s + 4 * upd->nslots);
        else if (upd_get_varint(&p, end, &w))
            w = UINT32_MAX;
        if (w >= upd->nwords || seen[w]++) {
            free(seen);
            return slda_msgpack_fail(mp, "slots: word index out of range or repeated");
        }
        upd->slot[upd->nslots++] = w;
    }
    free(seen);
    uint64_t wtotal = 0;
    for (uint32_t w = 0; w < upd->nwords; w++)
        wtotal += upd->wcount[w];
    if (wtotal != upd->ntokens)
        return slda_msgpack_fail(mp, "counts: do not add up to the tokens");
    if (read_rows(mp, "stats", upd->nslots, K, values, version, &upd->stats))
        return -1;
    for (uint32_t i = 0; i < upd->nslots; i++) {
        const float *x = upd->stats + (size_t)i * K;
        /* a word's statistics sum to its tokens in the trained documents (q8
         * rounding moves the sum by up to K/510 of the row's largest value) */
        double sum = 0;
        for (uint32_t k = 0; k < K; k++)
            sum += x[k];
        if (sum > 2.0 * upd->wcount[upd->slot[i]] + 1.0)
            return slda_msgpack_fail(mp, "stats: a row over its word's count");
    }
    return 0;
}

/* "lengths" and "ntheta" (alpha learning or births). */
static int decode_alpha(slda_msgpack_t *mp, slda_update_t *upd, int version)
{
    uint32_t K = upd->K;
    if (read_u32s(mp, "lengths", upd->ndocs, &upd->lengths, version) ||
        read_rows(mp, "ntheta", upd->ndocs, K, SLDA_UPDATE_F32, version, &upd->ntheta))
        return -1;
    /* the lengths add up to the tokens; a document's counts to about its length */
    uint64_t total = 0;
    for (uint32_t i = 0; i < upd->ndocs; i++) {
        double sum = 0;
        for (uint32_t k = 0; k < K; k++) {
            float v = upd->ntheta[(size_t)i * K + k];
            if (!(v >= 0))
                return slda_msgpack_fail(mp, "ntheta: negative count");
            sum += v;
        }
        if (sum > upd->lengths[i] * 1.001 + 0.01)
            return slda_msgpack_fail(mp, "ntheta: counts over the document's length");
        total += upd->lengths[i];
    }
    if (total != upd->ntokens)
        return slda_msgpack_fail(mp, "lengths: do not add up to the tokens");
    return 0;
}

/* "scores", "npairs", "pword", "pcount", "pw" (births). */
static int decode_births(slda_msgpack_t *mp, slda_update_t *upd, int version)
{
    if (read_f32s(mp, "scores", upd->ndocs, &upd->scores) ||
        read_u32s(mp, "npairs", upd->ndocs, &upd->npairs, version))
        return -1;
    uint64_t total = 0;
    for (uint32_t i = 0; i < upd->ndocs; i++)
        total += upd->npairs[i];
    if (total > (uint64_t)slda_msgpack_left(mp) / (version == 1 ? 4 : 2))
        return slda_msgpack_fail(mp, "npairs");
    upd->npairs_total = total;
    if (read_u32s(mp, "pword", total, &upd->pword, version) ||
        read_u32s(mp, "pcount", total, &upd->pcount, version) ||
        read_f32s(mp, "pw", total, &upd->pw))
        return -1;
    for (uint64_t i = 0; i < total; i++)
        if (upd->pword[i] >= upd->nwords || upd->pcount[i] == 0 || !(upd->pw[i] > 0) ||
            upd->pw[i] > 1.001f)
            return slda_msgpack_fail(mp, "pword/pcount/pw: out of range");
    for (uint32_t i = 0; i < upd->ndocs; i++)
        if (upd->scores[i] > 0)
            return slda_msgpack_fail(mp, "scores: a log-likelihood above 0");
    /* each document's pairs name distinct words and sum to its length */
    uint64_t off = 0;
    for (uint32_t i = 0; i < upd->ndocs; i++) {
        uint64_t sum = 0;
        for (uint32_t u = 0; u < upd->npairs[i]; u++)
            sum += upd->pcount[off + u];
        if (sum != upd->lengths[i])
            return slda_msgpack_fail(mp, "pcount: counts do not sum to the document's length");
        off += upd->npairs[i];
    }
    return 0;
}

static int decode_body(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t values,
                       int version)
{
    uint32_t nkeys;
    if (slda_msgpack_map(mp, "body", &nkeys))
        return -1;
    if (nkeys != 4 && nkeys != 6 && nkeys != 11)
        return slda_msgpack_fail(mp, "body");
    if (decode_words(mp, upd) ||
        read_u32s(mp, "counts", upd->nwords, &upd->wcount, version) ||
        decode_stats(mp, upd, values, version))
        return -1;
    if (nkeys >= 6 && decode_alpha(mp, upd, version))
        return -1;
    if (nkeys == 11 && decode_births(mp, upd, version))
        return -1;
    if (slda_msgpack_left(mp))
        return slda_msgpack_fail(mp, "bytes after the body");
    return 0;
}

slda_err_t slda_update_decode(const void *buf, size_t len, slda_update_t **out, char *errstr,
                              size_t errstr_size)
{
    const unsigned char *b = buf;
    *out = NULL;
    if (!buf || len < UPD_HEAD_LEN + UPD_TRAILER_LEN)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TRUNCATED,
                            "update record: %zu bytes, shorter than the envelope", len);
    if (memcmp(b, UPD_MAGIC, UPD_MAGIC_LEN))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "update record: bad magic (not an update record)");
    uint32_t version = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
    if (version < UPD_VERSION_MIN || version > UPD_VERSION)
        return slda_set_err(errstr, errstr_size,
                            version > UPD_VERSION ? SLDA_ERR_VERSION : SLDA_ERR_CORRUPT,
                            "update record: format version %u, this build reads %u to %u",
                            version, UPD_VERSION_MIN, UPD_VERSION);
    uint64_t want = 0, have = slda_hash64(b, len - UPD_TRAILER_LEN, 0);
    for (int i = 0; i < 8; i++)
        want = want << 8 | b[len - UPD_TRAILER_LEN + i];
    if (want != have)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "update record: checksum %016" PRIx64 ", computed %016" PRIx64,
                            want, have);
    slda_msgpack_t mp;
    slda_msgpack_init(&mp, b, UPD_HEAD_LEN, len - UPD_TRAILER_LEN, "update record: ", errstr,
                      errstr_size);
    slda_update_t *upd = slda_xcalloc(1, sizeof *upd);
    slda_update_values_t values = SLDA_UPDATE_F32;
    if (decode_header(&mp, upd, &values, (int)version) ||
        decode_body(&mp, upd, values, (int)version)) {
        slda_update_destroy(upd);
        return SLDA_ERR_CORRUPT;
    }
    if (upd->scores && upd->revisit) {
        slda_update_destroy(upd);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "update record: a second visit with births inputs");
    }
    *out = upd;
    return SLDA_OK;
}
