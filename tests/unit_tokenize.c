/* unit_tokenize.c - tokenizer: letters, lower-casing, cleanup rules, stop words, min length, UTF-8 rejection. */
#include "core/config.h"
#include "core/slda_int.h"
#include "testutil.h"
#include "text/tokenize.h"

#include <stdio.h>
#include <string.h>

/* The rules of snapshots made before text.* cleanup existed: every rule off. */
static const slda_text_rules_t legacy = {SLDA_TEXT_URLS_KEEP,    SLDA_TEXT_HTML_KEEP,
                                         SLDA_TEXT_MENTIONS_KEEP, SLDA_TEXT_HASHTAGS_KEEP,
                                         SLDA_TEXT_APOS_SPLIT,   SLDA_TEXT_DIGITS_SPLIT,
                                         SLDA_TEXT_SEGMENT_SIMPLE, 50, 0};

static slda_tokenizer_t *make_rules(const char *stop, uint32_t min_length,
                                    const slda_text_rules_t *rules)
{
    slda_params_t p;
    char err[512] = "";
    memset(&p, 0, sizeof p); /* rules: every field 0 is its default */
    p.stopwords = (char *)stop;
    p.min_length = min_length;
    p.text.segment = SLDA_TEXT_SEGMENT_SIMPLE; /* these tests are the simple rule's */
    if (rules)
        p.text = *rules;
    slda_tokenizer_t *tok = slda_tokenizer_new(&p, err, sizeof err);
    if (!tok)
        fprintf(stderr, "tokenizer_new(%s): %s\n", stop ? stop : "(null)", err);
    return tok;
}

/* The default rules (the configuration table's defaults). */
static slda_tokenizer_t *make(const char *stop, uint32_t min_length)
{
    return make_rules(stop, min_length, NULL);
}

/* The defaults with one key set as the configuration would. */
static slda_tokenizer_t *make_with(const char *stop, uint32_t min_length, const char *key,
                                   const char *value)
{
    slda_conf_t *conf = slda_conf_new();
    char err[512] = "";
    CHECK_INT(slda_conf_set(conf, key, value, err, sizeof err), SLDA_OK);
    if (strcmp(key, "text.segment"))
        conf->p.text.segment = SLDA_TEXT_SEGMENT_SIMPLE;
    slda_tokenizer_t *tok = make_rules(stop, min_length, &conf->p.text);
    slda_conf_destroy(conf);
    return tok;
}

/* Tokenise text with tok; returns the joined tokens (static buffer). */
static const char *toks(const slda_tokenizer_t *tok, const char *text, size_t len)
{
    static slda_test_tokens_t c;
    char err[256] = "";
    memset(&c, 0, sizeof c);
    slda_err_t e = slda_tokenize(tok, text, len, slda_test_on_token, &c, err, sizeof err);
    if (e != SLDA_OK)
        snprintf(c.out, sizeof c.out, "ERR %s: %s", slda_err_name(e), err);
    return c.out;
}
#define TOKS(tok, s) toks(tok, s, strlen(s))

