#!/usr/bin/env python3
"""gibbs_ref.py - the converged batch collapsed Gibbs reference (tomotopy), written as phi.npy.

    gibbs_ref.py SPLITDIR OUT.npy [-k 100] [--alpha 0.1] [--eta 0.1] [--iterations 1000]
                 [--every 100] [--average 10] [--seed 1]

Trains tomotopy's LDAModel (an independent C++ collapsed Gibbs sampler) on SPLITDIR's
docword.train.txt with a fixed symmetric alpha and eta (optim_interval=0: no hyperparameter
learning; min_cf=0, rm_top=0: every word kept) on one worker. Every `--every` iterations it
prints the held-out document-completion perplexity of the current sample (evaluate.py's em
estimator) and tomotopy's training log-likelihood per word, so convergence can be read off
("perplexity flat over the last checkpoints"). After `--iterations`, it runs `--average` more
samples 10 iterations apart and writes the mean of their phi (the posterior mean estimate; the
chain has settled, so topics keep their labels) to OUT.npy, with columns in vocabulary-id order.
The last line: `gibbs_ref perplexity_last=P perplexity_avg=Q seconds=S`.
"""
import argparse
import os
import sys
import time

import numpy as np
import tomotopy as tp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evaluate  # noqa: E402


def phi_of(model, vocab):
    col = {w: i for i, w in enumerate(model.used_vocabs)}
    idx = np.array([col.get(w, -1) for w in vocab])
    out = np.empty((model.k, len(vocab)))
    for k in range(model.k):
        row = np.asarray(model.get_topic_word_dist(k), dtype=np.float64)
        out[k] = np.where(idx >= 0, row[np.maximum(idx, 0)], row.min())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("split")
    ap.add_argument("out")
    ap.add_argument("-k", type=int, default=100)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--eta", type=float, default=0.1)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--average", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    with open(os.path.join(a.split, "vocab.train.txt"), encoding="utf-8") as f:
        vocab = [w.rstrip("\n") for w in f]
    d, w, c = evaluate.read_uci(os.path.join(a.split, "docword.train.txt"))
    od, ow, oc = evaluate.read_uci(os.path.join(a.split, "docword.testobs.txt"))
    hd, hw, hc = evaluate.read_uci(os.path.join(a.split, "docword.testheld.txt"))
    ids = np.unique(od)
    dmap = {x: i for i, x in enumerate(ids.tolist())}
    od = np.array([dmap[x] for x in od.tolist()])
    hd = np.array([dmap[x] for x in hd.tolist()])

    def perplexity(phi):
        phi = phi / phi.sum(axis=1, keepdims=True)
        theta = evaluate.theta_em(od, ow, oc, ids.size, phi, a.alpha, 1000)
        p = np.einsum("ij,ji->i", theta[hd], phi[:, hw])
        return float(np.exp(-(hc * np.log(p)).sum() / hc.sum()))

    model = tp.LDAModel(k=a.k, alpha=a.alpha, eta=a.eta, min_cf=0, rm_top=0, seed=a.seed)
    model.optim_interval = 0  # alpha stays fixed
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
    ends = np.r_[starts[1:], d.size]
    for s, e in zip(starts, ends):
        model.add_doc([vocab[x] for x in np.repeat(w[s:e], c[s:e].astype(np.int64))])
    t0 = time.time()
    done = 0
    while done < a.iterations:
        step = min(a.every, a.iterations - done)
        model.train(step, workers=1)
        done += step
        print(f"gibbs_ref iter={done} perplexity={perplexity(phi_of(model, vocab)):.2f} "
              f"ll_per_word={model.ll_per_word:.4f} seconds={time.time() - t0:.1f}", flush=True)
    last = phi_of(model, vocab)
    acc = last.copy()
    for _ in range(a.average - 1):
        model.train(10, workers=1)
        acc += phi_of(model, vocab)
    acc /= a.average
    np.save(a.out, acc.astype(np.float32))
    print(f"gibbs_ref perplexity_last={perplexity(last):.2f} perplexity_avg={perplexity(acc):.2f} "
          f"seconds={time.time() - t0:.1f}")


if __name__ == "__main__":
    main()
