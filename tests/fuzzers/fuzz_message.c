/* fuzz_message.c - fuzz target: slda_doc_from_message, one Kafka message value -> document.
 *
 * Input: byte 0 is a control byte, the rest the message value.
 *   bits 0-1  input format: auto, text, json, msgpack (slda_infmt_t order)
 *   bit 2     fixed vocabulary (12 words) instead of an open one of 16 ids
 *   bits 3-4  message key: none, "key-1", "\xff\xfe" (not UTF-8), "k\0y" (NUL)
 *   bit 5     input.max.bytes = 48 (else no limit)
 *   bit 6     stop words "smart" (else "none")
 *   bit 7     text.min.length 3 (else 1)
 * Checked for every input:
 *   - SLDA_OK gives a valid document (fuzzutil.h: sorted unique ids in use,
 *     ids < vocabulary capacity, counts >= 1, ntokens = sum of counts, id
 *     UTF-8); a failure is one of the documented codes, with a message, and
 *     leaves the document empty; a value over max_bytes is SLDA_ERR_TOO_LARGE;
 *   - with the "text" format, the id is the key when the key is usable and
 *     NULL otherwise, and the pairs are exactly the tokenizer's tokens counted
 *     through the vocabulary;
 *   - when no word was dropped (fixed vocabulary, or an open one that never
 *     filled), decoding again gives the same document, and "auto" gives what
 *     the format it sniffs (JSON object, MessagePack map, else text) gives.
 * The open-vocabulary model is rebuilt for every input so a finding never
 * depends on earlier inputs; fixed-vocabulary models are cached (their ids
 * never change).
 */
#include "fuzzutil.h"
#include "core/json.h"
#include "text/tokenize.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <stdlib.h>
#include <string.h>

#define OPEN_CAPACITY 16 /* the smallest vocab.capacity: eviction comes soon */
#define MAX_BYTES 48
#define MP_MAX_DEPTH 16  /* docmsg.c's nesting bound for MessagePack */

static const char *const fixed_words[] = {"stock", "market", "fell", "caf\xc3\xa9", "a",
                                          "ab", "x", "apple", "banana", "\xe6\x9d\xb1\xe4\xba\xac",
                                          "text", "tokens"};
#define NFIXED (sizeof fixed_words / sizeof fixed_words[0])

static const struct {
    const char *key;
    size_t len;
    int usable; /* non-empty UTF-8 without NUL */
} keys[4] = {{NULL, 0, 0}, {"key-1", 5, 1}, {"\xff\xfe", 2, 0}, {"k\0y", 3, 0}};

typedef struct result_s {
    slda_err_t err;
    slda_doc_t doc;
    char msg[512];
} result_t;

static void decode(slda_model_t *model, slda_infmt_t fmt, const uint8_t *val, size_t len,
                   unsigned key, uint32_t max_bytes, result_t *r)
{
    r->msg[0] = '\0';
    r->err = slda_doc_from_message(model, fmt, val, len, keys[key].key, keys[key].len, max_bytes,
                                   &r->doc, r->msg, sizeof r->msg);
    slda_vocab_new_epoch(model->vocab); /* one message per minibatch */
}

static void check_result(const slda_model_t *model, const result_t *r, const char *what)
{
    if (r->err == SLDA_OK) {
        slda_fuzz_check_doc(model, &r->doc, what);
        return;
    }
    FUZZ_ASSERT(r->err == SLDA_ERR_PARSE || r->err == SLDA_ERR_UTF8 || r->err == SLDA_ERR_EMPTY ||
                    r->err == SLDA_ERR_TOO_LARGE,
                "%s: undocumented error %s: %s", what, slda_err_name(r->err), r->msg);
    FUZZ_ASSERT(r->msg[0] != '\0', "%s: %s without a message", what, slda_err_name(r->err));
    slda_fuzz_check_empty_doc(&r->doc, what);
}

static void check_same(const result_t *a, const result_t *b, const char *what)
{
    FUZZ_ASSERT(a->err == b->err, "%s: %s (%s) then %s (%s)", what, slda_err_name(a->err), a->msg,
                slda_err_name(b->err), b->msg);
    FUZZ_ASSERT(slda_fuzz_docs_equal(&a->doc, &b->doc),
                "%s: documents differ (%u pairs / %u tokens, then %u / %u)", what, a->doc.npairs,
                a->doc.ntokens, b->doc.npairs, b->doc.ntokens);
}

/* ---- text: the pairs are the tokenizer's tokens through the vocabulary ---- */

