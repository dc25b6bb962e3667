/* config_list.c - the property table as text: `-X list`, config/CONFIGURATION.md, `-X dump`.
 *
 * Generated from the table alone, so the listing, the markdown file (tests/0001 fails when
 * config/CONFIGURATION.md is stale) and --help never disagree with what slda_conf_set takes.
 */
#include "core/config_priv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- listings ---- */

/* The text shown for a row's default: "(empty)" rather than nothing. */
static const char *default_text(const slda_prop_t *prop)
{
    return *prop->def ? prop->def : "(empty)";
}

static const char kafka_desc[] = "Passed to librdkafka without the \"kafka.\" prefix.";

static void print_plain(FILE *out)
{
    static const char *const head[4] = {"NAME", "TYPE", "DEFAULT", "RANGE/VALUES"};
    char range[slda_conf_ntable][160];
    int w[4];
    for (int c = 0; c < 4; c++)
        w[c] = (int)strlen(head[c]);
    for (size_t i = 0; i < slda_conf_ntable; i++) {
        const char *cell[4] = {slda_conf_table[i].name, slda_prop_type_name(slda_conf_table[i].type),
                               default_text(&slda_conf_table[i]), range[i]};
        slda_prop_range_text(&slda_conf_table[i], range[i], sizeof range[i]);
        for (int c = 0; c < 4; c++)
            if ((int)strlen(cell[c]) > w[c])
                w[c] = (int)strlen(cell[c]);
    }
    fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], head[0], w[1], head[1], w[2], head[2],
            w[3], head[3], "DESCRIPTION");
    for (size_t i = 0; i < slda_conf_ntable; i++)
        fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], slda_conf_table[i].name, w[1],
                slda_prop_type_name(slda_conf_table[i].type), w[2], default_text(&slda_conf_table[i]), w[3],
                range[i], slda_conf_table[i].desc);
    fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], "kafka.*", w[1], "string", w[2], "", w[3],
            "", kafka_desc);
}

/* A markdown table cell: '|' escaped. */
static void md_cell(FILE *out, const char *s, int code)
{
    fputs(code ? " `" : " ", out);
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputs(code ? "` |" : " |", out);
}

static const char md_intro[] =
    "# streamlda configuration\n"
    "\n"
    "<!-- Generated from the property table in src/core/config.c by\n"
    "     `streamlda config --markdown > config/CONFIGURATION.md`; do not edit. -->\n"
    "\n"
    "Every property has a default and can be set in four places; a later one wins:\n"
    "\n"
    "    defaults < config file < environment < -X\n"
    "\n"
    "- **Config file** (`-c FILE`): one `key=value` a line; blank lines and lines starting\n"
    "  with `#` are ignored; whitespace around keys and values is trimmed and values are taken\n"
    "  literally (no quotes; `key=` sets an empty value). config/streamlda.conf lists every\n"
    "  property with its default.\n"
    "- **Environment**: `SLDA_<KEY>`, the key upper-cased with `.` replaced by `_`, e.g.\n"
    "  `SLDA_RHO_KAPPA=0.6` sets `rho.kappa`. `SLDA_KAFKA_<NAME>` sets `kafka.<name>`, the name\n"
    "  lower-cased with `_` replaced by `.`, e.g. `SLDA_KAFKA_BOOTSTRAP_SERVERS` sets\n"
    "  `kafka.bootstrap.servers` (a librdkafka property containing `_` cannot be set this\n"
    "  way). Other `SLDA_*` variables are ignored.\n"
    "- **Command line**: `-X key=value`, repeatable. `-X list` prints this table and\n"
    "  `-X dump` the effective configuration.\n"
    "\n"
    "Properties starting with `kafka.` are passed to librdkafka without the prefix and are\n"
    "checked by librdkafka, e.g. `kafka.bootstrap.servers`, `kafka.security.protocol`,\n"
    "`kafka.sasl.mechanism`, `kafka.sasl.username`, `kafka.ssl.ca.location`; see librdkafka's\n"
    "CONFIGURATION.md.\n"
    "\n";

static void print_markdown(FILE *out)
{
    char range[160];
    fputs(md_intro, out);
    fputs("| Property | Type | Default | Range / values | Description |\n"
          "|---|---|---|---|---|\n",
          out);
    for (size_t i = 0; i < slda_conf_ntable; i++) {
        slda_prop_range_text(&slda_conf_table[i], range, sizeof range);
        fputc('|', out);
        md_cell(out, slda_conf_table[i].name, 1);
        md_cell(out, slda_prop_type_name(slda_conf_table[i].type), 0);
        md_cell(out, default_text(&slda_conf_table[i]), *slda_conf_table[i].def != '\0');
        md_cell(out, range, 0);
        md_cell(out, slda_conf_table[i].desc, 0);
        fputc('\n', out);
    }
    fprintf(out, "| `kafka.*` | string | | | %s |\n", kafka_desc);
}

void slda_conf_print_table(FILE *out, int markdown)
{
    if (markdown)
        print_markdown(out);
    else
        print_plain(out);
}

void slda_conf_dump(const slda_conf_t *conf, FILE *out)
{
    char num[40];
    for (size_t i = 0; i < slda_conf_ntable; i++)
        fprintf(out, "%s=%s\n", slda_conf_table[i].name, slda_prop_text(&slda_conf_table[i], conf, num, sizeof num));
    for (size_t i = 0; i < conf->nkafka; i++)
        fprintf(out, KAFKA_PREFIX "%s=%s\n", conf->kafka_names[i], conf->kafka_values[i]);
}
