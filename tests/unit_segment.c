/* unit_segment.c - text.segment=unicode (ICU word boundaries, NFKC, case folding, the ASCII fast path, the token cap), language identification, text.stopwords=auto and a language given with the document. */
#include "core/config.h"
#include "core/slda_int.h"
#include "testutil.h"
#include "text/tokenize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tokenizer with the configuration's defaults and key=value (NULL: none). */
static slda_tokenizer_t *make2(const char *k1, const char *v1, const char *k2, const char *v2)
{
    slda_conf_t *conf = slda_conf_new();
    char err[512] = "";
    if (k1)
        CHECK_INT(slda_conf_set(conf, k1, v1, err, sizeof err), SLDA_OK);
    if (k2)
        CHECK_INT(slda_conf_set(conf, k2, v2, err, sizeof err), SLDA_OK);
    slda_tokenizer_t *tok = slda_tokenizer_new(&conf->p, err, sizeof err);
    CHECK_TRUE(tok != NULL, "%s", err);
    slda_conf_destroy(conf);
    return tok;
}
#define make(k, v) make2(k, v, NULL, NULL)

static slda_test_tokens_t c;
static slda_text_info_t info;

/* Tokenise text (lang given or NULL); returns the joined tokens. */
static const char *toks_lang(const slda_tokenizer_t *tok, const char *text, size_t len,
                             const char *lang)
{
    char err[256] = "";
    memset(&c, 0, sizeof c);
    slda_err_t e = slda_tokenize_doc(tok, text, len, lang, &info, slda_test_on_token, &c, err, sizeof err);
    if (e != SLDA_OK)
        snprintf(c.out, sizeof c.out, "ERR %s: %s", slda_err_name(e), err);
    return c.out;
}
#define TOKS(tok, s) toks_lang(tok, s, strlen(s), NULL)
#define LANG_OF(tok, s) (toks_lang(tok, s, strlen(s), NULL), info.lang)

/* Chinese and Japanese are cut into words by ICU's dictionaries; Thai too. */
static void test_cjk_thai(void)
{
    slda_tokenizer_t *tok = make("text.stopwords", "none");
    CHECK_STR(TOKS(tok, "我们在北京大学学习自然语言处理"), "我们|北京|大学|学习|自然|语言|处理");
    CHECK_STR(info.lang, "zh");
    CHECK_STR(TOKS(tok, "東京大学の研究者が人工知能を開発した"), "東京|大学|研究者|人工|知能|開発|した");
    CHECK_STR(info.lang, "ja");
    CHECK_STR(TOKS(tok, "ภาษาไทยง่ายนิดเดียว"), "ภาษา|ไทย|ง่าย|นิด|เดียว");
    CHECK_STR(info.lang, "th");
    /* Han with Latin around it, a URL glued to Chinese dropped with text.urls=drop; a
     * one-character word (看) is under the wide scripts' minimum of 2 */
    CHECK_STR(TOKS(tok, "看这个https://t.co/x 机器学习 Machine learning"),
              "这个|机器|学习|machine|learning");
    slda_tokenizer_destroy(tok);
}

/* NFKC and full case folding; the ASCII fast path gives what the simple rule gives. */
static void test_normalisation(void)
{
    slda_tokenizer_t *tok = make("text.stopwords", "none");
    slda_tokenizer_t *simple = make2("text.stopwords", "none", "text.segment", "simple");
    CHECK_STR(TOKS(tok, "Straße STRASSE ﬁnance ＡＢＣ ǅemal"),
              "strasse|strasse|finance|abc|džemal");
    CHECK_STR(TOKS(tok, "Ὀδυσσεύς ΣΟΦΟΣ"), "ὀδυσσεύσ|σοφοσ"); /* full folding: final sigma */
    /* ZWJ, soft hyphen and a variation selector inside a word are removed; combining
     * marks composed */
    CHECK_STR(TOKS(tok, "Cafe\xCC\x81 co\xC2\xADop wo\xE2\x80\x8Drd"), "café|coop|word");
    static const char *const english[] = {
        "Hello, World! it's 2024-ok don't Obama's", "abc123 mp3 #tag @bob https://t.co/x",
        "&amp; &lt;b&gt;bold&lt;/b&gt; <p>para</p> O\xE2\x80\x99" "Brien rock'n'roll",
        "  many   spaces\tand\nlines  ", "end-of-line' 'quoted' x"};
    for (size_t i = 0; i < sizeof english / sizeof english[0]; i++) {
        char want[8192];
        snprintf(want, sizeof want, "%s", TOKS(simple, english[i]));
        CHECK_STR(TOKS(tok, english[i]), want);
    }
    slda_tokenizer_destroy(simple);
    slda_tokenizer_destroy(tok);
}

