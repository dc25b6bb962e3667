/* update_codec.c - update records as bytes: envelope, MessagePack, float32/float16/q8 values.
 *
 * Format (docs/replication.md, "Record format"): "SLDU", uint32 big-endian
 * format version, a MessagePack header map, a MessagePack body map, and a
 * big-endian XXH3-64 (seed 0) of every byte before it. The statistics are
 * float32, float16 or 8 bits per value with a float32 scale per row
 * (slda_update_encode's values argument). Lossy encodings change the values:
 * every replica, the producer included, applies the decoded record.
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
#include "core/msgpack.h"

#include <msgpack.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UPD_MAGIC "SLDU"
#define UPD_MAGIC_LEN 4
#define UPD_VERSION 1u
#define UPD_HEAD_LEN (UPD_MAGIC_LEN + 4)
#define UPD_TRAILER_LEN 8

/* ------------------------------------------------------------------------ */
/* Codec: values                                                             */

/* IEEE binary16, round to nearest even; beyond the largest finite half the
 * value saturates (statistics are finite and >= 0). */
static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x477ff000u) /* rounds to >= 65520, or inf/NaN: largest finite */
        return (uint16_t)(sign | (x > 0x7f800000u ? 0x7e00u : 0x7bffu));
    if (x < 0x33000000u) /* below half the smallest subnormal */
        return (uint16_t)sign;
    uint32_t e = x >> 23;
    if (e < 113) { /* subnormal half */
        uint32_t m = (x & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((e - 112) << 10) | ((x >> 13) & 0x3ffu);
    uint32_t rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    if (e == 31)
        x = sign | 0x7f800000u | (m << 13);
    else
        x = sign | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_f32(unsigned char *p, float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    put_le32(p, x);
}

static float get_f32(const unsigned char *p)
{
    uint32_t x = get_le32(p);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static size_t row_bytes(slda_update_values_t values, uint32_t K)
{
    switch (values) {
    case SLDA_UPDATE_F16: return 2 * (size_t)K;
    case SLDA_UPDATE_Q8: return 4 + (size_t)K;
    default: return 4 * (size_t)K;
    }
}

static void encode_row(unsigned char *p, const float *x, uint32_t K, slda_update_values_t values)
{
    if (values == SLDA_UPDATE_F16) {
        for (uint32_t k = 0; k < K; k++) {
            uint16_t h = f32_to_f16(x[k]);
            p[2 * k] = (unsigned char)h;
            p[2 * k + 1] = (unsigned char)(h >> 8);
        }
    } else if (values == SLDA_UPDATE_Q8) {
        float mx = 0;
        for (uint32_t k = 0; k < K; k++)
            mx = x[k] > mx ? x[k] : mx;
        put_f32(p, mx);
        for (uint32_t k = 0; k < K; k++) {
            float q = mx > 0 && x[k] > 0 ? x[k] / mx * 255.0f + 0.5f : 0.0f;
            p[4 + k] = (unsigned char)(q > 255.0f ? 255 : (unsigned)q);
        }
    } else {
        for (uint32_t k = 0; k < K; k++)
            put_f32(p + 4 * k, x[k]);
    }
}

/* 0, or -1 for a value that is not finite and >= 0. */
static int decode_row(float *x, const unsigned char *p, uint32_t K, slda_update_values_t values)
{
    if (values == SLDA_UPDATE_F16) {
        for (uint32_t k = 0; k < K; k++)
            x[k] = f16_to_f32((uint16_t)(p[2 * k] | p[2 * k + 1] << 8));
    } else if (values == SLDA_UPDATE_Q8) {
        float mx = get_f32(p);
        if (!(mx >= 0) || !isfinite(mx))
            return -1;
        for (uint32_t k = 0; k < K; k++)
            x[k] = p[4 + k] * (mx / 255.0f);
    } else {
        for (uint32_t k = 0; k < K; k++)
            x[k] = get_f32(p + 4 * k);
    }
    for (uint32_t k = 0; k < K; k++)
        if (!(x[k] >= 0) || !isfinite(x[k]))
            return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Codec: writer                                                             */

static void pack_key(msgpack_packer *pk, const char *key)
{
    msgpack_pack_str_with_body(pk, key, strlen(key));
}

static void pack_u32s(msgpack_packer *pk, const uint32_t *v, uint64_t n)
{
    unsigned char *b = slda_xmalloc(4 * n + 1);
    for (uint64_t i = 0; i < n; i++)
        put_le32(b + 4 * i, v[i]);
    msgpack_pack_bin_with_body(pk, b, 4 * n);
    free(b);
}

static void pack_f32s(msgpack_packer *pk, const float *v, uint64_t n)
{
    unsigned char *b = slda_xmalloc(4 * n + 1);
    for (uint64_t i = 0; i < n; i++)
        put_f32(b + 4 * i, v[i]);
    msgpack_pack_bin_with_body(pk, b, 4 * n);
    free(b);
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
    for (int i = 0; i < 4; i++)
        head[UPD_MAGIC_LEN + i] = (unsigned char)(UPD_VERSION >> (8 * (3 - i)));
    msgpack_sbuffer_write(&sb, (const char *)head, UPD_HEAD_LEN);

    /* header */
    msgpack_pack_map(&pk, 9);
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
    size_t rb = row_bytes(values, upd->K);
    unsigned char *rows = slda_xmalloc(rb * upd->nslots + 1);
    for (uint32_t s = 0; s < upd->nslots; s++)
        encode_row(rows + rb * s, upd->stats + (size_t)s * upd->K, upd->K, values);
    msgpack_pack_bin_with_body(&pk, rows, rb * upd->nslots);
    free(rows);
    if (upd->ntheta) {
        pack_key(&pk, "lengths");
        pack_u32s(&pk, upd->lengths, upd->ndocs);
        pack_key(&pk, "ntheta");
        pack_f32s(&pk, upd->ntheta, (uint64_t)upd->ndocs * upd->K);
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

/* A key, then a bin of exactly n 4-byte values. */
static int read_u32s(slda_msgpack_t *mp, const char *key, uint64_t n, uint32_t **out)
{
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, key) || slda_msgpack_bin(mp, key, &s, &len))
        return -1;
    if (len != 4 * n)
        return slda_msgpack_fail(mp, "%s", key);
    *out = slda_xmalloc(4 * n + 4);
    for (uint64_t i = 0; i < n; i++)
        (*out)[i] = get_le32(s + 4 * i);
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
        (*out)[i] = get_f32(s + 4 * i);
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

static int decode_header(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t *values)
{
    uint32_t n;
    uint64_t v;
    if (slda_msgpack_map(mp, "header", &n))
        return -1;
    if (n != 9)
        return slda_msgpack_fail(mp, "header");
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
    return 0;
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
static int decode_stats(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t values)
{
    uint32_t K = upd->K;
    const unsigned char *s;
    size_t len;
    if (expect_key(mp, "slots") || slda_msgpack_bin(mp, "slots", &s, &len))
        return -1;
    if (len % 4 || len / 4 > upd->nwords)
        return slda_msgpack_fail(mp, "slots");
    upd->nslots = (uint32_t)(len / 4);
    upd->slot = slda_xmalloc(len + 4);
    uint8_t *seen = slda_xcalloc(upd->nwords + 1, 1);
    for (uint32_t i = 0; i < upd->nslots; i++) {
        upd->slot[i] = get_le32(s + 4 * i);
        if (upd->slot[i] >= upd->nwords || seen[upd->slot[i]]++) {
            free(seen);
            return slda_msgpack_fail(mp, "slots: word index out of range or repeated");
        }
    }
    free(seen);
    size_t rb = row_bytes(values, K);
    if (expect_key(mp, "stats") || slda_msgpack_bin(mp, "stats", &s, &len))
        return -1;
    if (len != rb * upd->nslots)
        return slda_msgpack_fail(mp, "stats");
    upd->stats = slda_xmalloc(((size_t)upd->nslots * K + 1) * sizeof(float));
    uint64_t wtotal = 0;
    for (uint32_t w = 0; w < upd->nwords; w++)
        wtotal += upd->wcount[w];
    if (wtotal != upd->ntokens)
        return slda_msgpack_fail(mp, "counts: do not add up to the tokens");
    for (uint32_t i = 0; i < upd->nslots; i++) {
        const float *x = upd->stats + (size_t)i * K;
        if (decode_row(upd->stats + (size_t)i * K, s + rb * i, K, values))
            return slda_msgpack_fail(mp, "stats: value not finite and >= 0");
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
static int decode_alpha(slda_msgpack_t *mp, slda_update_t *upd)
{
    uint32_t K = upd->K;
    if (read_u32s(mp, "lengths", upd->ndocs, &upd->lengths) ||
        read_f32s(mp, "ntheta", (uint64_t)upd->ndocs * K, &upd->ntheta))
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
static int decode_births(slda_msgpack_t *mp, slda_update_t *upd)
{
    if (read_f32s(mp, "scores", upd->ndocs, &upd->scores) ||
        read_u32s(mp, "npairs", upd->ndocs, &upd->npairs))
        return -1;
    uint64_t total = 0;
    for (uint32_t i = 0; i < upd->ndocs; i++)
        total += upd->npairs[i];
    if (total > (uint64_t)slda_msgpack_left(mp) / 4)
        return slda_msgpack_fail(mp, "npairs");
    upd->npairs_total = total;
    if (read_u32s(mp, "pword", total, &upd->pword) ||
        read_u32s(mp, "pcount", total, &upd->pcount) || read_f32s(mp, "pw", total, &upd->pw))
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

static int decode_body(slda_msgpack_t *mp, slda_update_t *upd, slda_update_values_t values)
{
    uint32_t nkeys;
    if (slda_msgpack_map(mp, "body", &nkeys))
        return -1;
    if (nkeys != 4 && nkeys != 6 && nkeys != 11)
        return slda_msgpack_fail(mp, "body");
    if (decode_words(mp, upd) || read_u32s(mp, "counts", upd->nwords, &upd->wcount) ||
        decode_stats(mp, upd, values))
        return -1;
    if (nkeys >= 6 && decode_alpha(mp, upd))
        return -1;
    if (nkeys == 11 && decode_births(mp, upd))
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
    if (version != UPD_VERSION)
        return slda_set_err(errstr, errstr_size,
                            version > UPD_VERSION ? SLDA_ERR_VERSION : SLDA_ERR_CORRUPT,
                            "update record: format version %u, this build reads %u", version,
                            UPD_VERSION);
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
    if (decode_header(&mp, upd, &values) || decode_body(&mp, upd, values)) {
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
