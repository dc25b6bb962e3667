/* unit_config.c - the property table: defaults, set/get, files, environment, listings. */
#include "core/config.h"
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[1024];

/* Set name=value; return the code, leaving the reason in err. */
static slda_err_t set(slda_conf_t *conf, const char *name, const char *value)
{
    err[0] = '\0';
    return slda_conf_set(conf, name, value, err, sizeof err);
}

/* The current value of name, in a static buffer ("<unknown>" if none). */
static const char *get(const slda_conf_t *conf, const char *name)
{
    static char buf[256];
    if (slda_conf_get(conf, name, buf, sizeof buf) != SLDA_OK)
        return "<unknown>";
    return buf;
}

/* Everything slda_conf_dump or slda_conf_print_table prints, malloc'ed. */
static char *capture(const slda_conf_t *conf, int what)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (what == 0)
        slda_conf_dump(conf, f);
    else
        slda_conf_print_table(f, what - 1);
    fclose(f);
    return text;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0;
    FILE *mem;
    char chunk[4096];
    size_t n;
    if (!f)
        return NULL;
    mem = open_memstream(&text, &len);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, mem);
    fclose(f);
    fclose(mem);
    return text;
}

/* A path under $SLDA_SOURCE_DIR, or NULL (with a failed check) when it is unset. */
static char *source_path(const char *rel)
{
    const char *dir = getenv("SLDA_SOURCE_DIR");
    char *path;
    if (!dir || !*dir) {
        CHECK_TRUE(dir && *dir, "SLDA_SOURCE_DIR is not set (ctest sets it to the source tree)");
        return NULL;
    }
    path = malloc(strlen(dir) + strlen(rel) + 2);
    sprintf(path, "%s/%s", dir, rel);
    return path;
}

static void test_table(void)
{
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    CHECK_GE(n, 40);
    for (size_t i = 0; i < n; i++) {
        char env_i[128];
        CHECK_TRUE(strncmp(props[i].name, "kafka.", 6) != 0, "%s", props[i].name);
        CHECK_TRUE(props[i].desc && strlen(props[i].desc) > 10, "%s: \"%s\"", props[i].name,
                   props[i].desc ? props[i].desc : "(null)");
        CHECK_PTR_EQ(slda_conf_prop_find(props[i].name), &props[i]);
        slda_conf_env_name(props[i].name, env_i, sizeof env_i);
        for (size_t j = i + 1; j < n; j++) {
            char env_j[128];
            slda_conf_env_name(props[j].name, env_j, sizeof env_j);
            if (!strcmp(env_i, env_j))
                fprintf(stderr, "keys %s and %s share %s\n", props[i].name, props[j].name, env_i);
            CHECK_NE(strcmp(env_i, env_j), 0);
        }
    }
    char env[64];
    slda_conf_env_name("rho.kappa", env, sizeof env);
    CHECK_STR(env, "SLDA_RHO_KAPPA");
    slda_conf_env_name("snapshot.every.ms", env, sizeof env);
    CHECK_STR(env, "SLDA_SNAPSHOT_EVERY_MS");
    CHECK_NULL(slda_conf_prop_find("nope"));
}

static void test_defaults(void)
{
    slda_conf_t *conf = slda_conf_new();
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    CHECK_INT(conf->p.topics, 100);
    CHECK_NEAR(conf->p.alpha, 0.1, 0);
    CHECK_NEAR(conf->p.eta, 0.1, 0);
    CHECK_INT(conf->p.alpha_learn, SLDA_ALPHA_FIXED);
    CHECK_INT(conf->p.vb, SLDA_VB_CVB0);
    CHECK_INT(conf->p.hybrid, 1);
    CHECK_INT(conf->p.threshold, 1);
    CHECK_INT(conf->p.burnin, 5);
    CHECK_INT(conf->p.samples, 5);
    CHECK_NEAR(conf->p.tolerance, 0, 0);
    CHECK_INT(conf->p.stats, SLDA_STATS_RB);
    CHECK_NEAR(conf->p.rho_s, 1, 0);
    CHECK_NEAR(conf->p.rho_tau, 1, 0);
    CHECK_NEAR(conf->p.rho_kappa, 0.7, 0);
    CHECK_NEAR(conf->p.rho_min, 0, 0);
    CHECK_NEAR(conf->p.corpus_tokens, 0, 0);
    CHECK_NEAR(conf->p.init_scale, 1, 0);
    CHECK_INT(conf->p.vocab_capacity, 131072);
    CHECK_NULL(conf->p.vocab_file);
    CHECK_INT(conf->p.seed, 42);
    CHECK_INT(conf->p.threads, 1);
    CHECK_STR(conf->p.stopwords, "auto");
    CHECK_INT(conf->p.min_length, 3);
    CHECK_INT(conf->p.max_doc_bytes, 1048576);
    CHECK_INT(conf->minibatch_docs, 16);
    CHECK_INT(conf->minibatch_ms, 1000);
    CHECK_INT(conf->heldout_modulo, 0);
    CHECK_INT(conf->progress_ms, 2000);
    CHECK_STR(conf->model_name, "streamlda");
    CHECK_STR(conf->input_topics, "documents");
    CHECK_INT(conf->input_format, SLDA_INFMT_AUTO);
    CHECK_INT(conf->input_max_bytes, 1048576);
    CHECK_STR(conf->snapshot_dir, "snapshots");
    CHECK_INT(conf->snapshot_keep, 3);
    CHECK_INT(conf->snapshot_every_batches, 100);
    CHECK_INT(conf->snapshot_every_ms, 60000);
    CHECK_STR(conf->snapshot_topic, "streamlda.snapshots");
    CHECK_INT(conf->snapshot_chunk_bytes, 900000);
    CHECK_STR(conf->output_topic, "");
    CHECK_INT(conf->output_top, 5);
    CHECK_STR(conf->deadletter_topic, "streamlda.deadletter");
    CHECK_INT(conf->http_port, 0); /* the live page on by default, a free port */
    CHECK_INT(conf->status_ms, 5000);
    CHECK_INT(slda_conf_kafka_count(conf), 0);
    /* Every default reads back as written in the table (canonical text). */
    for (size_t i = 0; i < n; i++)
        CHECK_STR(get(conf, props[i].name), props[i].def);
    slda_conf_destroy(conf);
    slda_conf_destroy(NULL);
}