typedef struct count_ctx_s {
    const slda_vocab_t *vocab;
    slda_doc_t *doc;
} count_ctx_t;

static void count_token(const char *tok, size_t len, void *opaque)
{
    count_ctx_t *ctx = opaque;
    uint32_t id = slda_vocab_find(ctx->vocab, tok, len);
    if (id != UINT32_MAX)
        slda_doc_add(ctx->doc, id, 1);
}

static void check_text_pairs(const slda_model_t *model, const uint8_t *val, size_t len,
                             const result_t *r)
{
    slda_doc_t want;
    count_ctx_t ctx = {model->vocab, &want};
    char err[512];
    slda_doc_init(&want);
    if (slda_tokenize(model->tok, (const char *)val, len, count_token, &ctx, err, sizeof err) !=
        SLDA_OK) {
        FUZZ_ASSERT(r->err == SLDA_ERR_UTF8, "text the tokenizer refuses gave %s",
                    slda_err_name(r->err));
        return;
    }
    slda_doc_finish(&want);
    if (want.npairs == 0)
        FUZZ_ASSERT(r->err == SLDA_ERR_EMPTY, "text without known tokens gave %s",
                    slda_err_name(r->err));
    else
        FUZZ_ASSERT(r->err == SLDA_OK && want.npairs == r->doc.npairs &&
                        want.ntokens == r->doc.ntokens &&
                        memcmp(want.word, r->doc.word, want.npairs * sizeof *want.word) == 0 &&
                        memcmp(want.count, r->doc.count, want.npairs * sizeof *want.count) == 0,
                    "text: %s with %u pairs / %u tokens, the tokenizer gives %u / %u",
                    slda_err_name(r->err), r->doc.npairs, r->doc.ntokens, want.npairs,
                    want.ntokens);
    slda_doc_clear(&want);
}

/* ---- which format "auto" picks (docmsg.c's documented rule) ---- */

static size_t be(const uint8_t *p, size_t n)
{
    size_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* A second MessagePack walker: is s[*pos..len) one well-formed object with
 * non-empty containers nested at most MP_MAX_DEPTH deep? Advances *pos. */
static int mp_ok(const uint8_t *s, size_t len, size_t *pos, unsigned depth)
{
    size_t p = *pos, n = 0, skip = 0, lb;
    unsigned b;
    int map = 0, container = 0;
    if (p >= len)
        return 0;
    b = s[p++];
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
        skip = 0;
    } else if (b >= 0x80 && b <= 0x9f) {
        container = 1, map = b <= 0x8f, n = b & 0x0f;
    } else if (b >= 0xa0 && b <= 0xbf) {
        skip = b & 0x1f;
    } else if (b == 0xdc || b == 0xdd || b == 0xde || b == 0xdf) {
        lb = (b & 1) ? 4 : 2;
        if (len - p < lb)
            return 0;
        container = 1, map = b >= 0xde, n = be(s + p, lb);
        p += lb;
    } else if ((b >= 0xc4 && b <= 0xc9) || (b >= 0xd9 && b <= 0xdb)) {
        static const uint8_t lbs[] = {[0xc4 - 0xc4] = 1, [0xc5 - 0xc4] = 2, [0xc6 - 0xc4] = 4,
                                      [0xc7 - 0xc4] = 1, [0xc8 - 0xc4] = 2, [0xc9 - 0xc4] = 4};
        lb = b >= 0xd9 ? (size_t)1 << (b - 0xd9) : lbs[b - 0xc4];
        if (len - p < lb)
            return 0;
        skip = be(s + p, lb) + (b >= 0xc7 && b <= 0xc9); /* ext: one type byte more */
        p += lb;
    } else {
        static const uint8_t fixed[] = {[0xca - 0xca] = 4, [0xcb - 0xca] = 8, [0xcc - 0xca] = 1,
                                        [0xcd - 0xca] = 2, [0xce - 0xca] = 4, [0xcf - 0xca] = 8,
                                        [0xd0 - 0xca] = 1, [0xd1 - 0xca] = 2, [0xd2 - 0xca] = 4,
                                        [0xd3 - 0xca] = 8, [0xd4 - 0xca] = 2, [0xd5 - 0xca] = 3,
                                        [0xd6 - 0xca] = 5, [0xd7 - 0xca] = 9, [0xd8 - 0xca] = 17};
        if (b == 0xc1 || b < 0xca || b > 0xd8)
            return 0;
        skip = fixed[b - 0xca];
    }
    if (len - p < skip)
        return 0;
    p += skip;
    if (container && n > 0) {
        size_t items = map ? 2 * n : n;
        if (depth == MP_MAX_DEPTH || items > len - p)
            return 0;
        for (size_t i = 0; i < items; i++)
            if (!mp_ok(s, len, &p, depth + 1))
                return 0;
    }
    *pos = p;
    return 1;
}