static void test_split_lower(void)
{
    slda_tokenizer_t *tok = make_rules("none", 1, &legacy);
    CHECK_STR(TOKS(tok, "Hello, World! it's 2024-ok"), "hello|world|it|s|ok");
    CHECK_STR(TOKS(tok, "don't abc123 https://t.co/x &amp; @bob #tag"),
              "don|t|abc|https|t|co|x|amp|bob|tag");
    slda_tokenizer_destroy(tok);
    tok = make("none", 1);
    CHECK_STR(TOKS(tok, "Hello, World! it's 2024-ok"), "hello|world|it|ok");
    CHECK_STR(TOKS(tok, "  ABC  "), "abc");
    CHECK_STR(TOKS(tok, ""), "");
    CHECK_STR(TOKS(tok, "123 456 ..."), "");
    /* Latin-1: À..Þ lower-cased, × and ÷ split, ß ÿ kept. */
    CHECK_STR(TOKS(tok, "ÀÉÎÕÜÞ Straße×Ÿ÷x"), "àéîõüþ|straße|ÿ|x");
    /* Latin Extended-A pairs. */
    CHECK_STR(TOKS(tok, "ŁÓDŹ ĀČĘ İ"), "łódź|āčę|i");
    /* Greek, including accented capitals and final sigma. */
    CHECK_STR(TOKS(tok, "ΑΘΗΝΑ Άρης ΩΜΈΓΑ λόγος"), "αθηνα|άρης|ωμέγα|λόγος");
    /* Cyrillic А-Я and Ѐ-Џ. */
    CHECK_STR(TOKS(tok, "МОСКВА ЁЖ Ђак"), "москва|ёж|ђак");
    /* Punctuation and symbol blocks split; CJK runs stay whole. */
    CHECK_STR(TOKS(tok, "a—b“c”d€e😀f、東京"), "a|b|c|d|e|f|東京");
    /* NBSP and the ideographic space separate words. */
    CHECK_STR(TOKS(tok, "one\xC2\xA0two\xE3\x80\x80three"), "one|two|three");
    /* Combining accent stays inside the word. */
    CHECK_STR(TOKS(tok, "Cafe\xCC\x81 bar"), "cafe\xCC\x81|bar");
    /* NUL bytes are separators. */
    CHECK_STR(toks(tok, "ab\0cd", 5), "ab|cd");
    CHECK(slda_char_is_letter('q'));
    CHECK(!slda_char_is_letter('7'));
    CHECK(!slda_char_is_letter(0xD7));
    CHECK(slda_char_is_letter(0x4E00));
    CHECK(!slda_char_is_letter(0x2019)); /* right single quote */
    CHECK_INT(slda_char_lower(0x178), 0xFF);
    CHECK_INT(slda_char_lower(0x139), 0x13A);
    CHECK_INT(slda_char_lower(0x13A), 0x13A);
    slda_tokenizer_destroy(tok);
}

