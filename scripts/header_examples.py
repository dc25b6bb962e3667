#!/usr/bin/env python3
"""header_examples.py - the worked examples of include/streamlda.h as C programs.

    header_examples.py HEADER OUTDIR

Each "Example N - ...:" paragraph of the header's opening comment is followed by its code,
indented by four spaces inside the comment; it becomes OUTDIR/header_example_N.c, the code
as the body of a function whose result main returns. CMake builds each one (a header example
that does not compile breaks the build) and tests/0004-header_examples.sh runs them.
"""
import os
import re
import sys

PROLOGUE = """/* header_example_%d.c - generated from include/streamlda.h, "Example %d", by
 * scripts/header_examples.py: do not edit. */
#include "streamlda.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int example(void)
{
"""
EPILOGUE = """}

int main(void)
{
    return example();
}
"""


def examples(text):
    """{number: code} of the header's opening comment."""
    comment = text[text.index("/*\n * streamlda learns"):]
    comment = comment[:comment.index(" */\n")]
    out, current = {}, None
    for line in comment.splitlines():
        m = re.match(r"^ \* Example (\d+) - ", line)
        if m:
            current = int(m.group(1))
            out[current] = []
            continue
        if current is None:
            continue
        if line.startswith(" *     "):
            out[current].append(line[len(" *     "):])
        elif out[current] and line.strip() not in ("*", ""):
            current = None  # the prose after the code
    return {n: "\n".join(code) for n, code in out.items() if code}


def main():
    header, outdir = sys.argv[1], sys.argv[2]
    with open(header, encoding="utf-8") as f:
        found = examples(f.read())
    if sorted(found) != [1, 2, 3]:
        sys.exit("header_examples.py: %s: examples %s, expected 1, 2 and 3" % (header, sorted(found)))
    os.makedirs(outdir, exist_ok=True)
    for n, code in found.items():
        body = "\n".join(("    " + l) if l else "" for l in code.splitlines())
        path = os.path.join(outdir, "header_example_%d.c" % n)
        text = PROLOGUE % (n, n) + body + "\n" + EPILOGUE
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)


if __name__ == "__main__":
    main()