/* A valid value of row prop that differs from its default. */
static void other_value(const slda_prop_t *prop, char *buf, size_t n)
{
    switch (prop->type) {
    case SLDA_PT_INT:
    case SLDA_PT_UINT:
        snprintf(buf, n, "%.0f", strtod(prop->def, NULL) == prop->max ? prop->min : prop->max);
        return;
    case SLDA_PT_UINT64: snprintf(buf, n, "18446744073709551615"); return;
    case SLDA_PT_DOUBLE:
        if (isinf(prop->max))
            snprintf(buf, n, "%.17g", strtod(prop->def, NULL) + 0.123456789);
        else
            snprintf(buf, n, "%.17g", prop->min + (prop->max - prop->min) / 3);
        return;
    case SLDA_PT_STRING: /* a name where the row takes names only (SLDA_PF_NAME, _TOPICS) */
        snprintf(buf, n, "%s", prop->flags & (SLDA_PF_NAME | SLDA_PF_TOPICS) ? "other.name_2"
                                                                           : "some/path with spaces");
        return;
    case SLDA_PT_ENUM:
    case SLDA_PT_LOCAL: {
        size_t k = 0;
        while (prop->values[k + 1])
            k++;
        snprintf(buf, n, "%s", !strcmp(prop->values[k], prop->def) ? prop->values[0]
                                                                      : prop->values[k]);
        return;
    }
    case SLDA_PT_BOOL: snprintf(buf, n, "%s", strcmp(prop->def, "true") ? "true" : "false");
        return;
    }
}

static void test_round_trip(void)
{
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    slda_conf_t *conf = slda_conf_new(), *again = slda_conf_new();
    for (size_t i = 0; i < n; i++) {
        char value[256], text[256];
        other_value(&props[i], value, sizeof value);
        CHECK_INT(set(conf, props[i].name, value), SLDA_OK);
        if (err[0])
            fprintf(stderr, "%s=%s: %s\n", props[i].name, value, err);
        snprintf(text, sizeof text, "%s", get(conf, props[i].name));
        if (!strcmp(text, props[i].def))
            fprintf(stderr, "%s: %s did not change the default\n", props[i].name, value);
        CHECK_NE(strcmp(text, props[i].def), 0);
        if (props[i].type == SLDA_PT_DOUBLE)
            CHECK_NEAR(strtod(text, NULL), strtod(value, NULL), 0);
        else
            CHECK_STR(text, value);
        /* What get prints, set accepts, and get then prints the same. */
        CHECK_INT(set(again, props[i].name, text), SLDA_OK);
        CHECK_STR(get(again, props[i].name), text);
    }
    /* Doubles print in the shortest form that reads back exactly. */
    CHECK_INT(set(conf, "alpha", "0.1"), SLDA_OK);
    CHECK_STR(get(conf, "alpha"), "0.1");
    CHECK_INT(set(conf, "alpha", "0.30000000000000004"), SLDA_OK);
    CHECK_STR(get(conf, "alpha"), "0.30000000000000004");
    CHECK_INT(set(conf, "rho.tau", "1e3"), SLDA_OK);
    CHECK_STR(get(conf, "rho.tau"), "1000");
    /* Enum names are case-insensitive and print canonically. */
    CHECK_INT(set(conf, "local", "SVB+CGS"), SLDA_OK);
    CHECK_INT(conf->p.vb, SLDA_VB_SVB);
    CHECK_INT(conf->p.hybrid, 1);
    CHECK_STR(get(conf, "local"), "svb+cgs");
    CHECK_INT(set(conf, "local", "cgs"), SLDA_OK);
    CHECK_INT(conf->p.vb, SLDA_VB_NONE);
    CHECK_INT(conf->p.hybrid, 0);
    CHECK_INT(set(conf, "input.format", "msgpack"), SLDA_OK);
    CHECK_INT(conf->input_format, SLDA_INFMT_MSGPACK);
    CHECK_INT(set(conf, "alpha.learn", "Newton"), SLDA_OK);
    CHECK_INT(conf->p.alpha_learn, SLDA_ALPHA_NEWTON);
    /* vocab.file: "" is NULL (open vocabulary), a path is kept. */
    CHECK_INT(set(conf, "vocab.file", "vocab.txt"), SLDA_OK);
    CHECK_STR(conf->p.vocab_file, "vocab.txt");
    CHECK_INT(set(conf, "vocab.file", ""), SLDA_OK);
    CHECK_NULL(conf->p.vocab_file);
    CHECK_STR(get(conf, "vocab.file"), "");
    CHECK_INT(set(conf, "output.topic", ""), SLDA_OK);
    CHECK_STR(conf->output_topic, "");
    CHECK_INT(set(conf, "text.stopwords", "/etc/my stop words.txt"), SLDA_OK);
    CHECK_STR(conf->p.stopwords, "/etc/my stop words.txt");
    CHECK_INT(set(conf, "http.port", "0"), SLDA_OK);
    CHECK_INT(conf->http_port, 0);
    CHECK_INT(set(conf, "seed", "+7"), SLDA_OK);
    CHECK_INT(conf->p.seed, 7);
    /* A too small buffer is reported, with a truncated copy. */
    char small[4];
    set(conf, "model.name", "streamlda");
    CHECK_INT(slda_conf_get(conf, "model.name", small, sizeof small), SLDA_ERR_TOO_LARGE);
    CHECK_STR(small, "str");
    CHECK_INT(slda_conf_get(conf, "nope", small, sizeof small), SLDA_ERR_UNKNOWN);
    slda_conf_destroy(conf);
    slda_conf_destroy(again);
}

