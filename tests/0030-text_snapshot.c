/* 0030-text_snapshot.c - a model's text.* rules and stop-word setting survive a snapshot round trip.
 *
 * infer must tokenise like training did, so the snapshot records the rules
 * the model's tokenizer applies (also after slda_model_set_tokenizer swapped
 * it for one built from another configuration), a decoded model rebuilds the
 * same tokenizer (built-in and inline stop words; a stop-word file is never
 * opened on decode), snapshots written before the rules existed load with
 * every rule off (their tokenizer), an unknown rule value is refused, and a
 * snapshot made with another ICU version is named in a warning.
 */
#include "core/config.h"
#include "engine/model.h"
#include "core/slda_int.h"
#include "io/snapshot.h"
#include "testutil.h"
#include "text/tokenize.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char errbuf[1024];

static const char *toks(const slda_tokenizer_t *tok, const char *text)
{
    static slda_test_tokens_t j;
    memset(&j, 0, sizeof j);
    if (slda_tokenize(tok, text, strlen(text), slda_test_on_token, &j, errbuf, sizeof errbuf) !=
        SLDA_OK)
        snprintf(j.out, sizeof j.out, "ERR %s", errbuf);
    return j.out;
}

static const char sample[] =
    "RT @bob: Don't miss https://t.co/x1 &amp; #Debt talks, abc123 2024 O'Brien's rt via stop";

static slda_conf_t *conf_with(const char *const *kv)
{
    slda_conf_t *conf = slda_conf_new();
    CHECK_INT(slda_conf_set(conf, "topics", "3", errbuf, sizeof errbuf), SLDA_OK);
    CHECK_INT(slda_conf_set(conf, "vocab.capacity", "64", errbuf, sizeof errbuf), SLDA_OK);
    CHECK_INT(slda_conf_set(conf, "text.min.length", "2", errbuf, sizeof errbuf), SLDA_OK);
    for (; kv && kv[0]; kv += 2) {
        slda_err_t e = slda_conf_set(conf, kv[0], kv[1], errbuf, sizeof errbuf);
        if (e != SLDA_OK)
            fprintf(stderr, "  %s=%s: %s\n", kv[0], kv[1], errbuf);
        CHECK_INT(e, SLDA_OK);
    }
    return conf;
}

static slda_model_t *round_trip(const slda_model_t *model)
{
    void *buf = NULL;
    size_t len = 0;
    slda_err_t err = SLDA_ERR__COUNT;
    slda_model_t *back = NULL;
    CHECK_INT(slda_snapshot_encode(model, &buf, &len, errbuf, sizeof errbuf), SLDA_OK);
    if (buf)
        back = slda_snapshot_decode(buf, len, &err, errbuf, sizeof errbuf);
    if (!back)
        fprintf(stderr, "  decode: %s\n", errbuf);
    CHECK_INT(err, SLDA_OK);
    free(buf);
    return back;
}

static void check_rules(const slda_text_rules_t *got, const slda_text_rules_t *want)
{
    CHECK_INT(got->urls, want->urls);
    CHECK_INT(got->html, want->html);
    CHECK_INT(got->mentions, want->mentions);
    CHECK_INT(got->hashtags, want->hashtags);
    CHECK_INT(got->apostrophes, want->apostrophes);
    CHECK_INT(got->digits, want->digits);
    CHECK_INT(got->segment, want->segment);
}

/* Every rule at a non-default value, plus a composed stop list. */
static void test_round_trip(void)
{
    char *dir = slda_test_tmpdir(), path[4200], spec[4300];
    snprintf(path, sizeof path, "%s/stop.txt", dir);
    CHECK_INT(slda_test_write_file(path, "talks\n"), 0);
    snprintf(spec, sizeof spec, "smart+%s+rt,via", path);
    const char *kv[] = {"text.urls", "keep", "text.html", "keep", "text.mentions", "keep",
                        "text.hashtags", "drop", "text.apostrophes", "split", "text.digits",
                        "mixed", "text.stopwords", spec, NULL};
    slda_conf_t *conf = conf_with(kv);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf), *back;
    CHECK_TRUE(model != NULL, "%s", errbuf);
    if (!model)
        goto out;
    /* split: don, t (short), O, Brien, s; co and via are SMART words, talks is the file's */
    const char *before = "bob|don|miss|https|x1|amp|abc123|brien|stop";
    CHECK_STR(toks(model->tok, sample), before);
    back = round_trip(model);
    if (back) {
        check_rules(slda_tokenizer_rules(back->tok), &conf->p.text);
        CHECK_STR(back->p.stopwords, spec); /* the whole setting is kept */
        /* tokenises as training did, except the file's words: never opened on decode */
        CHECK_STR(toks(back->tok, sample), "bob|don|miss|https|x1|amp|talks|abc123|brien|stop");
        /* a program that trusts the path rebuilds the tokenizer: identical again */
        CHECK_INT(slda_model_set_tokenizer(back, conf, errbuf, sizeof errbuf), SLDA_OK);
        CHECK_STR(toks(back->tok, sample), before);
        slda_model_destroy(back);
    }
    slda_model_destroy(model);
