/* langid.c - a document's language from its scripts, its stop words and a few telling letters.
 *
 * The model is the stop lists themselves (no other data): a document's
 * tokens are counted by script (Latin, Cyrillic, Han, Kana, Hangul, Thai,
 * ...; Han and Kana characters count three times, as one carries about a
 * syllable where a Latin letter carries a sound). The script with the most
 * decides the candidates: the languages whose auto list (slda_autolists) is
 * written in it; but Han and Kana decide whenever they are a third of the
 * most (six times their characters at least the main script's letters: a
 * Chinese sentence with English terms in it, "无效的 statoverride 用户ID", is
 * Chinese). Han and Kana together are Japanese when Kana is at least a
 * tenth of them, else Chinese. One candidate is the answer; among several
 * (Latin, Cyrillic, Arabic, Devanagari) each token found in candidates' lists
 * gives one vote to every list that holds it (but a token of one letter:
 * sink.c), and each letter of hints[]
 * below one vote to each of its languages (ы is Russian among Russian,
 * Ukrainian and Bulgarian; ñ Spanish or Galician; ł Polish). The most votes
 * win; a tie, and a document with letters but no vote at all (a command
 * synopsis, a headline of names), goes to the language with more writers
 * (tie_order[]: English among the Latin languages). Only a document without
 * letters is "und".
 *
 * Why a whole vote for every list, not one vote split among them: a
 * language's evidence is how many of the document's tokens its list holds.
 * Split votes let one rare word in one list ("inicio" is in stopwords-iso's
 * Portuguese list only) outweigh five common ones shared with neighbours
 * ("el", "de", "en"), and 18 of 300 Spanish manual-page paragraphs went to
 * Portuguese. Measured in docs/text.md (bench/text/langid.py, on Debian's
 * translated manual pages and, as a second source, the gettext catalogues
 * of installed packages and English news).
 *
 * A language's script is its list's majority script, found when the
 * tokenizer is made (slda_lang_scripts). Pure functions over the tokenizer
 * (read-only) and a caller's vote state: any thread.
 */
#include "text/text_priv.h"

#include <pthread.h>
#include <string.h>

/* Letters that tell languages of one script apart, and the languages that
 * use them (ISO 639-1, space-separated). Sorted by code point. */
static const struct {
    uint32_t cp;
    const char *langs;
} hints[] = {
    {0x00DF, "de"},          /* ß */
    {0x00E0, "fr it ca pt"}, /* à */
    {0x00E1, "es pt hu cs sk ga gl ca vi"},
    {0x00E3, "pt"},          /* ã */
    {0x00E4, "de fi sv et sk"},
    {0x00E5, "da no sv"},    /* å */
    {0x00E6, "da no"},       /* æ */
    {0x00E7, "pt fr ca tr"}, /* ç */
    {0x00E8, "fr it ca"},    /* è */
    {0x00E9, "fr es pt hu cs sk it ga gl ca vi"},
    {0x00EA, "fr pt vi"},    /* ê */
    {0x00EB, "fr nl af"},    /* ë */
    {0x00EC, "it"},          /* ì */
    {0x00ED, "es pt hu cs sk ga gl ca vi"},
    {0x00EE, "fr ro"},       /* î */
    {0x00EF, "fr nl ca"},    /* ï */
    {0x00F1, "es gl"},       /* ñ */
    {0x00F2, "it ca"},       /* ò */
    {0x00F3, "es pt hu cs sk pl ga gl ca vi"},
    {0x00F4, "sk fr pt"},    /* ô */
    {0x00F5, "pt et"},       /* õ */
    {0x00F6, "de fi sv et hu tr"},
    {0x00F8, "da no"},       /* ø */
    {0x00F9, "fr it"},       /* ù */
    {0x00FA, "es pt hu cs sk ga gl ca vi"},
    {0x00FB, "fr"},          /* û */
    {0x00FC, "de hu tr et"}, /* ü */
    {0x0103, "ro vi"},       /* ă */
    {0x0105, "pl lt"},       /* ą */
    {0x0107, "pl hr"},       /* ć */
    {0x0111, "hr vi"},       /* đ */
    {0x0113, "lv"},          /* ē */
    {0x0117, "lt"},          /* ė */
    {0x0119, "pl lt"},       /* ę */
    {0x011B, "cs"},          /* ě */
    {0x011F, "tr"},          /* ğ */
    {0x012B, "lv"},          /* ī */
    {0x012F, "lt"},          /* į */
    {0x0131, "tr"},          /* ı */
    {0x0137, "lv"},          /* ķ */
    {0x013A, "sk"},          /* ĺ */
    {0x013C, "lv"},          /* ļ */
    {0x013E, "sk"},          /* ľ */
    {0x0142, "pl"},          /* ł */
    {0x0144, "pl"},          /* ń */
    {0x0146, "lv"},          /* ņ */
    {0x0151, "hu"},          /* ő */
    {0x0153, "fr"},          /* œ */
    {0x0155, "sk"},          /* ŕ */
    {0x0159, "cs"},          /* ř */
    {0x015B, "pl"},          /* ś */
    {0x015F, "tr ro"},       /* ş */
    {0x016B, "lv lt"},       /* ū */
    {0x016F, "cs"},          /* ů */
    {0x0171, "hu"},          /* ű */
    {0x0173, "lt"},          /* ų */
    {0x017A, "pl"},          /* ź */
    {0x017C, "pl"},          /* ż */
    {0x01A1, "vi"},          /* ơ */
    {0x01B0, "vi"},          /* ư */
    {0x0219, "ro"},          /* ș */
    {0x021B, "ro"},          /* ț */
    {0x044A, "bg"},          /* ъ */
    {0x044B, "ru"},          /* ы */
    {0x044D, "ru"},          /* э */
    {0x0451, "ru"},          /* ё */
    {0x0454, "uk"},          /* є */
    {0x0456, "uk"},          /* і */
    {0x0457, "uk"},          /* ї */
    {0x0491, "uk"},          /* ґ */
    {0x1E63, "yo"},          /* ṣ */
    {0x1EB9, "yo"},          /* ẹ */
    {0x1ECD, "yo"},          /* ọ */
};