/* name=value must fail with code and a message containing want; the old value stays. */
static void check_bad(slda_conf_t *conf, const char *name, const char *value, slda_err_t code,
                      const char *want)
{
    char before[256];
    snprintf(before, sizeof before, "%s", get(conf, name));
    CHECK_INT(set(conf, name, value), code);
    CHECK_CONTAINS(err, want);
    CHECK_STR(get(conf, name), before);
}

static void test_invalid(void)
{
    slda_conf_t *conf = slda_conf_new();
    const slda_err_t INV = SLDA_ERR_INVALID;
    CHECK_INT(set(conf, "rho.kappa", "2"), INV);
    CHECK_STR(err, "property \"rho.kappa\": value \"2\" out of range 0.5..1");
    check_bad(conf, "rho.kappa", "0.49", INV, "out of range 0.5..1");
    /* integer syntax */
    check_bad(conf, "topics", "abc", INV, "property \"topics\": value \"abc\" is not an integer");
    check_bad(conf, "topics", "12x", INV, "is not an integer");
    check_bad(conf, "topics", " 12", INV, "is not an integer");
    check_bad(conf, "topics", "12 ", INV, "is not an integer");
    check_bad(conf, "topics", "", INV, "is not an integer");
    check_bad(conf, "topics", "1.5", INV, "is not an integer");
    check_bad(conf, "topics", "0x10", INV, "is not an integer");
    check_bad(conf, "topics", "-", INV, "is not an integer");
    /* integer range and overflow */
    check_bad(conf, "topics", "0", INV, "value \"0\" out of range 1..16384");
    check_bad(conf, "topics", "16385", INV, "out of range 1..16384");
    check_bad(conf, "topics", "-1", INV, "out of range 1..16384");
    check_bad(conf, "topics", "99999999999999999999999", INV, "out of range");
    check_bad(conf, "vocab.capacity", "4294967296", INV, "out of range 16..268435456");
    check_bad(conf, "http.port", "65536", INV, "out of range -1..65535");
    check_bad(conf, "http.port", "-2", INV, "out of range -1..65535");
    check_bad(conf, "seed", "-1", INV, "out of range");
    check_bad(conf, "seed", "18446744073709551616", INV, "out of range");
    check_bad(conf, "seed", "1e3", INV, "is not an integer");
    check_bad(conf, "seed", "", INV, "is not an integer");
    /* doubles */
    check_bad(conf, "alpha", "0", INV, "value \"0\" out of range > 0");
    check_bad(conf, "alpha", "-0.5", INV, "out of range > 0");
    check_bad(conf, "alpha", "nan", INV, "is not a number");
    check_bad(conf, "alpha", "NaN", INV, "is not a number");
    check_bad(conf, "alpha", "-nan", INV, "is not a finite number");
    check_bad(conf, "alpha", "inf", INV, "is not a number");
    check_bad(conf, "alpha", "+inf", INV, "is not a finite number");
    check_bad(conf, "alpha", "1e999", INV, "is not a finite number");
    check_bad(conf, "alpha", "0.1x", INV, "is not a number");
    check_bad(conf, "alpha", " 0.1", INV, "is not a number");
    check_bad(conf, "alpha", "", INV, "is not a number");
    check_bad(conf, "rho.s", "0", INV, "out of range > 0 and <= 1000000");
    check_bad(conf, "rho.s", "1000001", INV, "out of range > 0 and <= 1000000");
    check_bad(conf, "corpus.tokens", "-1", INV, "out of range >= 0");
    /* enums and strings */
    check_bad(conf, "alpha.learn", "sometimes", INV,
              "property \"alpha.learn\": value \"sometimes\" is not one of off, fixedpoint, newton");
    check_bad(conf, "local", "gibbs", INV,
              "is not one of cgs, cvb0, cvb, svb, cvb0+cgs, cvb+cgs, svb+cgs");
    check_bad(conf, "local", "", INV, "is not one of");
    check_bad(conf, "input.format", "xml", INV, "is not one of auto, text, json, msgpack");
    check_bad(conf, "model.name", "", INV, "property \"model.name\": value must not be empty");
    check_bad(conf, "text.stopwords", "", INV, "must not be empty");
    check_bad(conf, "kafka.", "x", INV, "no librdkafka property");
    /* Errors without an errstr buffer are still reported by code. */
    CHECK_INT(slda_conf_set(conf, "topics", "0", NULL, 0), INV);
    CHECK_INT(slda_conf_set(conf, "topcs", "1", NULL, 0), SLDA_ERR_UNKNOWN);
    CHECK_INT(conf->p.topics, 100);
    slda_conf_destroy(conf);
}

