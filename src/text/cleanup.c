/* cleanup.c - the spans text.* cleanup skips whole (tags, URLs, e-mails, mentions, hashtags), and references.
 *
 * Recognised in the raw bytes where no token is open: HTML tags
 * (text.html=decode: '<' + letter, '/' or '!', up to the next '>' within
 * TAG_MAX bytes), URLs (text.urls=drop: http://, https://, ftp://, www., to
 * the next space, '<', '>', '"', non-ASCII byte or escaped quote), e-mail
 * addresses (text.urls=drop: local@domain.tld, ASCII), @mentions
 * (text.mentions=drop: '@' + [A-Za-z0-9_]+, optionally @domain) and
 * #hashtags (text.hashtags=drop). Character references (text.html=decode)
 * are decoded as the text is read (slda_scan_cp_slow); one that decodes to '&'
 * followed by another reference ("&amp;lt;", text escaped twice) decodes that
 * one as well. Both segmentation modes run these rules in front of their word
 * boundaries. A scan_t belongs to one slda_tokenize call (one thread).
 */
#include "text/text_priv.h"

#include <string.h>

/* A tag longer than this is not taken for one: "a < b ... c > d" in plain
 * text stays text unless the two signs are this close. */
#define TAG_MAX 1024

uint32_t slda_scan_cp_slow(const scan_t *sc, size_t *i)
{
    uint32_t cp, again;
    size_t end, end2;
    if (sc->s[*i] != '&' || !sc->decode)
        return slda_utf8_decode(sc->s, i);
    if (!slda_html_ref(sc->s, sc->len, *i + 1, &cp, &end)) {
        *i += 1;
        return '&';
    }
    /* "&amp;lt;": an escaped reference is a reference too. */
    while (cp == '&' && slda_html_ref(sc->s, sc->len, end, &again, &end2)) {
        cp = again;
        end = end2;
    }
    *i = end;
    return cp;
}

static int is_local_char(unsigned c) /* e-mail local part */
{
    return is_ascii_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

static int is_handle_char(unsigned c) /* @mention */
{
    return is_ascii_alnum(c) || c == '_';
}

/* Length of a domain (two or more labels of [A-Za-z0-9-] joined by single
 * dots) at s[i], or 0; a final dot is left out. */
static size_t domain_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i, end = i, labels = 0;
    for (;;) {
        size_t k = j;
        while (k < len && (is_ascii_alnum(s[k]) || s[k] == '-'))
            k++;
        if (k == j)
            break;
        labels++;
        end = k;
        if (k + 1 >= len || s[k] != '.')
            break;
        j = k + 1;
    }
    return labels >= 2 ? end - i : 0;
}

/* local@domain starting at s[i]. */
static size_t email_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i, d;
    while (j < len && is_local_char(s[j]))
        j++;
    if (j == i || j >= len || s[j] != '@')
        return 0;
    d = domain_len(s, len, j + 1);
    return d ? j + 1 + d - i : 0;
}

/* A reference for a character that ends a URL in HTML ("&quot;", "&gt;")? */
static int url_stop_entity(const scan_t *sc, size_t j)
{
    uint32_t cp;
    size_t end;
    return sc->decode && slda_html_ref(sc->s, sc->len, j + 1, &cp, &end) &&
           (cp == '"' || cp == '<' || cp == '>' || cp == '\'');
}

/* Does s[i..len) start with prefix (lower-case ASCII), in any case? */
static int has_prefix(const unsigned char *s, size_t len, size_t i, const char *prefix)
{
    for (; *prefix; prefix++, i++)
        if (i >= len || (s[i] | (*prefix >= 'a' ? 0x20 : 0)) != (unsigned char)*prefix)
            return 0;
    return 1;
}

static size_t url_len(const scan_t *sc, size_t i)
{
    static const char *const prefixes[] = {"http://", "https://", "ftp://", "www."};
    const unsigned char *s = sc->s;
    unsigned c = s[i] | 0x20;
    size_t j = 0;
    if (c != 'h' && c != 'f' && c != 'w')
        return 0;
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0] && !j; k++)
        if (has_prefix(s, sc->len, i, prefixes[k]))
            j = i + strlen(prefixes[k]);
    if (!j)
        return 0;
    while (j < sc->len && s[j] > ' ' && s[j] < 0x7F && s[j] != '<' && s[j] != '>' &&
           s[j] != '"' && !(s[j] == '&' && url_stop_entity(sc, j)))
        j++;
    return j - i;
}

