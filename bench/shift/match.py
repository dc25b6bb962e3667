#!/usr/bin/env python3
"""match.py - L1 distance between each true topic and its best learned topic.

match.py TRUTH PHI.npy VOCAB.txt [--max-l1 X] [--only old|new]
TRUTH is gen.py's .truth file; PHI.npy and VOCAB.txt come from
`streamlda export SNAPSHOT --npy PHI.npy --vocab VOCAB.txt`. Prints one line per
true topic (its best learned topic and the L1 distance over the union of words,
the learned topic renormalised over all its words) and, with --max-l1, exits 1
when any true topic is farther than X. Pure Python (reads float32 .npy itself).
"""
import ast
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        off = 10
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        off = 12
    hdr = ast.literal_eval(data[off:off + hlen].decode("latin1"))
    assert hdr["descr"] == "<f4" and not hdr["fortran_order"], hdr
    rows, cols = hdr["shape"]
    body = data[off + hlen:]
    vals = struct.unpack("<%df" % (rows * cols), body[:4 * rows * cols])
    return [list(vals[r * cols:(r + 1) * cols]) for r in range(rows)]


def load(truth, npy, vocab):
    true = []
    for line in open(truth):
        parts = line.split()
        true.append((parts[0], int(parts[1]),
                     {w: float(p) for w, p in (x.split(":") for x in parts[2:])}))
    words = [w.rstrip("\n") for w in open(vocab)]
    phi = read_npy(npy)
    return true, words, phi


def match(true, words, phi):
    learned = []
    for row in phi:
        s = sum(row)
        learned.append({w: p / s for w, p in zip(words, row) if p > 0})
    out = []
    for name, k, t in true:
        best, bl = -1, 9.0
        for j, q in enumerate(learned):
            l1 = sum(abs(p - q.get(w, 0.0)) for w, p in t.items())
            l1 += sum(p for w, p in q.items() if w not in t)
            if l1 < bl:
                best, bl = j, l1
        out.append((name, k, best, bl))
    return out


def main():
    args = sys.argv[1:]
    max_l1, only = None, None
    if "--max-l1" in args:
        i = args.index("--max-l1")
        max_l1 = float(args[i + 1])
        del args[i:i + 2]
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
    true, words, phi = load(*args)
    bad = 0
    for name, k, best, l1 in match(true, words, phi):
        if only and name != only:
            continue
        ok = max_l1 is None or l1 <= max_l1
        bad += not ok
        print("%s %d best=%d l1=%.3f%s" % (name, k, best, l1, "" if ok else " FAR"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