static void test_unknown(void)
{
    slda_conf_t *conf = slda_conf_new();
    CHECK_INT(set(conf, "topcs", "10"), SLDA_ERR_UNKNOWN);
    CHECK_STR(err, "unknown property \"topcs\" (did you mean \"topics\"?)");
    CHECK_INT(set(conf, "rho.kapa", "0.6"), SLDA_ERR_UNKNOWN);
    CHECK_CONTAINS(err, "(did you mean \"rho.kappa\"?)");
    CHECK_INT(set(conf, "locl.burnin", "3"), SLDA_ERR_UNKNOWN);
    CHECK_CONTAINS(err, "(did you mean \"local.burnin\"?)");
    CHECK_INT(set(conf, "snapshot.evry.msx", "3"), SLDA_ERR_UNKNOWN);
    CHECK_CONTAINS(err, "(did you mean \"snapshot.every.ms\"?)");
    CHECK_INT(set(conf, "foo", "1"), SLDA_ERR_UNKNOWN);
    CHECK_STR(err, "unknown property \"foo\"");
    CHECK_INT(set(conf, "completely.different", "1"), SLDA_ERR_UNKNOWN);
    CHECK_NULL(strstr(err, "did you mean"));
    CHECK_INT(set(conf, "kafak.acks", "all"), SLDA_ERR_UNKNOWN);
    CHECK_STR(err, "unknown property \"kafak.acks\" (did you mean \"kafka.acks\"?)");
    CHECK_INT(set(conf, "TOPICS", "10"), SLDA_ERR_UNKNOWN); /* keys are case-sensitive */
    CHECK_INT(slda_conf_kafka_count(conf), 0);
    CHECK_INT(conf->p.topics, 100);
    slda_conf_destroy(conf);
}

static void test_kafka(void)
{
    slda_conf_t *conf = slda_conf_new();
    const char *name, *value;
    CHECK_INT(set(conf, "kafka.bootstrap.servers", "a:9092"), SLDA_OK);
    CHECK_INT(set(conf, "kafka.acks", "all"), SLDA_OK);
    CHECK_INT(set(conf, "kafka.no.such.librdkafka.key", " kept verbatim = yes "), SLDA_OK);
    CHECK_INT(set(conf, "kafka.bootstrap.servers", "b:9092,c:9092"), SLDA_OK);
    CHECK_INT(slda_conf_kafka_count(conf), 3);
    slda_conf_kafka_get(conf, 0, &name, &value);
    CHECK_STR(name, "bootstrap.servers");
    CHECK_STR(value, "b:9092,c:9092");
    slda_conf_kafka_get(conf, 1, &name, &value);
    CHECK_STR(name, "acks");
    CHECK_STR(value, "all");
    slda_conf_kafka_get(conf, 2, &name, &value);
    CHECK_STR(name, "no.such.librdkafka.key");
    CHECK_STR(value, " kept verbatim = yes ");
    slda_conf_kafka_get(conf, 3, &name, &value);
    CHECK_NULL(name);
    CHECK_NULL(value);
    CHECK_STR(get(conf, "kafka.acks"), "all");
    CHECK_STR(get(conf, "kafka.linger.ms"), "<unknown>");
    /* dump: every table key once, in table order, then the kafka keys. */
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    char *dump = capture(conf, 0), *at = dump;
    for (size_t i = 0; i < n; i++) {
        char line[512];
        snprintf(line, sizeof line, "%s=%s\n", props[i].name, get(conf, props[i].name));
        CHECK_EQ(strncmp(at, line, strlen(line)), 0);
        if (strncmp(at, line, strlen(line)))
            fprintf(stderr, "dump line %zu: expected %s", i, line);
        at = strchr(at, '\n') + 1;
    }
    CHECK_STR(at, "kafka.bootstrap.servers=b:9092,c:9092\nkafka.acks=all\n"
                  "kafka.no.such.librdkafka.key= kept verbatim = yes \n");
    free(dump);
    slda_conf_destroy(conf);
}

