/* unit_json.c - the JSON parser: valid and invalid documents, escapes, surrogates, depth. */
#include "core/json.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static slda_json_t js;
static char err[256];

static slda_err_t parse(const char *s)
{
    err[0] = '\0';
    return slda_json_parse(&js, s, strlen(s), err, sizeof err);
}

/* Unescaped value of string node (static buffer). */
static const char *str(uint32_t node)
{
    static char buf[1024];
    if (node == SLDA_JSON_NONE || js.nodes[node].type != SLDA_JSON_STRING)
        return "(not a string)";
    slda_json_string(&js, node, buf);
    return buf;
}

static void test_valid(void)
{
    CHECK_INT(parse(" {\"id\": 7, \"text\": \"hello\", \"x\": [1, -2.5e+3, true, false, null, {}, []]} "),
              SLDA_OK);
    CHECK_INT(js.nodes[0].type, SLDA_JSON_OBJECT);
    CHECK_INT(js.nodes[0].size, 3);
    uint32_t id = slda_json_object_get(&js, 0, "id");
    CHECK_NE(id, SLDA_JSON_NONE);
    CHECK_INT(js.nodes[id].type, SLDA_JSON_NUMBER);
    CHECK_INT(js.nodes[id].end - js.nodes[id].start, 1);
    CHECK_STR(str(slda_json_object_get(&js, 0, "text")), "hello");
    CHECK_INT(slda_json_object_get(&js, 0, "missing"), SLDA_JSON_NONE);
    uint32_t x = slda_json_object_get(&js, 0, "x");
    CHECK_INT(js.nodes[x].type, SLDA_JSON_ARRAY);
    CHECK_INT(js.nodes[x].size, 7);
    /* Walk the array with first/next. */
    static const slda_json_type_t want[] = {SLDA_JSON_NUMBER, SLDA_JSON_NUMBER, SLDA_JSON_TRUE,
                                            SLDA_JSON_FALSE,  SLDA_JSON_NULL,   SLDA_JSON_OBJECT,
                                            SLDA_JSON_ARRAY};
    uint32_t e = slda_json_first(&js, x);
    for (int i = 0; i < 7; i++) {
        CHECK_NE(e, SLDA_JSON_NONE);
        if (e == SLDA_JSON_NONE)
            break;
        CHECK_INT(js.nodes[e].type, want[i]);
        e = js.nodes[e].next;
    }
    CHECK_INT(e, js.n); /* past the end of the tree */
    CHECK_INT(slda_json_first(&js, slda_json_object_get(&js, 0, "id")), SLDA_JSON_NONE);

    /* Scalars at the root, numbers in all their forms. */
    static const char *const ok[] = {"0", "-0", "12", "1.5", "-0.25e-7", "1E9", "true", "null",
                                     "\"\"", "[]", "{}", "[[[]]]", "\"\\u0000\""};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (parse(ok[i]) != SLDA_OK)
            fprintf(stderr, "valid JSON %s rejected: %s\n", ok[i], err);
        CHECK_INT(parse(ok[i]), SLDA_OK);
    }
    /* Nested objects: the second "a" is inside "b" and must not be found. */
    CHECK_INT(parse("{\"b\": {\"a\": 1}, \"c\": [\"a\"], \"a\": \"top\"}"), SLDA_OK);
    CHECK_STR(str(slda_json_object_get(&js, 0, "a")), "top");
    /* Duplicate keys: the first wins. */
    CHECK_INT(parse("{\"k\": \"one\", \"k\": \"two\"}"), SLDA_OK);
    CHECK_STR(str(slda_json_object_get(&js, 0, "k")), "one");
}

static void test_escapes(void)
{
    CHECK_INT(parse("\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\""), SLDA_OK);
    CHECK_STR(str(0), "a\"b\\c/d\be\ff\ng\rh\ti");
    CHECK_INT(parse("\"\\u00e9\\u00C9 \\u20AC \\u4e2d\""), SLDA_OK);
    CHECK_STR(str(0), "éÉ € 中");
    /* Surrogate pair -> one 4-byte character (U+1F600). */
    CHECK_INT(parse("\"x\\uD83D\\uDE00y\""), SLDA_OK);
    CHECK_STR(str(0), "x\xF0\x9F\x98\x80y");
    CHECK_INT(parse("\"\\udbff\\udfff\""), SLDA_OK); /* U+10FFFF */
    CHECK_STR(str(0), "\xF4\x8F\xBF\xBF");
    /* \u0000 decodes to a NUL inside the string. */
    char buf[16];
    CHECK_INT(parse("\"a\\u0000b\""), SLDA_OK);
    CHECK_INT(slda_json_string(&js, 0, buf), 3);
    CHECK_MEM(buf, "a\0b", 3);
    /* Raw UTF-8 passes through. */
    CHECK_INT(parse("\"Grüße\""), SLDA_OK);
    CHECK_STR(str(0), "Grüße");
    /* Keys with escapes are compared unescaped. */
    CHECK_INT(parse("{\"t\\u0065xt\": \"v\"}"), SLDA_OK);
    CHECK_STR(str(slda_json_object_get(&js, 0, "text")), "v");
}

