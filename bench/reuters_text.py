#!/usr/bin/env python3
"""reuters_text.py - Reuters-21578 as raw text for the benches: title + body of each article, one
line each, in time order (articles with neither are left out).

    python3 bench/reuters_text.py SHARED/data/reuters21578/reuters21578.by-time.tsv.gz OUT.txt
                                  [OUT.jsonl]

With OUT.jsonl, the same articles also as JSON lines {"id", "text"} (bench/same_model.sh).
"""
import gzip
import json
import sys

with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w") as o:
    j = open(sys.argv[3], "w") if len(sys.argv) > 3 else None
    next(f)
    for line in f:
        p = line.rstrip("\n").split("\t")
        text = (p[4] + " " + p[5]).strip()
        if text:
            o.write(text + "\n")
            if j:
                j.write(json.dumps({"id": p[0], "text": text}) + "\n")
    if j:
        j.close()