static void test_long_token(void)
{
    slda_tokenizer_t *tok = make("none", 1);
    char big[2000];
    memset(big, 'A', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *out = TOKS(tok, big);
    CHECK_INT(strlen(out), 1999);
    CHECK_EQ(out[0], 'a');
    CHECK_EQ(out[1998], 'a');
    slda_tokenizer_destroy(tok);
}

/* The configuration table's defaults are index 0 of each rule (what make() uses). */
static void test_rule_defaults(void)
{
    slda_conf_t *conf = slda_conf_new();
    slda_text_rules_t zero;
    memset(&zero, 0, sizeof zero);
    zero.token_max = 50; /* a number, not an index */
    CHECK_MEM(&conf->p.text, &zero, sizeof zero);
    slda_conf_destroy(conf);
}

static void test_urls(void)
{
    slda_tokenizer_t *tok = make("none", 1);
    CHECK_STR(TOKS(tok, "see https://t.co/AbC123 and www.Example.com/x?y=1&z=2, now"),
              "see|and|now");
    CHECK_STR(TOKS(tok, "HTTP://X.ORG/p (ftp://f.net/a) <http://x.io>"), "");
    CHECK_STR(TOKS(tok, "link:https://x.com/a…more"), "link|more"); /* stops at U+2026 */
    CHECK_STR(TOKS(tok, "http is a protocol; www alone"), "http|is|a|protocol|www|alone");
    /* e-mail addresses */
    CHECK_STR(TOKS(tok, "mail john.doe+x@example.co.uk or (jane@x.org). bye"), "mail|or|bye");
    CHECK_STR(TOKS(tok, "user@localhost a@b"), "user|localhost|a|b"); /* no dotted domain */
    CHECK_STR(TOKS(tok, "see x@y.org. next"), "see|next"); /* a final dot is not the domain's */
    /* an escaped quote ends a URL inside escaped HTML */
    CHECK_STR(TOKS(tok, "&lt;a href=&quot;http://x.com&quot;&gt;Link&lt;/a&gt;"),
              "a|href|link|a");
    /* the scan asks for an address only with an '@' within 64 bytes ahead: one past, the
     * next found; a local part longer than 64 bytes is not an address */
    CHECK_STR(TOKS(tok, "a@b.org then words and more words before c.d-e_f%g@x.org. end"),
              "then|words|and|more|words|before|end");
    CHECK_STR(TOKS(tok, "2go@x.org 9 .x@y.org -z@w.org end"), "end");
    CHECK_STR(TOKS(tok, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@x.org"),
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa|x|org");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.urls", "keep");
    CHECK_STR(TOKS(tok, "https://t.co/x j@x.org"), "https|t|co|x|j|x|org");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.mentions", "keep"); /* addresses still dropped */
    CHECK_STR(TOKS(tok, "hi @ann and bob@x.org"), "hi|ann|and");
    slda_tokenizer_destroy(tok);
}

/* The stop set's hash reads a word's first and last 8 bytes: words alike there are told apart
 * by the compare, at every length around the hash's cases (3, 4, 8, 16). */
static void test_stop_hash(void)
{
    slda_tokenizer_t *tok = make("abc,abcd,abcdefgh,abcdefghijklmnop,abcdefghqrstuvwxijklmnop,"
                                 "abcdefghxxijklmnop,ab",
                                 1);
    CHECK_STR(TOKS(tok, "abc acb abd abcd abdc abcdefgh abcdefgi abcdefghijklmnop"),
              "acb|abd|abdc|abcdefgi");
    CHECK_STR(TOKS(tok, "abcdefghqrstuvwxijklmnop abcdefghxwvutsrqijklmnop abcdefghyyijklmnop "
                        "abcdefghxxijklmnop ab ba a"),
              "abcdefghxwvutsrqijklmnop|abcdefghyyijklmnop|ba|a");
    CHECK_INT(slda_tokenizer_stopword_count(tok), 7);
    slda_tokenizer_destroy(tok);
}

static void test_html(void)
{
    slda_tokenizer_t *tok = make("none", 1);
    CHECK_STR(TOKS(tok, "Caf&eacute; AT&amp;T don&#39;t &#x44;og &#68;ay &Eacute;t&eacute;"),
              "café|at|t|don't|dog|day|été");
    CHECK_STR(TOKS(tok, "&lt;3 &quot;hi&quot; &nbsp;x&hellip;y"), "hi|x|y");
    CHECK_STR(TOKS(tok, "&amp;amp; &amp;quot;q&amp;quot; &amp;eacute;"), "q|é"); /* escaped twice */
    CHECK_STR(TOKS(tok, "&#146;s &#147;w&#148; it&#146;s"), "s|w|it"); /* windows-1252 */
    CHECK_STR(TOKS(tok, "&#0;a&#xD800;b&#x110000;c&#99999999999999999;d"), "a|b|c|d");
    CHECK_STR(TOKS(tok, "&bogus; &amp x &AMP; &#; &#x; &"), "bogus|amp|x|amp|x");
    /* tags */
    CHECK_STR(TOKS(tok, "<p>Hello</p><br/>world <!-- c --> <a href=\"x y\">link</a><?x?>"),
              "hello|world|link");
    CHECK_STR(TOKS(tok, "a < b and c > d, x<3 y, <1> <"), "a|b|and|c|d|x|y");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.html", "keep");
    CHECK_STR(TOKS(tok, "&amp; <b>x</b> caf&eacute;"), "amp|b|x|b|caf|eacute");
    slda_tokenizer_destroy(tok);
}

static void test_mentions_hashtags(void)
{
    slda_tokenizer_t *tok = make("none", 1);
    CHECK_STR(TOKS(tok, "RT @bob_1: hi @alice@mastodon.social yes"), "rt|hi|yes");
    CHECK_STR(TOKS(tok, "a@b @ x"), "a|b|x");
    CHECK_STR(TOKS(tok, "#Debt crisis #東京 C#"), "debt|crisis|東京|c");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.mentions", "keep");
    CHECK_STR(TOKS(tok, "@bob hi"), "bob|hi");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.hashtags", "drop");
    CHECK_STR(TOKS(tok, "#Debt #東京_2 crisis C# F#m"), "crisis|c|f|m");
    slda_tokenizer_destroy(tok);
}

static void test_apostrophes(void)
{
    slda_tokenizer_t *tok = make("none", 1);
    CHECK_STR(TOKS(tok, "don't Don\xE2\x80\x99t 'quoted' students' rock'n'roll"),
              "don't|don't|quoted|students|rock'n'roll");
    CHECK_STR(TOKS(tok, "Obama's O\xE2\x80\x99" "Brien\xE2\x80\x99s it's x's ''a''"),
              "obama|o'brien|it|x|a");
    slda_tokenizer_destroy(tok);
    /* the contractions in the default list now match */
    tok = make("smart", 3);
    CHECK_STR(TOKS(tok, "I don't can\xE2\x80\x99t WON'T stop"), "stop");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.apostrophes", "split");
    CHECK_STR(TOKS(tok, "don't obama's"), "don|t|obama|s");
    slda_tokenizer_destroy(tok);
}

static void test_digits(void)
{
    static const char text[] = "abc123 2024 covid19 '90s 90's x 3.5 mp3";
    slda_tokenizer_t *tok = make("none", 1);
    CHECK_STR(TOKS(tok, text), "x");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.digits", "mixed");
    CHECK_STR(TOKS(tok, text), "abc123|covid19|90s|x|mp3");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.digits", "keep");
    CHECK_STR(TOKS(tok, text), "abc123|2024|covid19|90s|90|x|3|5|mp3");
    slda_tokenizer_destroy(tok);
    tok = make_with("none", 1, "text.digits", "split");
    CHECK_STR(TOKS(tok, text), "abc|covid|s|s|x|mp");
    slda_tokenizer_destroy(tok);
}

/* An out-of-range rule (a bad params struct) is refused, not used. */
static void test_bad_rules(void)
{
    slda_text_rules_t r = legacy;
    char err[256] = "";
    slda_params_t p;
    memset(&p, 0, sizeof p);
    r.digits = 4;
    p.text = r;
    CHECK_NULL(slda_tokenizer_new(&p, err, sizeof err));
    CHECK_CONTAINS(err, "text.digits: invalid setting 4");
}

static void test_stop_minlen(void)
{
    slda_tokenizer_t *tok = make("smart", 3);
    CHECK_INT(slda_tokenizer_stopword_count(tok), 570);
    CHECK_STR(TOKS(tok, "The cat and THE dog are on a mat however"), "cat|dog|mat");
    /* min length counts code points, not bytes: "éé" is 2 characters. */
    CHECK_STR(TOKS(tok, "éé ééé"), "ééé");
    slda_tokenizer_destroy(tok);

    tok = make("snowball", 1);
    CHECK_INT(slda_tokenizer_stopword_count(tok), 174);
    CHECK_STR(TOKS(tok, "I was here with bread"), "bread");
    slda_tokenizer_destroy(tok);
    tok = make("onix", 1);
    CHECK_INT(slda_tokenizer_stopword_count(tok), 398);
    slda_tokenizer_destroy(tok);
    tok = make(NULL, 1);
    CHECK_INT(slda_tokenizer_stopword_count(tok), 0);
    CHECK_STR(TOKS(tok, "the a"), "the|a");
    slda_tokenizer_destroy(tok);
}

/* The per-language lists (stopwords-iso) are built-in lists named by their code. */
static void test_stop_languages(void)
{
    slda_tokenizer_t *tok = make("de+ru", 1);
    CHECK_STR(TOKS(tok, "Die Katze und der Hund, что это кошка"), "katze|hund|кошка");
    slda_tokenizer_destroy(tok);
    tok = make("zh", 1);
    CHECK_STR(TOKS(tok, "我们 的 北京"), "北京");
    slda_tokenizer_destroy(tok);
    CHECK(slda_nautolists >= 30);
    for (size_t i = 0; i < slda_nautolists; i++) {
        size_t found = 0;
        for (size_t k = 0; k < slda_nstoplists; k++)
            found += !strcmp(slda_stoplists[k].name, slda_autolists[i].list) &&
                     slda_stoplists[k].n >= 20;
        CHECK_TRUE(found == 1, "language %s: list %s", slda_autolists[i].lang,
                   slda_autolists[i].list);
    }
}

static void test_stop_file(void)
{
    char *dir = slda_test_tmpdir(), path[4200], bad[4200], err[512] = "";
    slda_params_t p;
    snprintf(path, sizeof path, "%s/stop.txt", dir);
    snprintf(bad, sizeof bad, "%s/bad.txt", dir);
    CHECK_INT(slda_test_write_file(path, "# my list\n  Foo  \nBAR # trailing comment\n\nΣΟΦΙΑ\n"),
              0);
    CHECK_INT(slda_test_write_file(bad, "ok\nbad\xff\n"), 0);
    slda_tokenizer_t *tok = make(path, 1);
    CHECK_NONNULL(tok);
    if (tok) {
        CHECK_INT(slda_tokenizer_stopword_count(tok), 3);
        CHECK_STR(TOKS(tok, "foo bar baz Σοφια σοφια"), "baz");
    }
    slda_tokenizer_destroy(tok);

    memset(&p, 0, sizeof p);
    p.stopwords = bad;
    CHECK_NULL(slda_tokenizer_new(&p, err, sizeof err));
    CHECK_CONTAINS(err, "line 2: invalid UTF-8 at byte 3");
    p.stopwords = "/nonexistent/stop.txt";
    CHECK_NULL(slda_tokenizer_new(&p, err, sizeof err));
    CHECK_CONTAINS(err, "text.stopwords \"/nonexistent/stop.txt\": not a built-in list");
    remove(path);
    remove(bad);
    remove(dir);
    free(dir);
}

static void test_stop_compose(void)
{
    char *dir = slda_test_tmpdir(), a[4200], b[4200], spec[9000], err[512] = "";
    slda_params_t p;
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    CHECK_INT(slda_test_write_file(a, "foo\n# c\nrt\n"), 0);
    CHECK_INT(slda_test_write_file(b, "bar\nDon\xE2\x80\x99t\n"), 0);
    snprintf(spec, sizeof spec, "smart+%s", a);
    slda_tokenizer_t *tok = make(spec, 1);
    CHECK_NONNULL(tok);
    if (tok) {
        CHECK_INT(slda_tokenizer_stopword_count(tok), 572);
        CHECK_STR(TOKS(tok, "the foo RT bar"), "bar");
    }
    slda_tokenizer_destroy(tok);
    snprintf(spec, sizeof spec, "none+%s+%s+zzz,yyy,  www ,", a, b);
    tok = make(spec, 1);
    CHECK_NONNULL(tok);
    if (tok) {
        CHECK_INT(slda_tokenizer_stopword_count(tok), 7); /* don't already normalised */
        CHECK_STR(TOKS(tok, "foo bar zzz yyy www don't the"), "the");
    }
    slda_tokenizer_destroy(tok);
    tok = make("snowball+onix", 1);
    CHECK_NONNULL(tok);
    if (tok)
        CHECK_GT(slda_tokenizer_stopword_count(tok), 398);
    slda_tokenizer_destroy(tok);

    /* "+x" in the configuration adds to the default list */
    slda_conf_t *conf = slda_conf_new();
    CHECK_INT(slda_conf_set(conf, "text.stopwords", "+amp,rt", err, sizeof err), SLDA_OK);
    CHECK_STR(conf->p.stopwords, "auto+amp,rt");
    tok = slda_tokenizer_new(&conf->p, err, sizeof err);
    CHECK_TRUE(tok != NULL, "%s", err);
    if (tok) /* the explicit words; auto's lists are each language's */
        CHECK_INT(slda_tokenizer_stopword_count(tok), 2);
    slda_tokenizer_destroy(tok);
    slda_conf_destroy(conf);

    /* errors name the part */
    memset(&p, 0, sizeof p);
    p.stopwords = "smart+/nonexistent/x.txt";
    CHECK_NULL(slda_tokenizer_new(&p, err, sizeof err));
    CHECK_CONTAINS(err, "text.stopwords \"/nonexistent/x.txt\": not a built-in list");
    CHECK_CONTAINS(err, "(in \"smart+/nonexistent/x.txt\")");
    p.stopwords = "smart++x,";
    CHECK_NULL(slda_tokenizer_new(&p, err, sizeof err));
    CHECK_CONTAINS(err, "empty part at byte 6");
    p.stopwords = "smart+a,\xff";
    CHECK_NULL(slda_tokenizer_new(&p, err, sizeof err));
    CHECK_CONTAINS(err, "invalid UTF-8 at byte 8");

    /* what a decoded snapshot may load: no files */
    char *safe = slda_stopwords_without_files("smart+/a/b.txt+rt,via+none");
    CHECK_STR(safe, "smart+rt,via");
    free(safe);
    safe = slda_stopwords_without_files("/x/y");
    CHECK_STR(safe, "none");
    free(safe);
    safe = slda_stopwords_without_files(NULL);
    CHECK_STR(safe, "none");
    free(safe);
    remove(a);
    remove(b);
    remove(dir);
    free(dir);
}

/* Every kind of invalid UTF-8 is rejected with its offset and no callback. */
static void test_bad_utf8(void)
{
    static const struct {
        const char *text;
        size_t off;
        const char *why;
    } cases[] = {
        {"ok \x80 x", 3, "unexpected continuation byte"},
        {"ab\xC0\xAF", 2, "overlong encoding"},      /* '/' in 2 bytes */
        {"ab\xC1\xBF", 2, "overlong encoding"},
        {"\xE0\x80\xAF", 0, "overlong encoding"},    /* 3-byte overlong */
        {"x\xF0\x80\x80\xAF", 1, "overlong encoding"}, /* 4-byte overlong */
        {"abc\xED\xA0\x80", 3, "surrogate code point"}, /* U+D800 */
        {"\xED\xBF\xBF", 0, "surrogate code point"},  /* U+DFFF */
        {"a\xF4\x90\x80\x80", 1, "code point above U+10FFFF"},
        {"a\xF5\x80\x80\x80", 1, "byte not allowed in UTF-8"},
        {"a\xFF", 1, "byte not allowed in UTF-8"},
        {"word \xC3", 5, "truncated sequence"},      /* at end */
        {"word \xE2\x82", 5, "truncated sequence"},
        {"word \xF0\x9F\x98", 5, "truncated sequence"},
        {"\xC3x", 0, "truncated sequence"},          /* interrupted */
        {"\xE2\x82x", 0, "truncated sequence"},
    };
    slda_tokenizer_t *tok = make("none", 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        slda_test_tokens_t c;
        char err[256] = "", want[128];
        memset(&c, 0, sizeof c);
        slda_err_t e = slda_tokenize(tok, cases[i].text, strlen(cases[i].text), slda_test_on_token, &c,
                                     err, sizeof err);
        CHECK_INT(e, SLDA_ERR_UTF8);
        CHECK_INT(c.calls, 0);
        snprintf(want, sizeof want, "invalid UTF-8 at byte %zu (%s)", cases[i].off,
                 cases[i].why);
        CHECK_CONTAINS(err, want);
    }
    /* Boundary code points that are valid. */
    CHECK_STR(TOKS(tok, "\xF4\x8F\xBF\xBF"), "");            /* U+10FFFF: private use */
    CHECK_STR(TOKS(tok, "a\xEF\xBF\xBD" "b"), "a|b");       /* U+FFFD */
    CHECK_STR(TOKS(tok, "\xED\x9F\xBF"), "\xED\x9F\xBF");    /* U+D7FF: a letter */
    CHECK_STR(TOKS(tok, "\xF0\x90\x80\x80"), "\xF0\x90\x80\x80"); /* U+10000 */
    slda_tokenizer_destroy(tok);
}

static void test_normalise(void)
{
    slda_tokenizer_t *tok = make("snowball", 2);
    char out[64];
    CHECK_INT(slda_token_normalise(tok, "Über", 5, out), 5);
    CHECK_STR(out, "über");
    CHECK_INT(slda_token_normalise(tok, "New_York", 8, out), 8);
    CHECK_STR(out, "new_york");
    CHECK_INT(slda_token_normalise(tok, "THE", 3, out), 0);  /* stop word */
    CHECK_INT(slda_token_normalise(tok, "x", 1, out), 0);    /* too short */
    CHECK_INT(slda_token_normalise(tok, "", 0, out), 0);
    CHECK_INT(slda_token_normalise(tok, "a\xff", 2, out), 0); /* invalid */
    CHECK_INT(slda_token_normalise(tok, "O\xE2\x80\x99" "Brien", 9, out), 7);
    CHECK_STR(out, "o'brien"); /* as text gives it */
    CHECK(slda_tokenizer_is_stopword(tok, "the", 3));
    CHECK(!slda_tokenizer_is_stopword(tok, "thee", 4));
    slda_tokenizer_destroy(tok);
    slda_tokenizer_destroy(NULL);
}

int main(void)
{
    test_split_lower();
    test_rule_defaults();
    test_urls();
    test_stop_hash();
    test_html();
    test_mentions_hashtags();
    test_apostrophes();
    test_digits();
    test_bad_rules();
    test_long_token();
    test_stop_minlen();
    test_stop_languages();
    test_stop_file();
    test_stop_compose();
    test_bad_utf8();
    test_normalise();
    return slda_test_done("unit_tokenize");
}