static void test_dup(void)
{
    slda_conf_t *conf = slda_conf_new(), *dup;
    const char *name, *value;
    set(conf, "model.name", "first");
    set(conf, "vocab.file", "v.txt");
    set(conf, "topics", "7");
    set(conf, "kafka.acks", "1");
    dup = slda_conf_dup(conf);
    set(conf, "model.name", "second");
    set(conf, "vocab.file", "");
    set(conf, "topics", "8");
    set(conf, "kafka.acks", "all");
    set(conf, "kafka.linger.ms", "5");
    slda_conf_destroy(conf); /* dup must not share anything with it */
    CHECK_STR(dup->model_name, "first");
    CHECK_STR(dup->p.vocab_file, "v.txt");
    CHECK_INT(dup->p.topics, 7);
    CHECK_INT(slda_conf_kafka_count(dup), 1);
    slda_conf_kafka_get(dup, 0, &name, &value);
    CHECK_STR(name, "acks");
    CHECK_STR(value, "1");
    slda_conf_t *dup2 = slda_conf_dup(dup);
    char *a = capture(dup, 0), *b = capture(dup2, 0);
    CHECK_STR(a, b);
    free(a);
    free(b);
    slda_conf_destroy(dup);
    slda_conf_destroy(dup2);
}

static void test_local_names(void)
{
    static const char *const names[] = {"cgs",      "cvb0",    "cvb",     "svb",
                                        "cvb0+cgs", "cvb+cgs", "svb+cgs"};
    int seen[4][2] = {{0}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        slda_vb_kind_t vb = (slda_vb_kind_t)-1;
        int hybrid = -1;
        CHECK_INT(slda_local_parse(names[i], &vb, &hybrid), 1);
        CHECK_INT(hybrid, strstr(names[i], "+cgs") != NULL);
        CHECK_GE(vb, SLDA_VB_NONE);
        CHECK_LE(vb, SLDA_VB_SVB);
        if (vb >= SLDA_VB_NONE && vb <= SLDA_VB_SVB && (hybrid == 0 || hybrid == 1)) {
            CHECK_INT(seen[vb][hybrid], 0); /* each name its own (vb, hybrid) */
            seen[vb][hybrid] = 1;
        }
        CHECK_STR(slda_local_name(vb, hybrid), names[i]);
    }
    slda_vb_kind_t vb = SLDA_VB_CVB;
    int hybrid = 1;
    CHECK_INT(slda_local_parse("cgs", &vb, &hybrid), 1);
    CHECK_INT(vb, SLDA_VB_NONE);
    CHECK_INT(hybrid, 0);
    CHECK_INT(slda_local_parse("cvb0+cvb", &vb, &hybrid), 0);
    CHECK_INT(slda_local_parse("", &vb, &hybrid), 0);
    CHECK_INT(vb, SLDA_VB_NONE); /* untouched on failure */
    CHECK_STR(slda_local_name(SLDA_VB_NONE, 1), "cgs");
    CHECK_STR(slda_local_name(SLDA_VB_CVB0, 1), "cvb0+cgs");
    CHECK_STR(slda_local_name(SLDA_VB_SVB, 0), "svb");
    CHECK_STR(slda_local_name((slda_vb_kind_t)9, 0), "invalid");
}

static void test_params_copy(void)
{
    slda_conf_t *conf = slda_conf_new();
    slda_params_t copy;
    set(conf, "vocab.file", "words.txt");
    slda_params_copy(&copy, &conf->p);
    CHECK_PTR_NE(copy.vocab_file, conf->p.vocab_file);
    CHECK_PTR_NE(copy.stopwords, conf->p.stopwords);
    CHECK_STR(copy.vocab_file, "words.txt");
    CHECK_STR(copy.stopwords, "auto");
    CHECK_INT(copy.topics, conf->p.topics);
    CHECK_INT(copy.seed, conf->p.seed);
    slda_conf_destroy(conf); /* the copy owns its strings */
    CHECK_STR(copy.vocab_file, "words.txt");
    slda_params_clear(&copy);
    CHECK_NULL(copy.vocab_file);
    CHECK_NULL(copy.stopwords);
    slda_params_clear(&copy); /* twice is harmless */
    slda_params_clear(NULL);

    slda_params_t src = {0}, dst;
    src.topics = 3;
    slda_params_copy(&dst, &src); /* NULL strings stay NULL */
    CHECK_NULL(dst.vocab_file);
    CHECK_NULL(dst.stopwords);
    CHECK_INT(dst.topics, 3);
    slda_params_clear(&dst);
}