out:
    slda_conf_destroy(conf);
    remove(path);
    remove(dir);
    free(dir);
}

/* The defaults round trip as the defaults. */
static void test_defaults(void)
{
    slda_conf_t *conf = conf_with(NULL);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf), *back;
    CHECK_TRUE(model != NULL, "%s", errbuf);
    if (!model)
        goto out;
    /* text.stopwords=auto: "miss" is in some language's list, so it waits for the language */
    CHECK_STR(toks(model->tok, sample), "rt|debt|talks|o'brien|rt|miss|stop");
    back = round_trip(model);
    if (back) {
        check_rules(slda_tokenizer_rules(back->tok), &conf->p.text);
        CHECK_STR(toks(back->tok, sample), "rt|debt|talks|o'brien|rt|miss|stop");
        slda_model_destroy(back);
    }
    slda_model_destroy(model);
out:
    slda_conf_destroy(conf);
}

/* A tokenizer swapped in from another configuration is what gets recorded. */
static void test_set_tokenizer(void)
{
    const char *kv[] = {"text.digits", "keep", "text.urls", "keep", NULL};
    slda_conf_t *conf = conf_with(NULL), *other = conf_with(kv);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf), *back;
    CHECK_TRUE(model != NULL, "%s", errbuf);
    if (!model)
        goto out;
    CHECK_INT(slda_model_set_tokenizer(model, other, errbuf, sizeof errbuf), SLDA_OK);
    back = round_trip(model);
    if (back) {
        check_rules(slda_tokenizer_rules(back->tok), &other->p.text);
        CHECK_STR(toks(back->tok, "abc123 https://x.org"), "abc123|https|org");
        slda_model_destroy(back);
    }
    slda_model_destroy(model);
out:
    slda_conf_destroy(conf);
    slda_conf_destroy(other);
}

static void fixture_path(char *out, size_t size)
{
    const char *src = getenv("SLDA_SOURCE_DIR");
    const char *slash = strrchr(__FILE__, '/');
    if (src && *src)
        snprintf(out, size, "%s/tests/fixtures/snapshot-v1-k3.slda", src);
    else
        snprintf(out, size, "%.*s/fixtures/snapshot-v1-k3.slda",
                 slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
}

/* A snapshot written before the rules: no text.* rule keys, every rule off. */
static void test_old_snapshot(void)
{
    static const slda_text_rules_t legacy = {
        SLDA_TEXT_URLS_KEEP,  SLDA_TEXT_HTML_KEEP,  SLDA_TEXT_MENTIONS_KEEP,
        SLDA_TEXT_HASHTAGS_KEEP, SLDA_TEXT_APOS_SPLIT, SLDA_TEXT_DIGITS_SPLIT,
        SLDA_TEXT_SEGMENT_SIMPLE, 50, 0};
    char path[4200];
    slda_err_t err = SLDA_ERR__COUNT;
    fixture_path(path, sizeof path);
    slda_model_t *model = slda_snapshot_read(path, &err, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_OK);
    if (!model) {
        fprintf(stderr, "  %s: %s\n", path, errbuf);
        return;
    }
    check_rules(slda_tokenizer_rules(model->tok), &legacy);
    check_rules(&model->p.text, &legacy);
    slda_params_t p = model->p;
    p.stopwords = "none";
    p.min_length = 1;
    slda_tokenizer_t *plain = slda_tokenizer_new(&p, errbuf, sizeof errbuf);
    CHECK_TRUE(plain != NULL, "%s", errbuf);
    if (plain)
        CHECK_STR(toks(plain, "don't abc123 https://x.co &amp; @bob"),
                  "don|t|abc|https|x|co|amp|bob");
    slda_tokenizer_destroy(plain);
    /* and written again, it says so */
    slda_model_t *back = round_trip(model);
    if (back)
        check_rules(slda_tokenizer_rules(back->tok), &legacy);
    slda_model_destroy(back);
    slda_model_destroy(model);
}

/* Replace the first occurrence of from (same length as to) and fix the trailer. */
static int patch(unsigned char *buf, size_t len, const char *from, const char *to)
{
    size_t n = strlen(from);
    for (size_t i = 0; i + n <= len - SLDA_SNAP_TRAILER_LEN; i++) {
        if (memcmp(buf + i, from, n) == 0) {
            memcpy(buf + i, to, n);
            uint64_t h = slda_hash64(buf, len - SLDA_SNAP_TRAILER_LEN, 0);
            for (int b = 0; b < 8; b++)
                buf[len - SLDA_SNAP_TRAILER_LEN + b] = (unsigned char)(h >> (56 - 8 * b));
            return 1;
        }
    }
    return 0;
}

static void test_bad_value(void)
{
    const char *kv[] = {"text.digits", "mixed", NULL};
    slda_conf_t *conf = conf_with(kv);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf);
    void *buf = NULL;
    size_t len = 0;
    slda_err_t err = SLDA_OK;
    CHECK_TRUE(model != NULL, "%s", errbuf);
    if (model && slda_snapshot_encode(model, &buf, &len, errbuf, sizeof errbuf) == SLDA_OK) {
        CHECK(patch(buf, len, "\xa5mixed", "\xa5mixex"));
        slda_model_t *back = slda_snapshot_decode(buf, len, &err, errbuf, sizeof errbuf);
        CHECK_NULL(back);
        CHECK_INT(err, SLDA_ERR_CORRUPT);
        CHECK_CONTAINS(errbuf, "params \"text.digits\": unknown value \"mixex\"");
        slda_model_destroy(back);
    }
    free(buf);
    slda_model_destroy(model);
    slda_conf_destroy(conf);
}

