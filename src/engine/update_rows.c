/* update_rows.c - update records' rows and integers as bytes: values, varints, dense or sparse rows.
 *
 * update_codec.c frames a record; this file holds what its arrays look like
 * (docs/replication.md, "Record format"):
 *   - values: float32 (exact), float16 (binary16, round to nearest even) or
 *     q8 (a float32 scale m, the row's largest value, then one byte q per
 *     value: x = q * (m / 255));
 *   - integers (version 2): unsigned LEB128 varints, at most 5 bytes and
 *     minimal (a last byte of 0 after others is refused), <= 2^32 - 1;
 *   - rows (version 2): a varint form, then form 0: K values (the dense
 *     row); form 1: a bitmap of ceil(K / 8) bytes (topic k: bit k % 8 of
 *     byte k / 8; the bits past K are 0), the listed topics, then their
 *     values; form >= 2: form - 2 listed topics as varint gaps (the first
 *     topic itself, then each minus the one before minus 1: strictly
 *     increasing, < K), then their values (q8: the scale before the values).
 *     A topic is listed when its value does not encode to all zero bits, so
 *     a sparse row decodes to the very values the dense one does; the writer
 *     takes the shortest form (a tie: dense, then bitmap).
 *     Version 1 rows are the dense values without the varint.
 * slda_update_thin makes rows sparser by rounding their small values
 * (below a share of the row's sum) to a common unit without bias.
 *
 * Everything here is a pure function of its arguments; readers check every
 * byte count against the bytes they hold before reading.
 */
#include "engine/update_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Values                                                                    */

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

void upd_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t upd_get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void upd_put_f32(unsigned char *p, float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    upd_put_le32(p, x);
}