static void test_bool_row(void)
{
    struct flag_rec {
        double pad;
        int flag;
    } rec = {0, 0};
    const slda_prop_t row = {.name = "x.flag", .type = SLDA_PT_BOOL,
                             .offset = offsetof(struct flag_rec, flag), .def = "false",
                             .desc = "A test flag."};
    char text[16];
    CHECK_STR(slda_prop_type_name(row.type), "bool");
    CHECK_INT(slda_prop_set(&row, &rec, "true", err, sizeof err), SLDA_OK);
    CHECK_INT(rec.flag, 1);
    CHECK_INT(slda_prop_get(&row, &rec, text, sizeof text), SLDA_OK);
    CHECK_STR(text, "true");
    CHECK_INT(slda_prop_set(&row, &rec, "FALSE", err, sizeof err), SLDA_OK);
    CHECK_INT(rec.flag, 0);
    CHECK_INT(slda_prop_set(&row, &rec, "maybe", err, sizeof err), SLDA_ERR_INVALID);
    CHECK_STR(err, "property \"x.flag\": value \"maybe\" is not one of false, true");
    CHECK_INT(rec.flag, 0);
}

/* Write content to dir/name; returns the malloc'ed path. */
static char *write_tmp(const char *dir, const char *name, const char *content)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    CHECK_INT(slda_test_write_file(path, content), 0);
    return path;
}

static void check_load_fails(const char *dir, const char *content, size_t len, slda_err_t code,
                             const char *want_at, const char *want)
{
    slda_conf_t *conf = slda_conf_new();
    char *path = write_tmp(dir, "bad.conf", ""), prefix[4200];
    FILE *f = fopen(path, "wb");
    CHECK_NONNULL(f);
    if (f) {
        fwrite(content, 1, len ? len : strlen(content), f);
        fclose(f);
    }
    CHECK_INT(slda_conf_load_file(conf, path, err, sizeof err), code);
    snprintf(prefix, sizeof prefix, "%s:%s: ", path, want_at);
    CHECK_EQ(strncmp(err, prefix, strlen(prefix)), 0);
    if (strncmp(err, prefix, strlen(prefix)))
        fprintf(stderr, "  \"%s\" does not start with \"%s\"\n", err, prefix);
    CHECK_CONTAINS(err, want);
    /* all or nothing: lines before the bad one were not applied */
    CHECK_INT(conf->p.topics, 100);
    CHECK_INT(slda_conf_kafka_count(conf), 0);
    unlink(path);
    free(path);
    slda_conf_destroy(conf);
}

static void test_file(const char *dir)
{
    slda_conf_t *conf = slda_conf_new();
    const char *name, *value;
    char *path = write_tmp(dir, "good.conf",
                           "\xEF\xBB\xBF# a comment\n"
                           "\n"
                           "   # an indented comment\n"
                           "topics = 20\n"
                           "\talpha=0.5\t\r\n"
                           "local=svb\n"
                           "snapshot.dir = my snapshots #1\n"
                           "output.topic=\n"
                           "kafka.bootstrap.servers = localhost:9092\n"
                           "kafka.sasl.password=p=ss#word\n"
                           "topics=30\n"
                           "   \n"
                           "seed=7"); /* no final newline */
    err[0] = '\0';
    CHECK_INT(slda_conf_load_file(conf, path, err, sizeof err), SLDA_OK);
    CHECK_STR(err, "");
    CHECK_INT(conf->p.topics, 30);
    CHECK_NEAR(conf->p.alpha, 0.5, 0);
    CHECK_INT(conf->p.vb, SLDA_VB_SVB);
    CHECK_INT(conf->p.hybrid, 0);
    CHECK_STR(conf->snapshot_dir, "my snapshots #1"); /* '#' inside a value is no comment */
    CHECK_STR(conf->output_topic, "");
    CHECK_INT(conf->p.seed, 7);
    CHECK_INT(slda_conf_kafka_count(conf), 2);
    slda_conf_kafka_get(conf, 0, &name, &value);
    CHECK_STR(name, "bootstrap.servers");
    CHECK_STR(value, "localhost:9092");
    slda_conf_kafka_get(conf, 1, &name, &value);
    CHECK_STR(name, "sasl.password");
    CHECK_STR(value, "p=ss#word");
    /* A dump loads back as the same configuration. */
    char *dump = capture(conf, 0);
    char *path2 = write_tmp(dir, "dump.conf", dump);
    slda_conf_t *back = slda_conf_new();
    CHECK_INT(slda_conf_load_file(back, path2, err, sizeof err), SLDA_OK);
    char *dump2 = capture(back, 0);
    CHECK_STR(dump2, dump);
    free(dump);
    free(dump2);
    unlink(path);
    unlink(path2);
    free(path);
    free(path2);
    slda_conf_destroy(back);

    check_load_fails(dir, "topics=10\n# fine\nno equals sign here\n", 0, SLDA_ERR_PARSE, "3",
                     "line \"no equals sign here\": expected key=value");
    check_load_fails(dir, "topics=10\nrho.kappa = 2\n", 0, SLDA_ERR_INVALID, "2",
                     "property \"rho.kappa\": value \"2\" out of range 0.5..1");
    check_load_fails(dir, "kafka.acks=all\n\n\ntopcs=5\n", 0, SLDA_ERR_UNKNOWN, "4",
                     "unknown property \"topcs\" (did you mean \"topics\"?)");
    check_load_fails(dir, "topics=10\n = 5\n", 0, SLDA_ERR_PARSE, "2", "no property name");
    static const char with_nul[] = "topics=10\ntopics=1\0 0\n";
    check_load_fails(dir, with_nul, sizeof with_nul - 1, SLDA_ERR_PARSE, "2", "NUL byte");

    /* A missing file. */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing.conf", dir);
    CHECK_INT(slda_conf_load_file(conf, missing, err, sizeof err), SLDA_ERR_IO);
    CHECK_CONTAINS(err, "config file \"");
    CHECK_CONTAINS(err, "missing.conf\": No such file or directory");
    CHECK_INT(conf->p.topics, 30);
    slda_conf_destroy(conf);
}