/* '@' + handle (+ "@domain" for the user@host form). */
static size_t mention_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i + 1, d;
    while (j < len && is_handle_char(s[j]))
        j++;
    if (j == i + 1)
        return 0;
    if (j + 1 < len && s[j] == '@' && (d = domain_len(s, len, j + 1)) > 0)
        j += 1 + d;
    return j - i;
}

/* '#' + a run of letters, digits and '_'. */
static size_t hashtag_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i + 1;
    while (j < len) {
        size_t k = j;
        uint32_t cp = slda_utf8_decode(s, &k);
        if (!slda_char_is_letter(cp) && cp - '0' >= 10u && cp != '_')
            break;
        j = k;
    }
    return j - i - 1 ? j - i : 0;
}

/* '<' + letter, '/' + letter, '!' or '?', up to the next '>'. */
static size_t tag_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i + 1;
    if (j < len && s[j] == '/')
        j++;
    if (j >= len ||
        !(((unsigned)s[j] | 0x20) - 'a' < 26u || (j == i + 1 && (s[j] == '!' || s[j] == '?'))))
        return 0;
    for (; j < len && j - i < TAG_MAX; j++) {
        if (s[j] == '>')
            return j + 1 - i;
        if (s[j] == '<')
            return 0;
    }
    return 0;
}

void slda_scan_starts(slda_tokenizer_t *tok)
{
    const slda_text_rules_t *r = &tok->rules;
    for (unsigned c = 0; c < 128; c++) {
        int k = SPAN_NONE;
        if (c == '<')
            k = r->html == SLDA_TEXT_HTML_DECODE ? SPAN_ANY : SPAN_NONE;
        else if (c == '#')
            k = r->hashtags == SLDA_TEXT_HASHTAGS_DROP ? SPAN_ANY : SPAN_NONE;
        else if (c == '@')
            k = r->mentions == SLDA_TEXT_MENTIONS_DROP ? SPAN_ANY : SPAN_NONE;
        else if (r->urls == SLDA_TEXT_URLS_DROP && is_local_char(c))
            k = strchr("hfwHFW", (int)c) ? SPAN_ANY : SPAN_MAIL; /* url_len's first letters */
        tok->span_start[c] = (unsigned char)k;
    }
}

size_t slda_scan_span(scan_t *sc, size_t i)
{
    const slda_text_rules_t *r = &sc->tok->rules;
    const unsigned char *s = sc->s;
    unsigned c = s[i], prev = i ? s[i - 1] : ' ';
    size_t n;
    if (c >= 0x80 || c == ' ')
        return 0;
    if (c == '<')
        return sc->decode ? tag_len(s, sc->len, i) : 0;
    if (c == '#')
        return r->hashtags == SLDA_TEXT_HASHTAGS_DROP && !is_ascii_alnum(prev)
                   ? hashtag_len(s, sc->len, i)
                   : 0;
    if (c == '@')
        return sc->has_at && r->mentions == SLDA_TEXT_MENTIONS_DROP && !is_handle_char(prev)
                   ? mention_len(s, sc->len, i)
                   : 0;
    if (r->urls != SLDA_TEXT_URLS_DROP || !is_local_char(c))
        return 0;
    if (!is_ascii_alnum(prev) && (n = url_len(sc, i)) > 0)
        return n;
    if (!sc->has_at || is_local_char(prev))
        return 0;
    if (sc->next_at < i) {
        const unsigned char *at = memchr(s + i, '@', sc->len - i);
        sc->next_at = at ? (size_t)(at - s) : sc->len;
    }
    return sc->next_at - i <= LOCAL_MAX ? email_len(s, sc->len, i) : 0;
}
void slda_scan_init(scan_t *sc, const slda_tokenizer_t *tok, const char *text, size_t len)
{
    const slda_text_rules_t *r = &tok->rules;
    const char *at;
    sc->tok = tok;
    sc->sink = NULL;
    sc->cb = NULL;
    sc->opaque = NULL;
    sc->s = (const unsigned char *)text;
    sc->len = len;
    sc->decode = r->html == SLDA_TEXT_HTML_DECODE;
    sc->digits = r->digits != SLDA_TEXT_DIGITS_SPLIT;
    sc->apos = r->apostrophes == SLDA_TEXT_APOS_KEEP;
    sc->specials = sc->decode || r->urls == SLDA_TEXT_URLS_DROP ||
                   r->mentions == SLDA_TEXT_MENTIONS_DROP ||
                   r->hashtags == SLDA_TEXT_HASHTAGS_DROP;
    at = r->urls == SLDA_TEXT_URLS_DROP || r->mentions == SLDA_TEXT_MENTIONS_DROP
             ? memchr(text, '@', len)
             : NULL;
    sc->has_at = at != NULL;
    sc->next_at = at ? (size_t)(at - text) : len;
}
