#!/usr/bin/env python3
"""gen.py - synthetic document streams whose topic shares follow known curves over event time.

Each topic k owns a vocabulary of its own (40 words "<k-letters>word<i>", Zipf-weighted) plus a
shared background of 200 words that any topic emits with probability 0.1. A document at time t
draws its mixture theta ~ Dirichlet(conc * share(t)) (conc = 2: most documents are mostly one or
two topics, as short texts are), a length from 30 to 120 words, and its words from the mixture.
The truth of a window is the mean of the documents' own theta: what they hold, not the curve.

Shapes (--shape, a comma list; one per topic, cycled; the rest are flat):
  flat      constant share
  step      doubles (x3) at 50% of the span
  ramp      rises linearly from 1x to 4x between 30% and 70% of the span
  burst     x6 between 45% and 50% of the span, then back
  late      absent (0) before 60% of the span, then as large as the largest
  fall      from 3x to 0.3x at 40%
Shares are normalised to sum 1 at every instant.

  gen.py --docs N --topics K --span-days D [--start ISO] [--shape ...] [--seed S]
         --out stream.jsonl [--truth truth.jsonl] [--shuffle-time]

stream.jsonl: {"id", "time" (ISO 8601), "text"}; truth.jsonl: one line per document,
{"id", "time_ms", "theta": [K]}. Documents come in time order (--shuffle-time: the times are
permuted across documents, a stationary stream with the same mixtures).
"""
import argparse
import datetime
import json
import math
import random
import sys

SHAPES = ("flat", "step", "ramp", "burst", "late", "fall")


def curve(shape, x):
    """A topic's relative weight at x in [0, 1) of the span."""
    if shape == "step":
        return 3.0 if x >= 0.5 else 1.0
    if shape == "ramp":
        return 1.0 + 3.0 * min(1.0, max(0.0, (x - 0.3) / 0.4))
    if shape == "burst":
        return 6.0 if 0.45 <= x < 0.5 else 1.0
    if shape == "late":
        return 3.0 if x >= 0.6 else 0.0
    if shape == "fall":
        return 0.3 if x >= 0.4 else 3.0
    return 1.0


def shares(shapes, x):
    w = [curve(s, x) for s in shapes]
    tot = sum(w)
    return [v / tot for v in w]


def word(k, i):
    letters = ""
    n = k
    while True:
        letters += "abcdefghijklmnopqrstuvwxyz"[n % 26]
        n //= 26
        if not n:
            break
    return "%sword%s" % (letters, "abcdefghijklmnopqrstuvwxyz"[i % 26] + "abcdefghijklmnopqrstuvwxyz"[i // 26])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--span-days", type=float, default=365.0)
    ap.add_argument("--start", default="2010-01-01T00:00:00Z")
    ap.add_argument("--shape", default="step,ramp,burst,late,fall")
    ap.add_argument("--conc", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--truth")
    ap.add_argument("--shuffle-time", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    K = a.topics
    given = [s for s in a.shape.split(",") if s]
    for s in given:
        if s not in SHAPES:
            sys.exit("gen.py: unknown shape %s" % s)
    shapes = [given[k] if k < len(given) else "flat" for k in range(K)]
    vocab = [[word(k, i) for i in range(40)] for k in range(K)]
    zipf = [1.0 / (i + 1) for i in range(40)]
    background = ["common%s" % word(900 + i, i) for i in range(200)]
    start = datetime.datetime.fromisoformat(a.start.replace("Z", "+00:00"))
    t0 = start.timestamp()
    span = a.span_days * 86400.0
    times = sorted(rng.random() * span for _ in range(a.docs))
    xs = list(times)
    if a.shuffle_time:  # the mixtures of a stationary stream: drawn at random instants
        xs = [rng.random() * span for _ in range(a.docs)]
    out = open(a.out, "w")
    truth = open(a.truth, "w") if a.truth else None
    for d in range(a.docs):
        sh = shares(shapes, xs[d] / span)
        g = [rng.gammavariate(a.conc * s, 1.0) if s > 0 else 0.0 for s in sh]
        tot = sum(g) or 1.0
        theta = [v / tot for v in g]
        n = rng.randint(30, 120)
        ks = rng.choices(range(K), weights=theta, k=n)
        words = []
        for k in ks:
            if rng.random() < 0.1:
                words.append(rng.choice(background))
            else:
                words.append(rng.choices(vocab[k], weights=zipf)[0])
        ms = int((t0 + times[d]) * 1000)
        iso = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
        out.write(json.dumps({"id": "d%d" % d, "time": iso, "text": " ".join(words)}) + "\n")
        if truth:
            truth.write(json.dumps({"id": "d%d" % d, "time_ms": ms,
                                    "theta": [round(v, 5) for v in theta]}) + "\n")
    out.close()
    if truth:
        truth.close()


if __name__ == "__main__":
    main()