/* text.icu: the ICU major version is stored; a snapshot whose version is not this program's
 * loads (the tokenizer notes it) and the command line warns, naming both. */
static void test_icu_version(void)
{
    slda_conf_t *conf = conf_with(NULL);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf), *back;
    void *buf = NULL;
    size_t len = 0;
    slda_err_t err = SLDA_ERR__COUNT;
    static const char key[] = "\xa8text.icu"; /* a MessagePack fixstr of 8 bytes */
    uint32_t major = slda_tokenizer_icu_major();
    CHECK_TRUE(model != NULL, "%s", errbuf);
    if (!model)
        goto out;
    CHECK_INT(slda_tokenizer_rules(model->tok)->icu, major);
    CHECK_INT(slda_snapshot_encode(model, &buf, &len, errbuf, sizeof errbuf), SLDA_OK);
    unsigned char *p = buf ? memmem(buf, len, key, sizeof key - 1) : NULL;
    CHECK_TRUE(p != NULL && major < 128 && p[sizeof key - 1] == major, "text.icu not stored");
    if (!p || major >= 128 || major == 60)
        goto out;
    p[sizeof key - 1] = 60; /* as made with ICU 60: a positive fixint, and the trailer again */
    uint64_t h = slda_hash64(buf, len - 8, 0);
    for (int i = 0; i < 8; i++)
        ((unsigned char *)buf)[len - 8 + i] = (unsigned char)(h >> (8 * (7 - i)));
    back = slda_snapshot_decode(buf, len, &err, errbuf, sizeof errbuf);
    CHECK_TRUE(back != NULL, "%s", errbuf);
    if (back) {
        CHECK_INT(slda_tokenizer_icu_trained(back->tok), 60);
        CHECK_INT(slda_tokenizer_rules(back->tok)->icu, major); /* words cut by this ICU */
        slda_model_destroy(back);
    }
    const char *exe = getenv("STREAMLDA");
    char *dir = slda_test_tmpdir(), path[4200], cmd[8600], out[1024] = "";
    snprintf(path, sizeof path, "%s/icu60.slda", dir);
    FILE *f = fopen(path, "wb");
    CHECK_TRUE(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0, "write %s", path);
    if (exe) {
        snprintf(cmd, sizeof cmd, "'%s' infer '%s' </dev/null 2>&1", exe, path);
        FILE *pp = popen(cmd, "r");
        size_t n = pp ? fread(out, 1, sizeof out - 1, pp) : 0;
        out[n] = '\0';
        if (pp)
            pclose(pp);
        char want[128];
        snprintf(want, sizeof want, "was made with ICU 60, this program has ICU %u", major);
        CHECK_CONTAINS(out, want);
    }
    remove(path);
    remove(dir);
    free(dir);
out:
    free(buf);
    slda_model_destroy(model);
    slda_conf_destroy(conf);
}

int main(void)
{
    test_round_trip();
    test_defaults();
    test_set_tokenizer();
    test_old_snapshot();
    test_bad_value();
    test_icu_version();
    return slda_test_done("0030-text_snapshot");
}