/* Unset every SLDA_* variable the tests below set. */
static void env_reset(void)
{
    static const char *const vars[] = {"SLDA_RHO_KAPPA", "SLDA_LOCAL", "SLDA_TOPICS",
                                       "SLDA_ALPHA", "SLDA_ETA", "SLDA_MODEL_NAME",
                                       "SLDA_KAFKA_BOOTSTRAP_SERVERS",
                                       "SLDA_KAFKA_SASL_MECHANISM", "SLDA_KAFKA_ACKS",
                                       "SLDA_NOT_A_PROPERTY", "SLDA_KAFKA_"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void test_env(void)
{
    slda_conf_t *conf = slda_conf_new();
    const char *name, *value;
    env_reset();
    setenv("SLDA_RHO_KAPPA", "0.6", 1);
    setenv("SLDA_LOCAL", "cvb", 1);
    setenv("SLDA_MODEL_NAME", "from.env", 1);
    setenv("SLDA_KAFKA_SASL_MECHANISM", "PLAIN", 1);
    setenv("SLDA_KAFKA_BOOTSTRAP_SERVERS", "broker:9092", 1);
    setenv("SLDA_NOT_A_PROPERTY", "ignored", 1);
    set(conf, "kafka.sasl.mechanism", "SCRAM-SHA-256"); /* replaced in place */
    err[0] = '\0';
    CHECK_INT(slda_conf_load_env(conf, err, sizeof err), SLDA_OK);
    CHECK_STR(err, "");
    CHECK_NEAR(conf->p.rho_kappa, 0.6, 0);
    CHECK_INT(conf->p.vb, SLDA_VB_CVB);
    CHECK_INT(conf->p.hybrid, 0);
    CHECK_STR(conf->model_name, "from.env");
    CHECK_INT(slda_conf_kafka_count(conf), 2);
    slda_conf_kafka_get(conf, 0, &name, &value);
    CHECK_STR(name, "sasl.mechanism");
    CHECK_STR(value, "PLAIN");
    slda_conf_kafka_get(conf, 1, &name, &value);
    CHECK_STR(name, "bootstrap.servers");
    CHECK_STR(value, "broker:9092");

    /* A bad value names the variable, and nothing from the environment is applied. */
    slda_conf_t *fresh = slda_conf_new();
    setenv("SLDA_TOPICS", "0", 1);
    setenv("SLDA_KAFKA_ACKS", "all", 1);
    CHECK_INT(slda_conf_load_env(fresh, err, sizeof err), SLDA_ERR_INVALID);
    CHECK_STR(err, "environment SLDA_TOPICS: property \"topics\": value \"0\" out of range "
                   "1..16384");
    CHECK_NEAR(fresh->p.rho_kappa, 0.7, 0);
    CHECK_INT(slda_conf_kafka_count(fresh), 0);
    unsetenv("SLDA_TOPICS");
    setenv("SLDA_KAFKA_", "x", 1);
    CHECK_INT(slda_conf_load_env(fresh, err, sizeof err), SLDA_ERR_INVALID);
    CHECK_CONTAINS(err, "environment SLDA_KAFKA_: ");
    env_reset();
    slda_conf_destroy(fresh);
    slda_conf_destroy(conf);
}

static void test_precedence(const char *dir)
{
    slda_conf_t *conf = slda_conf_new();
    char *path = write_tmp(dir, "prec.conf", "topics=10\nalpha=0.5\neta=0.2\n"
                                             "kafka.acks=1\nkafka.linger.ms=5\n");
    env_reset();
    setenv("SLDA_ALPHA", "0.6", 1);
    setenv("SLDA_ETA", "0.3", 1);
    setenv("SLDA_KAFKA_ACKS", "all", 1);
    /* the order slda_cli_conf_apply uses: file, environment, -X */
    CHECK_INT(slda_conf_load_file(conf, path, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_conf_load_env(conf, err, sizeof err), SLDA_OK);
    CHECK_INT(set(conf, "eta", "0.4"), SLDA_OK);
    CHECK_INT(set(conf, "kafka.linger.ms", "7"), SLDA_OK);
    CHECK_INT(conf->p.topics, 10);          /* file over default */
    CHECK_NEAR(conf->p.alpha, 0.6, 0);      /* environment over file */
    CHECK_NEAR(conf->p.eta, 0.4, 0);        /* -X over environment */
    CHECK_STR(get(conf, "kafka.acks"), "all");
    CHECK_STR(get(conf, "kafka.linger.ms"), "7");
    CHECK_INT(slda_conf_kafka_count(conf), 2);
    env_reset();
    unlink(path);
    free(path);
    slda_conf_destroy(conf);
}

static void test_listings(void)
{
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    char *plain = capture(NULL, 1), *md = capture(NULL, 2);
    CHECK_TRUE(strncmp(plain, "NAME ", 5) == 0, "\"%.40s\"", plain);
    CHECK_CONTAINS(plain, "DESCRIPTION\n");
    CHECK_CONTAINS(md, "defaults < config file < environment < -X");
    CHECK_CONTAINS(md, "SLDA_KAFKA_BOOTSTRAP_SERVERS");
    CHECK_CONTAINS(md, "| `rho.kappa` | double | `0.7` | 0.5..1 | ");
    CHECK_CONTAINS(md, "| `alpha` | double | `0.1` | > 0 | ");
    CHECK_CONTAINS(md, "| `vocab.file` | string | (empty) | any | ");
    CHECK_CONTAINS(md, "json ({\"id\", \"text\" or \"tokens\"})");
    for (size_t i = 0; i < n; i++) {
        char want[256];
        /* plain: one line starting with the name, then the type column */
        snprintf(want, sizeof want, "\n%s ", props[i].name);
        CHECK_CONTAINS(plain, want);
        snprintf(want, sizeof want, "\n| `%s` | %s | ", props[i].name,
                 slda_prop_type_name(props[i].type));
        CHECK_CONTAINS(md, want);
        CHECK_CONTAINS(md, props[i].desc);
    }
    /* plain columns line up: the type column starts at the same offset on every line */
    const char *line = plain;
    long col = -1;
    while (*line) {
        const char *type = strstr(line, "  ");
        while (type && type[0] == ' ')
            type++;
        if (col < 0)
            col = type - line;
        CHECK_INT(type - line, col);
        line = strchr(line, '\n') + 1;
    }
    free(plain);
    free(md);
}

static void test_configuration_md(void)
{
    char *path = source_path("config/CONFIGURATION.md");
    char *committed, *generated = capture(NULL, 2);
    if (!path)
        goto out;
    committed = read_file(path);
    if (!committed) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        CHECK_NONNULL(committed);
    } else if (strcmp(committed, generated) != 0) {
        const char *a = committed, *b = generated;
        int line = 1;
        for (; *a && *a == *b; a++, b++)
            line += *a == '\n';
        fprintf(stderr,
                "%s is stale (first difference on line %d); regenerate it with\n"
                "    streamlda config --markdown > config/CONFIGURATION.md\n",
                path, line);
        CHECK_STR(committed, generated);
    }
    free(committed);
out:
    free(path);
    free(generated);
}

static void test_example_conf(void)
{
    char *path = source_path("config/streamlda.conf");
    char *text;
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    slda_conf_t *conf = slda_conf_new(), *defaults = slda_conf_new();
    const char *name, *value;
    if (!path)
        goto out;
    err[0] = '\0';
    CHECK_INT(slda_conf_load_file(conf, path, err, sizeof err), SLDA_OK);
    CHECK_STR(err, "");
    text = read_file(path);
    CHECK_NONNULL(text);
    for (size_t i = 0; text && i < n; i++) {
        char want[256], value_def[4096];
        const char *at;
        snprintf(value_def, sizeof value_def, "%s", get(defaults, props[i].name));
        CHECK_STR(get(conf, props[i].name), value_def);
        /* the key is written out, with a comment on the line above */
        snprintf(want, sizeof want, "\n%s=", props[i].name);
        at = strstr(text, want);
        if (!at)
            fprintf(stderr, "streamlda.conf does not set %s\n", props[i].name);
        CHECK_NONNULL(at);
        if (at) {
            const char *bol = at; /* back to the start of the line above the key */
            do
                bol--;
            while (bol > text && bol[-1] != '\n');
            if (*bol != '#')
                fprintf(stderr, "streamlda.conf: no comment above %s\n", props[i].name);
            CHECK_EQ(*bol, '#');
        }
    }
    CHECK_INT(slda_conf_kafka_count(conf), 1);
    slda_conf_kafka_get(conf, 0, &name, &value);
    CHECK_STR(name, "bootstrap.servers");
    CHECK_STR(value, "embedded");
    free(text);
out:
    free(path);
    slda_conf_destroy(conf);
    slda_conf_destroy(defaults);
}

int main(void)
{
    char *dir = slda_test_tmpdir();
    test_table();
    test_defaults();
    test_round_trip();
    test_invalid();
    test_unknown();
    test_kafka();
    test_dup();
    test_local_names();
    test_params_copy();
    test_bool_row();
    test_file(dir);
    test_env();
    test_precedence(dir);
    test_listings();
    test_configuration_md();
    test_example_conf();
    rmdir(dir);
    free(dir);
    return slda_test_done("unit_config");
}
