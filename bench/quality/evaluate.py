#!/usr/bin/python3
"""evaluate.py - an independent document-completion evaluator (numpy only, no streamlda code).

    evaluate.py SPLITDIR PHI.npy [--cols WORDS.txt] [--alpha 0.1] [--method em|gibbs]
                [--iterations N] [--seed 1]

SPLITDIR is a directory written by prepare.py (docword.testobs.txt, docword.testheld.txt,
vocab.train.txt). PHI.npy is a K x V topic-word matrix (rows are normalised here, so counts
work too); its columns are the vocabulary ids 1..V of vocab.train.txt, or, with --cols, the
words listed one per line in WORDS.txt (what `streamlda export --vocab` writes), mapped to the
vocabulary by spelling (vocabulary words missing from WORDS.txt get the smallest probability of
their topic, which cannot happen with prepare.py's files: every word occurs in training).

For each held-out document, theta is estimated from its observed half with phi fixed and a
symmetric alpha (the same for every method compared), then the scored half is scored:
  perplexity = exp(- sum_{d,w} n_dw log sum_k theta_dk phi_kw / sum n_dw).
Estimators of theta:
  em     (default) the fixed point theta_dk ∝ alpha + sum_w n_dw phi_kw theta_dk / sum_k' phi_k'w
         theta_dk' (CVB0-style expected counts plus alpha), iterated from uniform until the
         largest change of a document's expected counts is below 1e-4 tokens, or N iterations
         (default 1000); deterministic.
  gibbs  collapsed Gibbs sampling of the observed tokens' topics with phi fixed, N sweeps
         (default 200) of which the first half are burn-in; theta is the mean over the kept
         sweeps of (n_dk + alpha) / (n_d + K alpha). Seeded.
Prints one line: `perplexity=P tokens=N docs=D method=M K=K`.
"""
import argparse
import os
import sys

import numpy as np


def read_uci(path):
    with open(path, "rb") as f:
        nums = np.array(f.read().split(), dtype=np.int64)
    e = nums[3:].reshape(-1, 3)
    return e[:, 0], e[:, 1] - 1, e[:, 2].astype(np.float64)


def load_phi(path, cols, vocab):
    phi = np.load(path).astype(np.float64)
    if cols:
        with open(cols, encoding="utf-8") as f:
            words = [w.rstrip("\n") for w in f]
        if len(words) != phi.shape[1]:
            sys.exit(f'evaluate: "{cols}": {len(words)} words for {phi.shape[1]} columns')
        pos = {w: i for i, w in enumerate(words)}
        full = np.empty((phi.shape[0], len(vocab)))
        floor = phi.min(axis=1)
        for i, w in enumerate(vocab):
            full[:, i] = phi[:, pos[w]] if w in pos else floor
        phi = full
    if phi.shape[1] != len(vocab):
        sys.exit(f"evaluate: phi has {phi.shape[1]} columns, the vocabulary {len(vocab)} words")
    if (phi < 0).any() or not np.isfinite(phi).all():
        sys.exit("evaluate: phi has negative or non-finite entries")
    return phi / phi.sum(axis=1, keepdims=True)


def theta_em(docs, words, counts, D, phi, alpha, iters):
    """docs must be sorted (the UCI files are) and 0..D-1 with every document present."""
    K = phi.shape[0]
    phit = phi.T.copy()                       # V x K
    theta = np.full((D, K), 1.0 / K)
    pw = phit[words]                           # nnz x K
    starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
    prev = None
    for _ in range(iters):
        td = theta[docs]
        z = np.einsum("ij,ij->i", td, pw)
        nk = np.add.reduceat(pw * (counts / z)[:, None], starts, axis=0) * theta
        theta = nk + alpha
        theta /= theta.sum(axis=1, keepdims=True)
        if prev is not None and np.abs(nk - prev).max() < 1e-4:
            break
        prev = nk
    return theta


def theta_gibbs(docs, words, counts, D, phi, alpha, iters, seed):
    K = phi.shape[0]
    rng = np.random.default_rng(seed)
    tok_doc = np.repeat(docs, counts.astype(np.int64))
    tok_word = np.repeat(words, counts.astype(np.int64))
    order = np.argsort(tok_doc, kind="stable")
    tok_doc, tok_word = tok_doc[order], tok_word[order]
    lens = np.bincount(tok_doc, minlength=D)
    start = np.concatenate(([0], np.cumsum(lens)[:-1]))
    pos = np.arange(tok_doc.size) - start[tok_doc]
    phit = phi.T
    z = np.empty(tok_doc.size, dtype=np.int64)
    nk = np.zeros((D, K))
    # initial draws from phi alone, then sweeps position by position over all documents
    p = phit[tok_word]
    c = np.cumsum(p, axis=1)
    z[:] = (c < rng.random(tok_doc.size)[:, None] * c[:, -1:]).sum(axis=1)
    np.add.at(nk, (tok_doc, z), 1)
    by_pos = [np.nonzero(pos == i)[0] for i in range(lens.max())]
    acc = np.zeros((D, K))
    kept = 0
    for it in range(iters):
        for idx in by_pos:
            d, w = tok_doc[idx], tok_word[idx]
            nk[d, z[idx]] -= 1
            p = phit[w] * (nk[d] + alpha)
            c = np.cumsum(p, axis=1)
            znew = (c < rng.random(idx.size)[:, None] * c[:, -1:]).sum(axis=1)
            znew = np.minimum(znew, K - 1)
            z[idx] = znew
            nk[d, znew] += 1
        if it >= iters // 2:
            acc += (nk + alpha) / (lens[:, None] + K * alpha)
            kept += 1
    return acc / kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("split")
    ap.add_argument("phi")
    ap.add_argument("--cols")
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--method", choices=("em", "gibbs"), default="em")
    ap.add_argument("--iterations", type=int)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    with open(os.path.join(a.split, "vocab.train.txt"), encoding="utf-8") as f:
        vocab = [w.rstrip("\n") for w in f]
    phi = load_phi(a.phi, a.cols, vocab)
    od, ow, oc = read_uci(os.path.join(a.split, "docword.testobs.txt"))
    hd, hw, hc = read_uci(os.path.join(a.split, "docword.testheld.txt"))
    ids = np.unique(np.concatenate((od, hd)))
    dmap = {d: i for i, d in enumerate(ids.tolist())}
    od = np.array([dmap[d] for d in od.tolist()])
    hd = np.array([dmap[d] for d in hd.tolist()])
    D = ids.size
    if a.method == "em":
        theta = theta_em(od, ow, oc, D, phi, a.alpha, a.iterations or 1000)
    else:
        theta = theta_gibbs(od, ow, oc, D, phi, a.alpha, a.iterations or 200, a.seed)
    p = np.einsum("ij,ji->i", theta[hd], phi[:, hw])
    ll = float((hc * np.log(p)).sum())
    n = float(hc.sum())
    print(f"perplexity={np.exp(-ll / n):.2f} tokens={int(n)} docs={D} method={a.method} "
          f"K={phi.shape[0]}")


if __name__ == "__main__":
    main()
