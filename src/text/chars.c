/* chars.c - the simple tokenizer's character classes: which code points are letters, and lower case.
 *
 * What counts as a letter (slda_char_is_letter; a deliberate approximation
 * without Unicode tables, the rule of text.segment=simple and of every
 * snapshot made before text.segment existed, so it never changes):
 *   - ASCII a-z and A-Z; digits, apostrophes, punctuation and controls split;
 *   - in U+0080..U+00BF only the feminine/masculine ordinals and micro sign;
 *   - U+00C0..U+036F except the multiplication and division signs: Latin-1
 *     letters, Latin Extended-A/B, IPA, modifier letters and combining marks
 *     (so a decomposed accent stays inside its word);
 *   - everything from U+0370 on, except the punctuation, digit and symbol
 *     ranges listed in nonletters[] below (general punctuation to the
 *     misc-symbol blocks U+2000-U+2BFF, CJK punctuation U+3000-U+303F,
 *     fullwidth punctuation and digits, private use, emoji, ...).
 *   Scripts written without spaces (CJK, Thai) therefore come out as one
 *   token per run in the simple mode.
 * Lower-casing (slda_char_lower) covers ASCII, Latin-1 (U+00C0-U+00DE except
 * U+00D7), Latin Extended-A (case pairs, U+0130 -> i, U+0178 -> U+00FF),
 * Greek (U+0391-U+03AB and the accented capitals) and Cyrillic
 * (U+0400-U+042F); other code points are kept. No mapping makes the UTF-8
 * longer, so a normalised token never exceeds its raw bytes. Pure functions:
 * any thread.
 */
#include "text/tokenize.h"

/* Code points >= U+0370 that are not letters: punctuation, digits, symbols,
 * format and private-use ranges. Sorted, non-overlapping. */
static const struct {
    uint32_t lo, hi;
} nonletters[] = {
    {0x037E, 0x037E},   {0x0387, 0x0387},   /* Greek question mark, ano teleia */
    {0x055A, 0x055F},   {0x0589, 0x058A},   /* Armenian punctuation */
    {0x05BE, 0x05BE},   {0x05C0, 0x05C0},   {0x05C3, 0x05C3}, {0x05C6, 0x05C6},
    {0x05F3, 0x05F4},                       /* Hebrew punctuation */
    {0x0600, 0x060F},   {0x061B, 0x061F},   /* Arabic signs and punctuation */
    {0x0660, 0x066D},   {0x06D4, 0x06D4},   {0x06F0, 0x06F9}, /* Arabic digits, stop */
    {0x0964, 0x096F},                       /* Devanagari danda, digits */
    {0x0E50, 0x0E59},                       /* Thai digits */
    {0x1680, 0x1680},                       /* Ogham space */
    {0x2000, 0x2BFF},                       /* General Punctuation .. Misc Symbols/Arrows */
    {0x2E00, 0x2E7F},                       /* Supplemental Punctuation */
    {0x3000, 0x303F},                       /* CJK Symbols and Punctuation */
    {0xD800, 0xF8FF},                       /* surrogates, Private Use Area */
    {0xFD3E, 0xFD3F},                       /* ornate parentheses */
    {0xFE00, 0xFE1F},                       /* variation selectors, vertical forms */
    {0xFE30, 0xFE6F},                       /* CJK compatibility, small form variants */
    {0xFEFF, 0xFEFF},                       /* byte order mark */
    {0xFF00, 0xFF20},   {0xFF3B, 0xFF40},   {0xFF5B, 0xFF65}, /* fullwidth punct/digits */
    {0xFFE0, 0xFFFF},                       /* fullwidth signs, specials */
    {0x1F000, 0x1FBFF},                     /* Mahjong .. Legacy Computing (emoji) */
    {0xE0000, 0xE01EF},                     /* tags, variation selectors supplement */
    {0xF0000, 0x10FFFF},                    /* supplementary private use */
};

static int in_nonletters(uint32_t cp)
{
    size_t lo = 0, hi = sizeof nonletters / sizeof nonletters[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < nonletters[mid].lo)
            hi = mid;
        else if (cp > nonletters[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

int slda_char_is_letter(uint32_t cp)
{
    if (cp < 0x80)
        return (uint32_t)((cp | 0x20) - 'a') < 26;
    if (cp < 0xC0)
        return cp == 0xAA || cp == 0xB5 || cp == 0xBA;
    if (cp < 0x370)
        return cp != 0xD7 && cp != 0xF7;
    return !in_nonletters(cp);
}

static uint32_t lower_latin_ext_a(uint32_t cp)
{
    if (cp == 0x130)
        return 'i'; /* I with dot above: simple case mapping */
    if (cp == 0x178)
        return 0xFF; /* Y with diaeresis */
    if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E))
        return (cp & 1) ? cp + 1 : cp; /* odd capitals */
    if (cp <= 0x137 || (cp >= 0x14A && cp <= 0x177))
        return (cp & 1) ? cp : cp + 1; /* even capitals */
    return cp; /* U+0138, U+0149, U+017F are lower case already */
}

static uint32_t lower_greek(uint32_t cp)
{
    if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2)
        return cp + 0x20;
    switch (cp) {
    case 0x386: return 0x3AC;
    case 0x388: return 0x3AD;
    case 0x389: return 0x3AE;
    case 0x38A: return 0x3AF;
    case 0x38C: return 0x3CC;
    case 0x38E: return 0x3CD;
    case 0x38F: return 0x3CE;
    default: return cp;
    }
}

uint32_t slda_char_lower(uint32_t cp)
{
    if (cp < 0x80)
        return (cp >= 'A' && cp <= 'Z') ? cp + 0x20 : cp;
    if (cp < 0x100)
        return (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ? cp + 0x20 : cp;
    if (cp < 0x180)
        return lower_latin_ext_a(cp);
    if (cp >= 0x386 && cp <= 0x3AB)
        return lower_greek(cp);
    if (cp >= 0x400 && cp <= 0x40F)
        return cp + 0x50;
    if (cp >= 0x410 && cp <= 0x42F)
        return cp + 0x20;
    return cp;
}
