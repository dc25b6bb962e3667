#!/usr/bin/python3
"""prepare.py - the fixed train / document-completion splits of the quality benchmark.

    prepare.py OUT [--corpora kos,ap,reuters,20news] [--holdout 0.1] [--seed 1]

For each corpus, writes OUT/<corpus>/ with UCI bag-of-words files that every method reads
(streamlda, the Gibbs references, gensim, the evaluator), so all see the same tokens:

  docword.train.txt    training documents, docIDs 1..D in training order
  docword.testobs.txt  the observed half of each held-out document (docIDs D+1..)
  docword.testheld.txt the scored half, same docIDs
  vocab.{train,testobs,testheld}.txt  the vocabulary (one word a line, id = line number)
  split.json           sizes and the settings used

This generalises bench/kos_split.py (same permutation rule, same token-by-token halves):
  - documents are read (KOS: UCI; AP: lda-c; Reuters-21578: the <BODY> of each article of the
    22 SGML files, in NEWID order, which is nearly time order; 20 Newsgroups: the body of each
    message, text after the first blank line) and tokenised once, for the text corpora as
    lowercase maximal runs of ASCII letters [a-z]+ (the rule of shared/data/README.md), at least
    3 letters (streamlda's text.min.length default), SMART stop words removed (streamlda's
    text.stopwords default, config/stopwords/smart.txt);
  - documents without tokens are dropped; a seeded permutation (numpy default_rng(seed)) picks
    round(holdout * D) held-out documents;
  - text corpora: the vocabulary is the words with count >= 5 in the training documents (ids in
    first-seen order of the training stream); other tokens are removed from every document, and
    documents left empty (training) or with fewer than 2 tokens (held out) are dropped. KOS and
    AP keep their published vocabularies;
  - a held-out document's tokens (word repeated count times, in word-id order) are shuffled
    with the same generator; the first floor(n/2) are observed, the rest scored;
  - training order: the source order, except 20 Newsgroups, whose archive is grouped by
    newsgroup (a stream of one group after another is a drifting-topic problem, not the
    stationary one measured here): its training documents are shuffled with the same generator.
Same inputs and seed => same bytes. A summary line per corpus goes to standard error.
"""
import argparse
import gzip
import html
import json
import os
import re
import sys
import tarfile

import numpy as np

TOKEN = re.compile(r"[a-z]+")
MIN_LEN = 3
MIN_COUNT = 5


def shared_dir():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.environ.get("SLDA_SHARED_DIR") or os.path.join(repo, "..", "shared")


def repo_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stopwords():
    path = os.path.join(repo_dir(), "config", "stopwords", "smart.txt")
    with open(path, encoding="utf-8") as f:
        return {w.strip() for w in f if w.strip()}


def tokenize(text, stop):
    return [t for t in TOKEN.findall(text.lower()) if len(t) >= MIN_LEN and t not in stop]


# ---- readers: each returns (vocab or None, docs) with docs a list of token lists (text) or
# ---- (word ids, counts) arrays (bag of words, 0-based ids) ----

def read_kos(data):
    path = os.path.join(data, "kos", "docword.kos.txt")
    with open(path, "rb") as f:
        nums = np.array(f.read().split(), dtype=np.int64)
    ndocs = int(nums[0])
    e = nums[3:].reshape(-1, 3)
    e = e[np.lexsort((e[:, 1], e[:, 0]))]
    with open(os.path.join(data, "kos", "vocab.kos.txt"), encoding="utf-8") as f:
        vocab = [w.rstrip("\n") for w in f]
    docs = []
    ids, starts = np.unique(e[:, 0], return_index=True)
    ends = np.append(starts[1:], e.shape[0])
    assert ids.size == ndocs
    for s, t in zip(starts, ends):
        docs.append((e[s:t, 1] - 1, e[s:t, 2]))
    return vocab, docs


def read_ap(data):
    with open(os.path.join(data, "ap", "vocab.txt"), encoding="utf-8") as f:
        vocab = [w.rstrip("\n") for w in f]
    docs = []
    with open(os.path.join(data, "ap", "ap.dat"), encoding="ascii") as f:
        for line in f:
            parts = line.split()
            pairs = np.array([p.split(":") for p in parts[1:]], dtype=np.int64).reshape(-1, 2)
            order = np.argsort(pairs[:, 0])
            docs.append((pairs[order, 0], pairs[order, 1]))
    return vocab, docs


BODY = re.compile(r"<BODY>(.*?)</BODY>", re.S)
ARTICLE = re.compile(r"<REUTERS[^>]*NEWID=\"(\d+)\"[^>]*>(.*?)</REUTERS>", re.S)
ENTITY = re.compile(r"&#\d+;")


