#!/usr/bin/env python3
"""gen_stopwords.py - generate src/text/stopwords.c from config/stopwords/*.txt.

Usage (from anywhere):
    python3 scripts/gen_stopwords.py            write src/text/stopwords.c
    python3 scripts/gen_stopwords.py --check    exit 1 if src/text/stopwords.c is stale

Each list keeps its file order with duplicates dropped; blank lines and '#'
comments are skipped. The output is deterministic, so --check can compare bytes.
"""
import os
import sys

LISTS = ("smart", "snowball", "onix")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "text", "stopwords.c")


def read_list(name):
    path = os.path.join(ROOT, "config", "stopwords", name + ".txt")
    words, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            word = line.split("#", 1)[0].strip()
            if word and word not in seen:
                seen.add(word)
                words.append(word)
    return words


def c_string(word):
    out = []
    for ch in word:
        if ch in '"\\' or not (32 <= ord(ch) < 127):
            for b in ch.encode("utf-8"):
                out.append("\\%03o" % b)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render():
    lines = [
        "/* stopwords.c - built-in stop-word lists (GENERATED: do not edit).",
        " *",
        " * Regenerate with: python3 scripts/gen_stopwords.py",
        " * from config/stopwords/{%s}.txt (see config/stopwords/SOURCE.md)." % ",".join(LISTS),
        " * Each list is in file order with duplicates removed.",
        " */",
        '#include "tokenize.h"',
        "",
    ]
    for name in LISTS:
        words = read_list(name)
        lines.append("static const char *const words_%s[%d] = {" % (name, len(words)))
        row = "   "
        for w in words:
            item = " " + c_string(w) + ","
            if len(row) + len(item) > 96:
                lines.append(row)
                row = "   "
            row += item
        lines.append(row)
        lines.append("};")
        lines.append("")
    lines.append("const slda_stoplist_t slda_stoplists[] = {")
    for name in LISTS:
        lines.append('    {"%s", words_%s, sizeof words_%s / sizeof words_%s[0]},'
                     % (name, name, name, name))
    lines.append("};")
    lines.append("const size_t slda_nstoplists = sizeof slda_stoplists / sizeof slda_stoplists[0];")
    return "\n".join(lines) + "\n"


def main():
    text = render()
    if "--check" in sys.argv[1:]:
        try:
            with open(OUT, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            sys.stderr.write("src/text/stopwords.c is stale: run python3 scripts/gen_stopwords.py\n")
            return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