/* Ties (a short document whose few stop words several languages share: "и", "в" are Russian,
 * Ukrainian and Bulgarian) go to the language with more writers, in this order (roughly by
 * speakers online); the others after them, in slda_autolists order. */
static const char *const tie_order[] = {"en", "zh", "es", "ar", "pt", "ru", "ja", "de", "fr",
                                        "id", "hi", "it", "ko", "tr", "pl", "fa", "vi", "nl",
                                        "uk", "th", "ro", "el", "hu", "cs", "sv", "he", "da",
                                        "fi", "no", "sk", "bg", "hr", "ca", "ms", "ur", "bn"};

int slda_script_of(uint32_t cp)
{
    if (cp < 0x80)
        return ((cp | 0x20) - 'a' < 26u) ? SCRIPT_LATIN : SCRIPT_NONE;
    if (cp < 0x250)
        return cp >= 0xC0 && cp != 0xD7 && cp != 0xF7 ? SCRIPT_LATIN : SCRIPT_NONE;
    if (cp >= 0x370 && cp < 0x400)
        return SCRIPT_GREEK;
    if (cp >= 0x400 && cp < 0x530)
        return SCRIPT_CYRILLIC;
    if (cp >= 0x530 && cp < 0x590)
        return SCRIPT_ARMENIAN;
    if (cp >= 0x590 && cp < 0x600)
        return SCRIPT_HEBREW;
    if ((cp >= 0x600 && cp < 0x780) || (cp >= 0xFB50 && cp < 0xFE00) ||
        (cp >= 0xFE70 && cp < 0xFF00))
        return SCRIPT_ARABIC;
    if (cp >= 0x900 && cp < 0x980)
        return SCRIPT_DEVANAGARI;
    if (cp >= 0x980 && cp < 0xA00)
        return SCRIPT_BENGALI;
    if (cp >= 0xA80 && cp < 0xB00)
        return SCRIPT_GUJARATI;
    if (cp >= 0xE00 && cp < 0xE80)
        return SCRIPT_THAI;
    if (cp >= 0x1E00 && cp < 0x1F00)
        return SCRIPT_LATIN;
    if (cp >= 0x1F00 && cp < 0x2000)
        return SCRIPT_GREEK;
    if ((cp >= 0x1100 && cp < 0x1200) || (cp >= 0x3130 && cp < 0x3190) ||
        (cp >= 0xAC00 && cp < 0xD7B0))
        return SCRIPT_HANGUL;
    if ((cp >= 0x3040 && cp < 0x3100) || (cp >= 0x31F0 && cp < 0x3200) ||
        (cp >= 0xFF66 && cp < 0xFFA0))
        return SCRIPT_KANA;
    if ((cp >= 0x3400 && cp < 0x4DC0) || (cp >= 0x4E00 && cp < 0xA000) ||
        (cp >= 0xF900 && cp < 0xFB00) || (cp >= 0x20000 && cp < 0x32000))
        return SCRIPT_HAN;
    return SCRIPT_NONE;
}

int slda_script_wide(int script)
{
    return script == SCRIPT_HAN || script == SCRIPT_KANA || script == SCRIPT_THAI ||
           script == SCRIPT_HANGUL;
}

int slda_lang_index(const slda_tokenizer_t *tok, const char *lang)
{
    for (uint32_t i = 0; i < tok->nlang; i++)
        if (!strcmp(slda_autolists[i].lang, lang))
            return (int)i;
    return -1;
}