static void test_invalid(void)
{
    static const struct {
        const char *text;
        const char *problem;
    } bad[] = {
        {"", "empty input at byte 0"},
        {"   ", "empty input"},
        {"{", "expected a string key in object at byte 1"},
        {"{\"a\" 1}", "expected ':' after an object key at byte 5"},
        {"{\"a\":1,}", "expected a string key in object"},
        {"{\"a\":1 \"b\":2}", "expected ',' or '}' in object at byte 7"},
        {"[1,]", "unexpected character at byte 3"},
        {"[1 2]", "expected ',' or ']' in array at byte 3"},
        {"[1", "expected ',' or ']' in array at byte 2"},
        {"{a:1}", "expected a string key"},
        {"'x'", "unexpected character at byte 0"},
        {"\"abc", "unterminated string at byte 0"},
        {"\"ab\\", "unterminated string"},
        {"\"a\\x\"", "invalid escape in string at byte 2"},
        {"\"a\tb\"", "control character in string at byte 2"},
        {"\"\\u12G4\"", "invalid \\u escape"},
        {"\"\\u12\"", "invalid \\u escape"},
        {"\"\\uDC00\"", "unpaired low surrogate"},
        {"\"\\uD800\"", "high surrogate in \\u escape not followed by a low surrogate"},
        {"\"\\uD800\\u0041\"", "not followed by a low surrogate"},
        {"\"\\uD800x\"", "not followed by a low surrogate"},
        {"\"ok\xff\"", "invalid UTF-8 in string (byte not allowed in UTF-8) at byte 3"},
        {"\"\xC0\xAF\"", "invalid UTF-8 in string (overlong encoding) at byte 1"},
        {"\"\xED\xA0\x80\"", "surrogate code point"},
        {"\"\xE2\x82\"", "truncated sequence"},
        {"01", "unexpected data after the value at byte 1"},
        {"-", "invalid number"},
        {"1.", "no digits after '.'"},
        {"1e", "no digits in exponent"},
        {"+1", "unexpected character"},
        {".5", "unexpected character"},
        {"tru", "invalid literal"},
        {"nulll", "unexpected data after the value"},
        {"NaN", "unexpected character"},
        {"{} {}", "unexpected data after the value at byte 3"},
        {"{\"a\":}", "unexpected character at byte 5"},
        {"[\"a\":1]", "expected ',' or ']'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        slda_err_t e = parse(bad[i].text);
        if (e != SLDA_ERR_PARSE)
            fprintf(stderr, "case %zu: %s accepted\n", i, bad[i].text);
        CHECK_INT(e, SLDA_ERR_PARSE);
        CHECK_CONTAINS(err, bad[i].problem);
    }
}

static void test_depth(void)
{
    char deep[2 * SLDA_JSON_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < SLDA_JSON_MAX_DEPTH; i++)
        deep[n++] = '[';
    for (int i = 0; i < SLDA_JSON_MAX_DEPTH; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    CHECK_INT(parse(deep), SLDA_OK); /* exactly the limit */
    /* 65 levels (also unterminated): refused for depth, not run to the end. */
    CHECK_INT(parse("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["),
              SLDA_ERR_PARSE);
    CHECK_CONTAINS(err, "nesting too deep at byte 64");
    /* A very deep input must not recurse without bound. */
    size_t big = 1000000;
    char *p = malloc(big);
    memset(p, '[', big);
    err[0] = '\0';
    CHECK_INT(slda_json_parse(&js, p, big, err, sizeof err), SLDA_ERR_PARSE);
    CHECK_CONTAINS(err, "nesting too deep");
    free(p);
}

/* The parser reads only len bytes: a buffer without terminator, cut at every point. */
static void test_prefixes(void)
{
    const char *doc = "{\"id\":\"a\\u00e9\\ud83d\\ude00\",\"tokens\":[\"x\",12.5e-1,true,null]}";
    size_t len = strlen(doc);
    int accepted = 0;
    for (size_t cut = 0; cut < len; cut++) {
        char *copy = malloc(cut ? cut : 1);
        memcpy(copy, doc, cut);
        if (slda_json_parse(&js, copy, cut, err, sizeof err) == SLDA_OK)
            accepted++;
        free(copy);
    }
    CHECK_INT(accepted, 0);
    CHECK_INT(slda_json_parse(&js, doc, len, err, sizeof err), SLDA_OK);
    CHECK_STR(str(slda_json_object_get(&js, 0, "id")), "aé\xF0\x9F\x98\x80");
    CHECK_STR(slda_json_type_name(SLDA_JSON_ARRAY), "array");
}

int main(void)
{
    slda_json_init(&js);
    test_valid();
    test_escapes();
    test_invalid();
    test_depth();
    test_prefixes();
    slda_json_clear(&js);
    slda_json_clear(NULL);
    return slda_test_done("unit_json");
}