float upd_get_f32(const unsigned char *p)
{
    uint32_t x = upd_get_le32(p);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static size_t value_bytes(slda_update_values_t values)
{
    return values == SLDA_UPDATE_F16 ? 2 : values == SLDA_UPDATE_Q8 ? 1 : 4;
}

/* Bytes of a version-1 row: its K values, q8's scale included. */
size_t upd_dense_bytes(slda_update_values_t values, uint32_t K)
{
    return (values == SLDA_UPDATE_Q8 ? 4 : 0) + value_bytes(values) * (size_t)K;
}

/* The code of x (scale: q8's m), as stored: 0 bits decode to 0. */
static uint32_t value_code(float x, float scale, slda_update_values_t values)
{
    if (values == SLDA_UPDATE_F16)
        return f32_to_f16(x);
    if (values == SLDA_UPDATE_Q8) {
        float q = scale > 0 && x > 0 ? x / scale * 255.0f + 0.5f : 0.0f;
        return q > 255.0f ? 255 : (unsigned)q;
    }
    uint32_t bits;
    memcpy(&bits, &x, 4);
    return bits;
}

static float value_of(const unsigned char *p, float scale, slda_update_values_t values)
{
    if (values == SLDA_UPDATE_F16)
        return f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    if (values == SLDA_UPDATE_Q8)
        return p[0] * (scale / 255.0f);
    return upd_get_f32(p);
}

static void put_code(unsigned char *p, uint32_t code, slda_update_values_t values)
{
    for (size_t i = 0; i < value_bytes(values); i++)
        p[i] = (unsigned char)(code >> (8 * i));
}

/* ------------------------------------------------------------------------ */
/* Varints and the byte buffer                                               */

void upd_buf_reserve(upd_buf_t *b, size_t more)
{
    if (b->n + more <= b->cap)
        return;
    b->cap = b->cap ? 2 * b->cap : 256;
    while (b->cap < b->n + more)
        b->cap *= 2;
    b->p = slda_xrealloc(b->p, b->cap);
}

void upd_put_varint(upd_buf_t *b, uint32_t v)
{
    upd_buf_reserve(b, 5);
    while (v >= 0x80) {
        b->p[b->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b->p[b->n++] = (unsigned char)v;
}

static size_t varint_len(uint32_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

int upd_get_varint(const unsigned char **p, const unsigned char *end, uint32_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 5; i++) {
        if (*p == end)
            return -1;
        unsigned char c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            if ((i > 0 && c == 0) || x > UINT32_MAX) /* not minimal, or too large */
                return -1;
            *v = (uint32_t)x;
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                      */

/* The topics listed (codes not 0) and the bytes of their gaps. */
static uint32_t count_listed(const float *x, uint32_t K, float scale,
                             slda_update_values_t values, size_t *gap_bytes)
{
    uint32_t listed = 0, prev = 0;
    *gap_bytes = 0;
    for (uint32_t k = 0; k < K; k++)
        if (value_code(x[k], scale, values)) {
            *gap_bytes += varint_len(listed ? k - prev - 1 : k);
            prev = k;
            listed++;
        }
    return listed;
}

void upd_put_row(upd_buf_t *b, const float *x, uint32_t K, slda_update_values_t values,
                 int version)
{
    float scale = 0;
    if (values == SLDA_UPDATE_Q8)
        for (uint32_t k = 0; k < K; k++)
            scale = x[k] > scale ? x[k] : scale;
    size_t vb = value_bytes(values), head = values == SLDA_UPDATE_Q8 ? 4 : 0, gaps = 0;
    uint32_t listed = version >= 2 ? count_listed(x, K, scale, values, &gaps) : K;
    /* version 2: the shortest of dense (c = 0), bitmap (c = 1) and gaps (c = listed + 2) */
    size_t dense = 1 + head + vb * (size_t)K, bitmap = 1 + ((size_t)K + 7) / 8 + head + vb * listed;
    size_t sparse = varint_len(listed + 2) + gaps + head + vb * listed;
    uint32_t form = 0;
    if (version >= 2 && bitmap < dense && bitmap <= sparse)
        form = 1;
    else if (version >= 2 && sparse < dense)
        form = listed + 2;
    if (version >= 2)
        upd_put_varint(b, form);
    upd_buf_reserve(b, dense + ((size_t)K + 7) / 8 + gaps);
    if (form == 1) {
        unsigned char *bits = b->p + b->n;
        memset(bits, 0, ((size_t)K + 7) / 8);
        for (uint32_t k = 0; k < K; k++)
            if (value_code(x[k], scale, values))
                bits[k / 8] |= (unsigned char)(1u << (k % 8));
        b->n += ((size_t)K + 7) / 8;
    } else if (form) {
        uint32_t prev = 0, n = 0;
        for (uint32_t k = 0; k < K; k++)
            if (value_code(x[k], scale, values)) {
                upd_put_varint(b, n++ ? k - prev - 1 : k);
                prev = k;
            }
    }
    if (head) {
        upd_put_f32(b->p + b->n, scale);
        b->n += 4;
    }
    for (uint32_t k = 0; k < K; k++) {
        uint32_t code = value_code(x[k], scale, values);
        if (code || !form) {
            put_code(b->p + b->n, code, values);
            b->n += vb;
        }
    }
}

/* The listed topics of a bitmap (form 1) or gaps (form >= 2) row into idx; their count, or
 * -1 with *why. */
static int64_t get_listed(const unsigned char **p, const unsigned char *end, uint32_t form,
                          uint32_t K, uint32_t *idx, const char **why)
{
    uint32_t n = 0;
    if (form == 1) {
        size_t nb = ((size_t)K + 7) / 8;
        if ((size_t)(end - *p) < nb) {
            *why = "row: cut short";
            return -1;
        }
        for (uint32_t k = 0; k < K; k++)
            if ((*p)[k / 8] >> (k % 8) & 1)
                idx[n++] = k;
        if (K % 8 && (*p)[nb - 1] >> (K % 8)) {
            *why = "row: topic out of range";
            return -1;
        }
        *p += nb;
        return n;
    }
    for (; n < form - 2; n++) {
        uint32_t gap;
        if (upd_get_varint(p, end, &gap)) {
            *why = "row: bad topic";
            return -1;
        }
        uint64_t k = n ? (uint64_t)idx[n - 1] + 1 + gap : gap;
        if (k >= K) {
            *why = "row: topic out of range";
            return -1;
        }
        idx[n] = (uint32_t)k;
    }
    return n;
}

const char *upd_get_row(const unsigned char **p, const unsigned char *end, float *x, uint32_t K,
                        slda_update_values_t values, int version)
{
    size_t vb = value_bytes(values);
    uint32_t form = 0, n = K;
    const char *why = NULL;
    if (version >= 2 && upd_get_varint(p, end, &form))
        return "row: bad form";
    if (form >= 2 && form - 2 > K)
        return "row: more entries than topics";
    uint32_t *idx = NULL;
    if (form) {
        memset(x, 0, K * sizeof *x);
        idx = slda_xmalloc(((size_t)K + 1) * sizeof *idx);
        int64_t got = get_listed(p, end, form, K, idx, &why);
        if (got < 0) {
            free(idx);
            return why;
        }
        n = (uint32_t)got;
    }
    size_t need = (values == SLDA_UPDATE_Q8 ? 4 : 0) + vb * (size_t)n;
    if ((size_t)(end - *p) < need) {
        free(idx);
        return "row: cut short";
    }
    float scale = 0;
    if (values == SLDA_UPDATE_Q8) {
        scale = upd_get_f32(*p);
        *p += 4;
        if (!(scale >= 0) || !isfinite(scale)) {
            free(idx);
            return "row: q8 scale not finite and >= 0";
        }
    }
    for (uint32_t i = 0; i < n; i++, *p += vb) {
        float v = value_of(*p, scale, values);
        if (!(v >= 0) || !isfinite(v)) {
            free(idx);
            return "value not finite and >= 0";
        }
        x[idx ? idx[i] : i] = v;
    }
    free(idx);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Thinning                                                                  */

/* One row: the values under share * the row's sum (R in all) become 0 or the
 * unit u = R / m, m = max(1, floor(R / (share * sum))), each with chance
 * x / u <= 1, chosen by systematic sampling (one uniform offset, points u
 * apart): E[new x] = x for every topic, exactly m values become u, so the
 * row's sum is kept (to float rounding). */
static void thin_row(float *x, uint32_t K, double share, slda_rng_t *rng)
{
    double sum = 0, small = 0;
    for (uint32_t k = 0; k < K; k++)
        sum += x[k];
    double cut = share * sum;
    uint32_t nsmall = 0;
    for (uint32_t k = 0; k < K; k++)
        if (x[k] > 0 && x[k] < cut) {
            small += x[k];
            nsmall++;
        }
    if (nsmall < 2 || !(small > 0))
        return;
    double m = floor(small / cut);
    if (m < 1)
        m = 1;
    if (m >= nsmall)
        return; /* as many units as values: nothing to gain */
    double u = small / m, point = slda_rng_double(rng) * u, acc = 0;
    float uf = (float)u;
    for (uint32_t k = 0; k < K; k++) {
        if (!(x[k] > 0 && x[k] < cut))
            continue;
        acc += x[k];
        if (point < acc) { /* x <= u: at most one point falls in [acc - x, acc) */
            x[k] = uf;
            point += u;
        } else {
            x[k] = 0;
        }
    }
}

void slda_update_thin(slda_update_t *upd, double share)
{
    if (!upd || !(share > 0))
        return;
    if (share > 0.5)
        share = 0.5;
    for (uint32_t s = 0; s < upd->nslots; s++) {
        uint32_t w = upd->slot[s];
        slda_rng_t rng; /* a function of the record: every encoding of it agrees */
        slda_rng_seed3(&rng, upd->base, upd->ntokens,
                       slda_hash64(upd->word[w], upd->wlen[w], 0x7468696e));
        thin_row(upd->stats + (size_t)s * upd->K, upd->K, share, &rng);
    }
}