/* Bad input: never a crash, never an empty or over-long token; over-long ones counted. */
static void test_bad_input(void)
{
    slda_tokenizer_t *tok = make("text.stopwords", "none");
    CHECK(strncmp(TOKS(tok, "ab\xff"), "ERR", 3) == 0);
    CHECK(strncmp(TOKS(tok, "\xED\xA0\x80"), "ERR", 3) == 0); /* a surrogate */
    /* emoji, ZWJ sequences, flags, bidi controls, right-to-left text, lone marks */
    TOKS(tok, "👨\xE2\x80\x8D👩\xE2\x80\x8D👧 🇩🇪 \xE2\x80\x8Fשלום עולם\xE2\x80\x8E مرحبا "
              "\xCC\x81\xCC\x81 a\xE2\x80\x8D\xE2\x80\x8D");
    CHECK_INT(c.empty, 0);
    CHECK_STR(c.out, "שלום|עולם|مرحبا");
    /* a run of 10,000 ideographs without a known word, and base64-like junk */
    size_t n = 0;
    char *big = malloc(40000);
    for (int i = 0; i < 10000; i++)
        n += (size_t)snprintf(big + n, 8, "%s", i % 2 ? "\xE4\xB8\x80" : "\xE9\xBE\x98");
    toks_lang(tok, big, n, NULL);
    CHECK_INT(c.empty, 0);
    CHECK(c.longest <= 3 * 50);
    n = 0;
    for (int i = 0; i < 300; i++)
        big[n++] = "abcde"[i % 5];
    memcpy(big + n, "\xC3\xA9", 2); /* ends in a non-ASCII letter: not the fast path */
    n += 2;
    toks_lang(tok, big, n, NULL);
    CHECK_INT(c.empty, 0);
    CHECK(c.longest <= 2 * 50);
    CHECK(info.capped >= 1);
    CHECK(slda_tokenizer_capped(tok) >= 1); /* and counted in the tokenizer */
    free(big);
    slda_tokenizer_destroy(tok);
    /* a listed token of ignorables folds to nothing: never an empty token, even with no
     * minimum length (the fuzz target's setting) */
    slda_params_t p;
    char err[256] = "";
    memset(&p, 0, sizeof p);
    p.stopwords = "none";
    tok = slda_tokenizer_new(&p, err, sizeof err);
    CHECK_TRUE(tok != NULL, "%s", err);
    const char *list[] = {"\xE2\x80\x8D\xE2\x80\x8D", "\xC2\xAD", "Abc"};
    memset(&c, 0, sizeof c);
    slda_tokenize_list(tok, list, NULL, 3, NULL, &info, slda_test_on_token, &c);
    CHECK_INT(c.empty, 0);
    CHECK_STR(c.out, "abc");
    slda_tokenizer_destroy(tok);
}

