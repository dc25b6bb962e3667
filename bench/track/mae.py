#!/usr/bin/env python3
"""mae.py - mean absolute error of reported per-window topic shares against gen.py's truth.

  mae.py TRUTH.jsonl REPORT.json [--first FRACTION]

REPORT.json is `streamlda report --json` (its "prevalence") or `streamlda timeline --json`
output: windows of window_ms with start_ms, docs and share (K values), and topics with their
top words. Alignment: each model topic goes to the generator's topic whose words it leads with
(gen.py names topic k's words "<letters of k>word..", so the top word says the true topic; a
topic leading with background words "common.." is left out); the shares of the model topics
aligned to one true topic are added. The truth of a window is the mean theta of the documents
gen.py put in it (truth.jsonl). MAE: over every window holding documents and every true topic,
each window counted once (the whole span, first windows included). --first F: also the MAE
over the first fraction F of the windows (where a model of the moment is least trained).
Prints "mae=... windows=... topics_aligned=... first_mae=...".
"""
import argparse
import json
import re
import sys


def true_topic(word):
    m = re.match(r"^([a-z]+)word[a-z]{2}$", word)
    if not m:
        return None
    k, mult = 0, 1
    for ch in m.group(1):
        k += (ord(ch) - 97) * mult
        mult *= 26
    return k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("truth")
    ap.add_argument("report")
    ap.add_argument("--first", type=float, default=0.0)
    a = ap.parse_args()
    d = json.load(open(a.report))
    prev = d.get("prevalence", d)
    width = prev["window_ms"]
    windows = prev["windows"]
    truth = {}
    Kt = 0
    for line in open(a.truth):
        r = json.loads(line)
        w = r["time_ms"] // width
        th = r["theta"]
        Kt = len(th)
        acc = truth.setdefault(w, [0.0] * (Kt + 1))
        for k, v in enumerate(th):
            acc[k] += v
        acc[Kt] += 1
    align = {}
    for t in d["topics"]:
        words = t.get("words") or []
        k = true_topic(words[0]) if words else None
        if k is not None and k < Kt:
            align[t["topic"]] = k
    errs, first_errs = [], []
    n_first = int(len(windows) * a.first)
    for i, win in enumerate(windows):
        w = win["start_ms"] // width
        if w not in truth or not win["docs"]:
            continue
        acc = truth[w]
        est = [0.0] * Kt
        for mk, s in enumerate(win["share"]):
            if mk in align:
                est[align[mk]] += s
        e = sum(abs(est[k] - acc[k] / acc[Kt]) for k in range(Kt)) / Kt
        errs.append(e)
        if i < n_first:
            first_errs.append(e)
    if not errs:
        print("mae=nan windows=0")
        return 1
    out = "mae=%.4f windows=%d topics_aligned=%d/%d" % (sum(errs) / len(errs), len(errs),
                                                         len(set(align.values())), Kt)
    if first_errs:
        out += " first_mae=%.4f" % (sum(first_errs) / len(first_errs))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
