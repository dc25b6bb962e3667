#!/usr/bin/env python3
"""gen.py - a synthetic shifting stream whose truth is known (births benchmark and tests).

Documents 0..S-1 come from 5 "old" topics; from document S on, each document comes
from 5 "new" topics with probability --new-share (0.7), else from the old ones, so the
old topics stay alive. --shared makes the new topics reuse the old vocabulary (each new
topic a different random mixture of old words); otherwise they have their own words.
Words are letters only (no digits: text.digits drops them), one document per line.

Writes PREFIX.txt (the stream) and PREFIX.truth (one line per true topic:
"old|new k word:prob ..."), read by match.py. Pure Python, deterministic for a seed.
"""
import argparse
import math
import random


def word(prefix, i):
    s = ""
    for _ in range(4):
        s += chr(ord("a") + i % 26)
        i //= 26
    return prefix + s


def topic(rng, words, support):
    # a sparse topic: `support` words carry weights ~ Gamma(1) (a Dirichlet(1) draw)
    chosen = rng.sample(words, support)
    w = [rng.gammavariate(1.0, 1.0) for _ in chosen]
    s = sum(w)
    return {c: x / s for c, x in zip(chosen, w)}


def draw_doc(rng, topics, alpha, length):
    th = [rng.gammavariate(alpha, 1.0) for _ in topics]
    s = sum(th) or 1.0
    th = [x / s for x in th]
    cum = []
    for t in topics:
        cum.append((list(t.keys()), list(t.values())))
    out = []
    ks = rng.choices(range(len(topics)), weights=th, k=length)
    for k in ks:
        ws, ps = cum[k]
        out.append(rng.choices(ws, weights=ps, k=1)[0])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=40000)
    ap.add_argument("--shift", type=int, default=30000, help="S: first document of the new regime")
    ap.add_argument("--new-share", type=float, default=0.7)
    ap.add_argument("--vocab", type=int, default=600, help="words per regime")
    ap.add_argument("--support", type=int, default=120, help="words per topic")
    ap.add_argument("--length", type=int, default=60, help="mean document length")
    ap.add_argument("--alpha", type=float, default=0.2)
    ap.add_argument("--shared", action="store_true")
    ap.add_argument("--stationary", action="store_true", help="no shift: old topics only")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("prefix")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    old_words = [word("q", i) for i in range(a.vocab)]
    new_words = old_words if a.shared else [word("z", i) for i in range(a.vocab)]
    # old topics partition-ish: each over its own block plus random overlap
    old = []
    for k in range(5):
        block = old_words[k * a.vocab // 5:(k + 1) * a.vocab // 5]
        old.append(topic(rng, block, min(a.support, len(block))))
    new = []
    for k in range(5):
        if a.shared:
            new.append(topic(rng, new_words, a.support))
        else:
            block = new_words[k * a.vocab // 5:(k + 1) * a.vocab // 5]
            new.append(topic(rng, block, min(a.support, len(block))))
    with open(a.prefix + ".txt", "w") as f:
        for d in range(a.docs):
            L = max(5, int(rng.expovariate(1.0 / a.length)) + 10)
            is_new = (not a.stationary) and d >= a.shift and rng.random() < a.new_share
            f.write(" ".join(draw_doc(rng, new if is_new else old, a.alpha, L)) + "\n")
    with open(a.prefix + ".truth", "w") as f:
        for name, ts in (("old", old), ("new", new)):
            for k, t in enumerate(ts):
                f.write("%s %d %s\n" % (name, k, " ".join("%s:%.8g" % kv for kv in sorted(t.items()))))


if __name__ == "__main__":
    main()
