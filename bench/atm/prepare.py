#!/usr/bin/python3
"""prepare.py - the author-topic split of 20 Newsgroups: each message's sender as its author.

    prepare.py OUT [--holdout 0.1] [--seed 1]

Reads shared/data/20news-bydate (both splits), tokenises each message's body as
bench/quality/prepare.py does (lowercase [a-z]+, at least 3 letters, SMART stop words), and
takes its author from the `From:` header: the e-mail address, lowercased (the whole header value
when it has none). Held-out documents are drawn (numpy default_rng(seed)) among the messages
whose sender wrote at least two, at most one fewer than the sender wrote, so every held-out
document's author has training documents ("test documents of authors seen in training",
issue 28); round(holdout * D) of them. The vocabulary is the words with count >= 5 in the
training documents; a held-out document's tokens are shuffled and halved (observed, scored) as
the quality benchmark does. Training order: shuffled with the same generator (the archive is
grouped by newsgroup). Writes OUT/:

  train.jsonl          {"id", "author", "tokens"} per training document
  testobs.jsonl        the observed half of each held-out document (same fields)
  testheld.jsonl       its scored half
  vocab.txt            the vocabulary, one word a line
  split.json           sizes: documents, tokens, authors, held-out authors
Same inputs and seed => same bytes.
"""
import argparse
import json
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "quality"))
import prepare as qprep  # noqa: E402

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def read_messages(data, stop):
    out = []
    for name, head, body in qprep.iter_20news(data):
        author = None
        for line in head.split("\n"):
            if line.lower().startswith("from:"):
                value = line[5:].strip()
                e = EMAIL.search(value)
                author = (e.group(0) if e else value).lower()
                break
        if author:
            out.append((name, author, qprep.tokenize(body, stop)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--holdout", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    stop = qprep.stopwords()
    msgs = [m for m in read_messages(os.path.join(qprep.shared_dir(), "data"), stop) if m[2]]
    rng = np.random.default_rng(a.seed)
    by_author = {}
    for i, (_, author, _) in enumerate(msgs):
        by_author.setdefault(author, []).append(i)
    eligible = [i for i, (_, au, _) in enumerate(msgs) if len(by_author[au]) >= 2]
    want = round(a.holdout * len(msgs))
    held, left = set(), {au: len(v) for au, v in by_author.items()}
    for i in rng.permutation(eligible).tolist():
        if len(held) == want:
            break
        au = msgs[i][1]
        if left[au] >= 2:
            held.add(i)
            left[au] -= 1
    train = [i for i in range(len(msgs)) if i not in held]
    train = [train[j] for j in rng.permutation(len(train)).tolist()]
    counts = {}
    for i in train:
        for t in msgs[i][2]:
            counts[t] = counts.get(t, 0) + 1
    vocab = [w for w in dict.fromkeys(t for i in train for t in msgs[i][2])
             if counts[w] >= qprep.MIN_COUNT]
    keep = set(vocab)
    os.makedirs(a.out, exist_ok=True)
    ntrain_tok = 0
    with open(os.path.join(a.out, "train.jsonl"), "w", encoding="utf-8") as f:
        for i in train:
            toks = [t for t in msgs[i][2] if t in keep]
            if not toks:
                continue
            ntrain_tok += len(toks)
            f.write(json.dumps({"id": msgs[i][0], "author": msgs[i][1], "tokens": toks}) + "\n")
    nheld = nobs = nsc = 0
    held_authors = set()
    with open(os.path.join(a.out, "testobs.jsonl"), "w", encoding="utf-8") as fo, \
            open(os.path.join(a.out, "testheld.jsonl"), "w", encoding="utf-8") as fh:
        for i in sorted(held):
            toks = sorted(t for t in msgs[i][2] if t in keep)
            if len(toks) < 2:
                continue
            toks = [toks[j] for j in rng.permutation(len(toks)).tolist()]
            h = len(toks) // 2
            rec = {"id": msgs[i][0], "author": msgs[i][1]}
            fo.write(json.dumps(dict(rec, tokens=toks[:h])) + "\n")
            fh.write(json.dumps(dict(rec, tokens=toks[h:])) + "\n")
            nheld += 1
            nobs += h
            nsc += len(toks) - h
            held_authors.add(msgs[i][1])
    with open(os.path.join(a.out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(w + "\n" for w in vocab))
    split = {"corpus": "20news-senders", "seed": a.seed, "holdout": a.holdout, "W": len(vocab),
             "train_docs": len(train), "train_tokens": ntrain_tok,
             "authors": len({msgs[i][1] for i in train}), "test_docs": nheld,
             "test_authors": len(held_authors), "testobs_tokens": nobs,
             "testheld_tokens": nsc}
    with open(os.path.join(a.out, "split.json"), "w") as f:
        json.dump(split, f, indent=1)
    print("prepare:", json.dumps(split), file=sys.stderr)


if __name__ == "__main__":
    main()