/* The languages of a hint as a mask of language bits. */
static uint64_t hint_mask(const slda_tokenizer_t *tok, const char *langs)
{
    uint64_t m = 0;
    char code[4];
    while (*langs) {
        size_t n = strcspn(langs, " ");
        if (n < sizeof code) {
            memcpy(code, langs, n);
            code[n] = '\0';
            int i = slda_lang_index(tok, code);
            if (i >= 0)
                m |= LANG_BIT(i);
        }
        langs += n;
        while (*langs == ' ')
            langs++;
    }
    return m;
}

void slda_lang_hints(slda_tokenizer_t *tok)
{
    size_t n = sizeof hints / sizeof hints[0];
    tok->nhints = 0;
    for (size_t i = 0; i < n && i < HINTS_MAX; i++) {
        tok->hint_cp[tok->nhints] = hints[i].cp;
        tok->hint_mask[tok->nhints++] = hint_mask(tok, hints[i].langs);
    }
}

uint64_t slda_lang_hint(const slda_tokenizer_t *tok, uint32_t cp)
{
    size_t lo = 0, hi = tok->nhints;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tok->hint_cp[mid] == cp)
            return tok->hint_mask[mid];
        if (tok->hint_cp[mid] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

void slda_lang_vote(double *vote, uint64_t mask, double weight)
{
    while (mask) {
        int b = __builtin_ctzll(mask);
        vote[b] += weight;
        mask &= mask - 1;
    }
}

/* Each language's script and tie rank: the same for every tokenizer, so worked out once. */
static unsigned char script_of_lang[LANG_MAX];
static uint16_t rank_of_lang[LANG_MAX];
static pthread_once_t lang_once = PTHREAD_ONCE_INIT;

static void lang_tables(void)
{
    uint32_t nlang = slda_nautolists < LANG_MAX ? (uint32_t)slda_nautolists : LANG_MAX;
    for (uint32_t l = 0; l < nlang; l++) {
        uint32_t count[SCRIPT__COUNT] = {0};
        const char *name = slda_autolists[l].list;
        script_of_lang[l] = SCRIPT_NONE;
        for (size_t s = 0; s < slda_nstoplists; s++) {
            if (strcmp(slda_stoplists[s].name, name))
                continue;
            for (size_t w = 0; w < slda_stoplists[s].n; w++) {
                const unsigned char *p = (const unsigned char *)slda_stoplists[s].words[w];
                size_t i = 0, len = strlen((const char *)p);
                while (i < len)
                    count[slda_script_of(slda_utf8_decode(p, &i))]++;
            }
        }
        for (int sc = SCRIPT_NONE + 1; sc < SCRIPT__COUNT; sc++)
            if (count[sc] > count[script_of_lang[l]])
                script_of_lang[l] = (unsigned char)sc;
        size_t n = sizeof tie_order / sizeof tie_order[0];
        rank_of_lang[l] = (uint16_t)(n + l);
        for (size_t r = 0; r < n; r++)
            if (!strcmp(tie_order[r], slda_autolists[l].lang))
                rank_of_lang[l] = (uint16_t)r;
    }
}

void slda_lang_scripts(slda_tokenizer_t *tok)
{
    pthread_once(&lang_once, lang_tables);
    memcpy(tok->lang_script, script_of_lang, sizeof tok->lang_script);
    memcpy(tok->lang_rank, rank_of_lang, sizeof tok->lang_rank);
}

int slda_lang_decide(const slda_tokenizer_t *tok, const uint32_t *script, const double *vote)
{
    uint64_t best_count = 0;
    int best = SCRIPT_NONE, cands = 0, winner = -1;
    for (int sc = SCRIPT_NONE + 1; sc < SCRIPT__COUNT; sc++) {
        uint64_t c = script[sc];
        if (sc == SCRIPT_HAN || sc == SCRIPT_KANA)
            c *= 3;
        if (c > best_count) {
            best_count = c;
            best = sc;
        }
    }
    if (best == SCRIPT_NONE)
        return -1;
    if (best == SCRIPT_HAN || best == SCRIPT_KANA ||
        6 * ((uint64_t)script[SCRIPT_HAN] + script[SCRIPT_KANA]) >= best_count)
        if (script[SCRIPT_HAN] + script[SCRIPT_KANA] > 0)
            best = (uint64_t)script[SCRIPT_KANA] * 10 >=
                           (uint64_t)script[SCRIPT_HAN] + script[SCRIPT_KANA]
                       ? SCRIPT_KANA
                       : SCRIPT_HAN;
    double top = 0;
    for (uint32_t l = 0; l < tok->nlang; l++) {
        if (tok->lang_script[l] != best)
            continue;
        cands++;
        if (winner < 0 || vote[l + 1] > top ||
            (vote[l + 1] == top && tok->lang_rank[l] < tok->lang_rank[winner])) {
            top = vote[l + 1];
            winner = (int)l;
        }
    }
    if (cands == 0)
        return -1;
    return winner;
}
