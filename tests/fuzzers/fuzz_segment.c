/* fuzz_segment.c - fuzz target: text.segment=unicode (ICU word boundaries, NFKC_Casefold), language identification and text.stopwords=auto.
 *
 * Input: byte 0 picks the stop words (bit 0: auto or none), the minimum
 * length (bits 1-2: 0..3 characters), the language given with the document
 * (bits 3-5: none, or one of langs[]) and text.token.max (bit 6: 50 or 4);
 * the rest is the text (the tokenize corpus serves: its byte 0 is read the
 * same way). Checked, whatever the bytes (mixed scripts, right-to-left,
 * emoji, ZWJ, combining marks, invalid UTF-8):
 *   - slda_tokenize_doc fails with SLDA_ERR_UTF8 before any callback exactly
 *     when the text is not UTF-8;
 *   - every token is non-empty, NUL-terminated, valid UTF-8, at most
 *     text.token.max code points, and a fixed point of slda_token_normalise
 *     when it is not a stop word of the document's language;
 *   - the language reported is the one given, or a known code, or "und";
 *   - the same text as a list of tokens (cut at ASCII spaces) obeys the same
 *     token rules.
 * The tokenizers are built once per setting; they are read-only.
 */
#include "fuzzutil.h"
#include "core/utf8.h"
#include "text/tokenize.h"

#include <stdlib.h>
#include <string.h>

static const char *const langs[8] = {NULL, "de", "zh", "ja", "ru", "en", "ar", "xx"};

static const slda_tokenizer_t *tokenizer(unsigned autolist, unsigned min_length, unsigned cap)
{
    static slda_tokenizer_t *cache[2][4][2];
    char err[512];
    if (!cache[autolist][min_length][cap]) {
        slda_params_t p;
        memset(&p, 0, sizeof p); /* text.segment=unicode is 0 */
        p.stopwords = autolist ? "auto" : "none";
        p.min_length = min_length;
        p.text.token_max = cap ? 4 : 50;
        cache[autolist][min_length][cap] = slda_tokenizer_new(&p, err, sizeof err);
        FUZZ_ASSERT(cache[autolist][min_length][cap] != NULL, "harness: tokenizer: %s", err);
    }
    return cache[autolist][min_length][cap];
}

typedef struct seen_s {
    const slda_tokenizer_t *tok;
    uint32_t cap;
    size_t ntok;
} seen_t;

static void on_token(const char *t, size_t len, void *opaque)
{
    seen_t *sn = opaque;
    size_t i = 0, nchars = 0;
    FUZZ_ASSERT(len > 0, "empty token %zu", sn->ntok);
    FUZZ_ASSERT(t[len] == '\0', "token %zu is not NUL-terminated", sn->ntok);
    FUZZ_ASSERT(slda_fuzz_utf8_ok((const unsigned char *)t, len, NULL), "token %zu is not UTF-8",
                sn->ntok);
    while (i < len) {
        slda_utf8_decode((const unsigned char *)t, &i);
        nchars++;
    }
    FUZZ_ASSERT(nchars <= sn->cap, "token %zu \"%s\": %zu characters, over %u", sn->ntok, t,
                nchars, sn->cap);
    char *again = slda_xmalloc(4 * len + 1);
    size_t n = slda_token_normalise(sn->tok, t, len, again);
    /* 0: a stop word of some list (auto's lists hold words of every language) */
    FUZZ_ASSERT(n == 0 || (n == len && memcmp(again, t, len) == 0),
                "token %zu \"%s\" normalises to \"%.*s\"", sn->ntok, t, (int)n, again);
    free(again);
    sn->ntok++;
}

static void check_lang(const slda_text_info_t *info, const char *given)
{
    size_t n = strlen(info->lang);
    if (given)
        FUZZ_ASSERT(!strcmp(info->lang, given), "language %s, given %s", info->lang, given);
    else
        FUZZ_ASSERT(n >= 2 && n <= 3, "language \"%s\"", info->lang);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    slda_text_info_t info;
    if (size < 1)
        return 0;
    unsigned autolist = data[0] & 1, min_length = (data[0] >> 1) & 3, cap = (data[0] >> 6) & 1;
    const char *lang = langs[(data[0] >> 3) & 7];
    data++;
    size--;
    const slda_tokenizer_t *tok = tokenizer(autolist, min_length, cap);
    seen_t sn = {tok, cap ? 4 : 50, 0};
    int valid = slda_fuzz_utf8_ok(data, size, NULL);
    slda_err_t rc = slda_tokenize_doc(tok, (const char *)data, size, lang, &info, on_token, &sn,
                                      err, sizeof err);
    if (!valid) {
        FUZZ_ASSERT(rc == SLDA_ERR_UTF8, "invalid UTF-8 gave %s", slda_err_name(rc));
        FUZZ_ASSERT(sn.ntok == 0, "%zu tokens before the UTF-8 error", sn.ntok);
        return 0;
    }
    FUZZ_ASSERT(rc == SLDA_OK, "valid UTF-8 gave %s: %s", slda_err_name(rc), err);
    check_lang(&info, lang);
    /* the same text as a list of tokens cut at ASCII spaces */
    const char *words[64];
    size_t lens[64], n = 0, i = 0;
    while (i < size && n < 64) {
        size_t j = i;
        while (j < size && data[j] != ' ')
            j++;
        if (j > i) {
            words[n] = (const char *)data + i;
            lens[n++] = j - i;
        }
        i = j + 1;
    }
    sn.ntok = 0;
    slda_tokenize_list(tok, words, lens, n, lang, &info, on_token, &sn);
    check_lang(&info, lang);
    return 0;
}
