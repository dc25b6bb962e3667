#!/usr/bin/env python3
"""table.py - the markdown table of bench/quality/run.sh from OUT/results.txt and OUT/ref.json.

    table.py OUT kos,ap,reuters,20news

One row per corpus: held-out perplexity (evaluate.py, document completion) of streamlda's one
pass and five passes before and after, tomotopy's converged Gibbs (mean phi of 10 samples,
and its last single sample), gensim one and five passes, the gap of each streamlda figure to
the Gibbs reference, and streamlda's training tokens/s (median over seeds, one thread).
"""
import json
import re
import sys


def fields(line):
    return dict(m.groups() for m in re.finditer(r"(\w+)=('[^']*'|\S+)", line))


def main():
    out, corpora = sys.argv[1], sys.argv[2].split(",")
    with open(f"{out}/ref.json") as f:
        ref = json.load(f)
    res = {}
    with open(f"{out}/results.txt") as f:
        for line in f:
            kv = fields(line)
            if line.startswith("peer "):
                res[("gensim", kv["corpus"], kv["passes"])] = float(kv["perplexity"])
            elif line.startswith("measure ") and "corpus" in kv:
                label = kv["label"].strip("'")
                res[(label, kv["corpus"], kv["passes"])] = (float(kv["perplexity"]),
                                                            float(kv["tokens_per_s"]))
    print("| corpus | 1 pass before | 1 pass after | 5 passes before | 5 passes after "
          "| Gibbs (10-sample mean) | Gibbs (last sample) | gensim 1 pass | gensim 5 passes "
          "| tokens/s before | tokens/s after |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    gaps = {"before": [], "after1": [], "before5": [], "after5": []}
    for c in corpora:
        g = ref[c]
        b, a1 = res[("before", c, "1")], res[("after", c, "1")]
        b5, a5 = res[("before", c, "5")], res[("after", c, "5")]
        def cell(p):
            return f"{p:.0f} (+{100 * (p / g - 1):.1f}%)"
        gaps["before"].append(100 * (b[0] / g - 1))
        gaps["after1"].append(100 * (a1[0] / g - 1))
        gaps["before5"].append(100 * (b5[0] / g - 1))
        gaps["after5"].append(100 * (a5[0] / g - 1))
        print(f"| {c} | {cell(b[0])} | {cell(a1[0])} | {cell(b5[0])} | {cell(a5[0])} | {g:.0f} | "
              f"{ref[c + '.last']:.0f} | {cell(res[('gensim', c, '1')])} | "
              f"{cell(res[('gensim', c, '5')])} | {b[1]:,.0f} | {a1[1]:,.0f} |")
    mean = {k: sum(v) / len(v) for k, v in gaps.items()}
    print(f"\nMean gap to Gibbs: one pass before {mean['before']:.1f}%, after "
          f"{mean['after1']:.1f}%; five passes before {mean['before5']:.1f}%, after "
          f"{mean['after5']:.1f}%.")


if __name__ == "__main__":
    main()
