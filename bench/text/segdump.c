/* segdump.c - streamlda's word cuts of each input line, for comparing with other segmenters.
 *
 *   segdump [key=value...] < lines > tokens      (bench/text/segment_f1.sh builds and runs it)
 *
 * Each line of standard input is tokenised as raw text by the library's tokenizer
 * (src/text/tokenize.h) and printed as its tokens, in text order, separated by tabs (one
 * output line per input line; an empty line when none). The defaults here are those of
 * text.segment=unicode with nothing dropped (text.stopwords=none, text.min.length=1), so the
 * cuts are ICU's word boundaries after the cleanup rules and NFKC_Casefold; key=value
 * arguments set other text.* properties. Invalid UTF-8 prints an empty line.
 */
#include "streamlda.h"
#include "core/config.h"
#include "text/tokenize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_token(const char *tok, size_t len, void *opaque)
{
    int *first = opaque;
    if (!*first)
        putchar('\t');
    fwrite(tok, 1, len, stdout);
    *first = 0;
}

static int set(slda_conf_t *conf, const char *kv)
{
    char key[128], err[512];
    const char *eq = strchr(kv, '=');
    if (!eq || (size_t)(eq - kv) >= sizeof key) {
        fprintf(stderr, "segdump: %s: not key=value\n", kv);
        return 1;
    }
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    if (slda_conf_set(conf, key, eq + 1, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "segdump: %s\n", err);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char err[512];
    slda_conf_t *conf = slda_conf_new();
    if (set(conf, "text.stopwords=none") || set(conf, "text.min.length=1"))
        return 2;
    for (int i = 1; i < argc; i++)
        if (set(conf, argv[i]))
            return 2;
    slda_tokenizer_t *tok = slda_tokenizer_new(&conf->p, err, sizeof err);
    if (!tok) {
        fprintf(stderr, "segdump: %s\n", err);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        int first = 1;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        slda_tokenize(tok, line, (size_t)n, on_token, &first, err, sizeof err);
        putchar('\n');
    }
    free(line);
    slda_tokenizer_destroy(tok);
    slda_conf_destroy(conf);
    return 0;
}