static slda_infmt_t auto_choice(const uint8_t *val, size_t len)
{
    size_t i = 0, pos = 0;
    while (i < len && strchr(" \t\r\n", val[i]) && val[i])
        i++;
    if (i < len && val[i] == '{') {
        slda_json_t js;
        slda_infmt_t f;
        slda_json_init(&js);
        f = slda_json_parse(&js, (const char *)val, len, NULL, 0) == SLDA_OK ? SLDA_INFMT_JSON
                                                                            : SLDA_INFMT_TEXT;
        slda_json_clear(&js);
        return f;
    }
    if (len > 0 && ((val[0] >= 0x80 && val[0] <= 0x8f) || val[0] == 0xde || val[0] == 0xdf)) {
        int wellformed = mp_ok(val, len, &pos, 0) && pos == len;
        if (!wellformed && slda_fuzz_utf8_ok(val, len, NULL))
            return SLDA_INFMT_TEXT;
        return SLDA_INFMT_MSGPACK;
    }
    return SLDA_INFMT_TEXT;
}

/* ---- models ---- */

static slda_model_t *fixed_model(unsigned stop, unsigned minlen)
{
    static slda_model_t *cache[2][2];
    if (!cache[stop][minlen])
        cache[stop][minlen] = slda_fuzz_model(0, fixed_words, NFIXED, stop ? "smart" : "none",
                                              minlen ? 3 : 1, 0);
    return cache[stop][minlen];
}

/* Could a word have been dropped (open vocabulary full)? */
static int clean(const slda_model_t *model, int fixed)
{
    return fixed || (slda_vocab_evictions(model->vocab) == 0 &&
                     slda_vocab_size(model->vocab) < slda_vocab_capacity(model->vocab));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const fmt_names[] = {"auto", "text", "json", "msgpack"};
    result_t r1, r2, r3;
    slda_infmt_t fmt;
    unsigned key, stop, minlen;
    int fixed;
    uint32_t max_bytes;
    slda_model_t *model;
    char what[64];
    if (size < 1)
        return 0;
    fmt = (slda_infmt_t)(data[0] & 3);
    fixed = (data[0] >> 2) & 1;
    key = (data[0] >> 3) & 3;
    max_bytes = (data[0] >> 5) & 1 ? MAX_BYTES : 0;
    stop = (data[0] >> 6) & 1;
    minlen = (data[0] >> 7) & 1;
    data++;
    size--;
    model = fixed ? fixed_model(stop, minlen)
                  : slda_fuzz_model(OPEN_CAPACITY, NULL, 0, stop ? "smart" : "none",
                                    minlen ? 3 : 1, 0);
    snprintf(what, sizeof what, "message (%s)", fmt_names[fmt]);

    decode(model, fmt, data, size, key, max_bytes, &r1);
    check_result(model, &r1, what);
    if (max_bytes && size > max_bytes)
        FUZZ_ASSERT(r1.err == SLDA_ERR_TOO_LARGE, "%zu bytes over max %u gave %s", size,
                    max_bytes, slda_err_name(r1.err));
    if (fmt == SLDA_INFMT_TEXT && r1.err == SLDA_OK)
        FUZZ_ASSERT(keys[key].usable ? r1.doc.id && strcmp(r1.doc.id, keys[key].key) == 0
                                     : r1.doc.id == NULL,
                    "text: id \"%s\" with key %u", r1.doc.id ? r1.doc.id : "(null)", key);
    if (clean(model, fixed)) {
        if (fmt == SLDA_INFMT_TEXT && r1.err != SLDA_ERR_TOO_LARGE)
            check_text_pairs(model, data, size, &r1);
        decode(model, fmt, data, size, key, max_bytes, &r2);
        check_same(&r1, &r2, "decoded twice");
        slda_doc_clear(&r2.doc);
        if (fmt == SLDA_INFMT_AUTO && clean(model, fixed)) {
            slda_infmt_t pick = auto_choice(data, size);
            decode(model, pick, data, size, key, max_bytes, &r3);
            snprintf(what, sizeof what, "auto vs %s", fmt_names[pick]);
            check_same(&r1, &r3, what);
            slda_doc_clear(&r3.doc);
        }
    }
    slda_doc_clear(&r1.doc);
    if (!fixed)
        slda_model_destroy(model);
    return 0;
}