def read_reuters(data, stop):
    arts = []
    for i in range(22):
        path = os.path.join(data, "reuters21578", f"reut2-{i:03d}.sgm.gz")
        with gzip.open(path, "rb") as f:
            text = f.read().decode("latin-1")
        for m in ARTICLE.finditer(text):
            b = BODY.search(m.group(2))
            if b:
                body = html.unescape(ENTITY.sub(" ", b.group(1)))
                arts.append((int(m.group(1)), tokenize(body, stop)))
    arts.sort(key=lambda a: a[0])
    return None, [t for _, t in arts]


def iter_20news(data):
    """(path in the archive, header, body) of each message, in path order (bench/atm too)."""
    path = os.path.join(data, "20news-bydate", "20news-bydate.tar.gz")
    with tarfile.open(path, "r:gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
        for m in members:
            raw = tar.extractfile(m).read().decode("latin-1").replace("\r\n", "\n")
            cut = raw.find("\n\n")
            yield m.name, (raw[:cut] if cut >= 0 else raw), (raw[cut + 2:] if cut >= 0 else "")


def read_20news(data, stop):
    return None, [tokenize(body, stop) for _, _, body in iter_20news(data)]


# ---- the split ----

def bag(tokens, index):
    ids = np.array([index[t] for t in tokens if t in index], dtype=np.int64)
    if ids.size == 0:
        return ids, ids
    w, c = np.unique(ids, return_counts=True)
    return w, c.astype(np.int64)


def split_doc(rng, words, counts):
    tokens = rng.permutation(np.repeat(words, counts))
    half = tokens.size // 2
    out = []
    for part in (tokens[:half], tokens[half:]):
        w, c = np.unique(part, return_counts=True)
        out.append((w, c))
    return out


def write_uci(path, docs, first_id, nwords):
    nnz = sum(w.size for w, _ in docs)
    with open(path, "w") as f:
        f.write(f"{first_id - 1 + len(docs)}\n{nwords}\n{nnz}\n")
        for i, (w, c) in enumerate(docs):
            d = first_id + i
            f.write("".join(f"{d} {a + 1} {b}\n" for a, b in zip(w.tolist(), c.tolist())))


def prepare(name, out, data, holdout, seed, stop):
    if name == "kos":
        vocab, docs = read_kos(data)
    elif name == "ap":
        vocab, docs = read_ap(data)
    elif name == "reuters":
        vocab, docs = read_reuters(data, stop)
    elif name == "20news":
        vocab, docs = read_20news(data, stop)
    else:
        sys.exit(f'prepare: corpus "{name}": unknown (kos, ap, reuters, 20news)')
    text = vocab is None
    docs = [d for d in docs if (len(d) if text else d[1].sum()) > 0]
    rng = np.random.default_rng(seed)
    ntest = max(1, int(round(holdout * len(docs))))
    is_test = np.zeros(len(docs), dtype=bool)
    is_test[rng.permutation(len(docs))[:ntest]] = True
    train_raw = [d for d, t in zip(docs, is_test) if not t]
    test_raw = [d for d, t in zip(docs, is_test) if t]
    if text:
        counts = {}
        order = []
        for toks in train_raw:
            for t in toks:
                if t not in counts:
                    counts[t] = 0
                    order.append(t)
                counts[t] += 1
        vocab = [t for t in order if counts[t] >= MIN_COUNT]
        index = {t: i for i, t in enumerate(vocab)}
        train = [b for b in (bag(t, index) for t in train_raw) if b[0].size]
        test = [b for b in (bag(t, index) for t in test_raw) if b[1].sum() >= 2]
    else:
        train, test = train_raw, test_raw
    if name == "20news":
        train = [train[i] for i in rng.permutation(len(train))]
    obs, held = [], []
    for w, c in test:
        (ow, oc), (hw, hc) = split_doc(rng, w, c)
        obs.append((ow, oc))
        held.append((hw, hc))
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    W = len(vocab)
    write_uci(os.path.join(d, "docword.train.txt"), train, 1, W)
    write_uci(os.path.join(d, "docword.testobs.txt"), obs, len(train) + 1, W)
    write_uci(os.path.join(d, "docword.testheld.txt"), held, len(train) + 1, W)
    for part in ("train", "testobs", "testheld"):
        with open(os.path.join(d, f"vocab.{part}.txt"), "w", encoding="utf-8") as f:
            f.write("".join(v + "\n" for v in vocab))
    info = {
        "corpus": name, "seed": seed, "holdout": holdout, "W": W,
        "train_docs": len(train), "train_tokens": int(sum(c.sum() for _, c in train)),
        "test_docs": len(test), "testobs_tokens": int(sum(c.sum() for _, c in obs)),
        "testheld_tokens": int(sum(c.sum() for _, c in held)),
    }
    with open(os.path.join(d, "split.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    print("prepare: " + " ".join(f"{k}={v}" for k, v in info.items()), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--corpora", default="kos,ap,reuters,20news")
    ap.add_argument("--holdout", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    data = os.path.join(shared_dir(), "data")
    stop = stopwords()
    for name in a.corpora.split(","):
        prepare(name, a.out, data, a.holdout, a.seed, stop)


if __name__ == "__main__":
    main()