/* Languages: identified from scripts, stop words and letters; a given one overrides. */
static void test_langid(void)
{
    slda_tokenizer_t *tok = make(NULL, NULL);
    CHECK_STR(LANG_OF(tok, "Die Katze sitzt auf der Matte und schläft, weil es warm ist."), "de");
    CHECK_STR(LANG_OF(tok, "Le chat est assis sur le tapis et il dort parce qu'il fait chaud."),
              "fr");
    CHECK_STR(LANG_OF(tok, "El gato está sentado en la alfombra y duerme porque hace calor."),
              "es");
    CHECK_STR(LANG_OF(tok, "Il gatto è seduto sul tappeto e dorme perché fa caldo."), "it");
    CHECK_STR(LANG_OF(tok, "Кошка сидит на коврике и спит, потому что тепло."), "ru");
    CHECK_STR(LANG_OF(tok, "The cat is sitting on the mat and sleeps because it is warm."), "en");
    CHECK_STR(LANG_OF(tok, "一个人的价值在于他的贡献"), "zh");
    CHECK_STR(LANG_OF(tok, "猫はマットの上で寝ています"), "ja");
    CHECK_STR(LANG_OF(tok, "1234 !!! 😀"), "und");
    /* every list holding a token gets its vote: five Spanish tokens outweigh one that only
     * stopwords-iso's Portuguese list holds (twice); with votes split among the lists, pt */
    CHECK_STR(LANG_OF(tok, "El archivo de inicio general, leído en shells de inicio"), "es");
    /* a letter alone does not vote: the option letters u, s, f are stop words of Spanish and
     * others, and made these Portuguese messages Spanish */
    CHECK_STR(LANG_OF(tok, "-u, U, --user <UID> nome ou id de usuário efetivo"), "pt");
    CHECK_STR(LANG_OF(tok, "a chave mostrará o arquivo lido ou o(s) comando(s) executado(s)"),
              "pt");
    /* letters and no vote: the language with more writers (was und) */
    CHECK_STR(LANG_OF(tok, "gcloud redis clusters describe (CLUSTER : --region=REGION)"), "en");
    CHECK_STR(LANG_OF(tok, "Кошка, собака"), "ru");
    /* Han among more Latin letters, a third of them by weight: Chinese (was und) */
    CHECK_STR(LANG_OF(tok, "interactive.diffFilter 的输出不匹配"), "zh");
    /* auto: each language's list; the English one is smart, as before */
    CHECK_STR(TOKS(tok, "Die Katze sitzt auf der Matte und schläft"), "katze|sitzt|matte|schläft");
    CHECK_STR(TOKS(tok, "Кошка сидит на коврике и спит, потому что тепло"),
              "кошка|сидит|коврике|спит|тепло");
    CHECK_STR(TOKS(tok, "The cat would sit on the mat"), "cat|sit|mat");
    /* a given language overrides identification, and picks its list: "die" is English here */
    CHECK_STR(toks_lang(tok, "die Katze und der Hund", 22, "en"), "die|katze|und|der|hund");
    CHECK_STR(info.lang, "en");
    CHECK_STR(toks_lang(tok, "the cat and the dog", 19, "de"), "the|cat|and|the|dog");
    CHECK_STR(info.lang, "de");
    /* a language without a list is kept as given; only explicit lists apply */
    CHECK_STR(toks_lang(tok, "the cat", 7, "tlh"), "the|cat");
    CHECK_STR(info.lang, "tlh");
    slda_tokenizer_destroy(tok);
    /* explicit lists compose with auto, and a language code is a list of its own */
    tok = make("text.stopwords", "auto+katze,");
    CHECK_STR(TOKS(tok, "Die Katze sitzt auf der Matte"), "sitzt|matte");
    slda_tokenizer_destroy(tok);
    tok = make("text.stopwords", "de");
    CHECK_STR(TOKS(tok, "the cat und die Katze"), "the|cat|katze");
    CHECK_STR(info.lang, "de");
    slda_tokenizer_destroy(tok);
}

/* slda_lang_normalise: tags of records as primary subtags. */
static void test_lang_tags(void)
{
    char out[SLDA_LANG_LEN];
    CHECK_INT(slda_lang_normalise("de", 2, out), 1);
    CHECK_STR(out, "de");
    CHECK_INT(slda_lang_normalise("pt-BR", 5, out), 1);
    CHECK_STR(out, "pt");
    CHECK_INT(slda_lang_normalise("zh_Hant", 7, out), 1);
    CHECK_STR(out, "zh");
    CHECK_INT(slda_lang_normalise("EN", 2, out), 1);
    CHECK_STR(out, "en");
    CHECK_INT(slda_lang_normalise("und", 3, out), 0);
    CHECK_INT(slda_lang_normalise("e", 1, out), 0);
    CHECK_INT(slda_lang_normalise("german", 6, out), 0);
    CHECK_INT(slda_lang_normalise("d3", 2, out), 0);
    CHECK_INT(slda_lang_normalise("", 0, out), 0);
}

/* The simple mode with an explicit list identifies nothing (the old path, bit for bit);
 * with auto it identifies. The ICU version is recorded in the unicode mode only. */
static void test_modes(void)
{
    slda_tokenizer_t *tok = make2("text.segment", "simple", "text.stopwords", "smart");
    CHECK_STR(TOKS(tok, "我们在北京大学学习 the cats"), "我们在北京大学学习|cats");
    CHECK_STR(info.lang, "");
    CHECK_INT(slda_tokenizer_rules(tok)->icu, 0);
    slda_tokenizer_destroy(tok);
    tok = make("text.segment", "simple");
    CHECK_STR(TOKS(tok, "Die Katze sitzt auf der Matte"), "katze|sitzt|matte");
    CHECK_STR(info.lang, "de");
    slda_tokenizer_destroy(tok);
    tok = make(NULL, NULL);
    CHECK(slda_tokenizer_rules(tok)->icu >= 50);
    CHECK_INT(slda_tokenizer_rules(tok)->icu, slda_tokenizer_icu_major());
    CHECK_INT(slda_tokenizer_icu_trained(tok), 0);
    slda_tokenizer_destroy(tok);
    tok = make("text.icu", "60"); /* as a snapshot made with ICU 60 loads */
    CHECK_INT(slda_tokenizer_icu_trained(tok), 60);
    slda_tokenizer_destroy(tok);
}

int main(void)
{
    test_cjk_thai();
    test_normalisation();
    test_bad_input();
    test_langid();
    test_lang_tags();
    test_modes();
    return slda_test_done("unit_segment");
}
