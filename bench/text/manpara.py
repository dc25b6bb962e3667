#!/usr/bin/env python3
"""manpara.py - paragraphs of Debian's translated manual pages as JSON lines {"id", "dir", "text"}.

Usage: manpara.py MANROOT DIR [DIR...] > out.jsonl
  MANROOT is /usr/share/man; each DIR (de, fr, ru, ja, zh_CN, ...) is read from MANROOT/DIR/man*/,
  "en" meaning MANROOT/man1 and man8 (the untranslated pages). A paragraph is the running text
  between roff requests other than the font ones (.B, .I, .BR, ...: their words are kept), with
  font escapes and roff escapes removed;
  lines that are only an option synopsis (starting with -) are left out. Deterministic: files
  in sorted order, each paragraph once (duplicates across pages dropped).
Sources: manpages-de/-fr/-ru/-es/-it/-pl/-nl/-pt-br (manpages-l10n 4.18.1), manpages-ja
0.5.0.0.20221215, manpages-zh 1.6.4.0 (Debian 12), installed by SLDA_BENCH=1 scripts/setup.sh.
"""
import glob
import gzip
import json
import os
import re
import sys

ESC = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),   # font changes
    (re.compile(r"\\s[+-]?\d"), ""),               # size changes
    (re.compile(r"\\\*(\(..|\[[^\]]*\]|.)"), ""),  # strings
    (re.compile(r"\\\((..)"), " "),                # special characters
    (re.compile(r"\\\[[^\]]*\]"), " "),
    (re.compile(r"\\[-e]"), "-"),
    (re.compile(r"\\[&/,|^%:]"), ""),
    (re.compile(r"\\ "), " "),
    (re.compile(r"\\\\"), lambda m: "\\"),
    (re.compile(r'\\".*'), ""),                    # comments
]
FONT_REQUESTS = (".BR ", ".IR ", ".RB ", ".RI ", ".BI ", ".IB ")


def clean(line):
    for rx, rep in ESC:
        line = rx.sub(rep, line)
    return line.strip()


def paragraphs(path):
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="strict") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError, EOFError):
        return
    cur = []
    for line in lines + [".PP"]:
        if line.startswith(".") or line.startswith("'"):
            # font requests carry running text; every other request ends a paragraph
            if line[:3] in (".B ", ".I ") or line[:4] in FONT_REQUESTS:
                words = clean(re.sub(r'"', "", line.split(" ", 1)[1] if " " in line else ""))
                if words:
                    cur.append(words)
                continue
            if cur:
                yield " ".join(cur)
            cur = []
            continue
        text = clean(line)
        if not text or text.startswith("-"):
            continue
        cur.append(text)


def main():
    root, dirs = sys.argv[1], sys.argv[2:]
    seen = set()
    for d in dirs:
        if d == "en":
            files = sorted(glob.glob(os.path.join(root, "man1", "*.gz")) +
                           glob.glob(os.path.join(root, "man8", "*.gz")))
        else:
            files = sorted(glob.glob(os.path.join(root, d, "man*", "*.gz")))
        n = 0
        for path in files:
            for k, para in enumerate(paragraphs(path)):
                para = re.sub(r"\s+", " ", para).strip()
                if len(para) < 8 or para in seen:
                    continue
                seen.add(para)
                n += 1
                sys.stdout.write(json.dumps({"id": "%s/%s/%d" % (d, os.path.basename(path), k),
                                             "dir": d, "text": para}, ensure_ascii=False) + "\n")
        sys.stderr.write("manpara: %s: %d paragraphs from %d pages\n" % (d, n, len(files)))


if __name__ == "__main__":
    main()
