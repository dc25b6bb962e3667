#!/usr/bin/env python3
"""compare.py - pachinko allocation on the stream against tomotopy's PAModel and LDA.

    compare.py DATADIR --streamlda BIN [--corpora kos,ap,20news] [-k 50] [-s 10]
               [--seeds 1] [--iters 10,50,200]

DATADIR holds bench/quality/prepare.py's splits. For each corpus and seed, one core:
  - streamlda `train -f uci -X threads=1 -X replay=off` one pass: LDA, and PAM
    (-X model.kind=pam -X pam.super=S); the whole process timed; phi by `export --npy`, the
    super-topics' priors by `topics --json`;
  - tomotopy.PAModel(k1=S, k2=K, alpha=0.1, subalpha=0.1, eta=0.1, seed) (collapsed Gibbs
    with its hyperparameter optimisation, the defaults), trained in steps to each of --iters
    iterations (workers=1), timed; its sub-topics' words (get_topic_word_dist), alpha and
    subalpha.
Every model is scored by one estimator (this file): document completion, theta of each held-out
document fitted on its observed half by EM over (super, sub) pairs,
    theta_y = sum_x theta_x theta_xy,  theta_x = (n_x + a0_x)/(n + sum a0),
    theta_xy = (n_xy + a_xy)/(n_x + A_x),
LDA as S = 1 with its alpha; the scored half's perplexity. Prints one line per model:
  pam corpus=C seed=S model=M perplexity=P seconds=T
and per corpus the tomotopy iterations (and seconds) that reach streamlda PAM's perplexity.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "quality"))
import evaluate  # noqa: E402

ALPHA = 0.1


def split_docs(d):
    """Per document (word ids, counts) of a UCI file, in docID order."""
    dd, w, c = evaluate.read_uci(d)
    starts = np.flatnonzero(np.r_[True, dd[1:] != dd[:-1]])
    ends = np.r_[starts[1:], dd.size]
    return [(w[s:e], c[s:e].astype(np.float64)) for s, e in zip(starts, ends)]


def fold(phi, a0, A, obs, held, iters=60):
    S, K = A.shape
    Asum = A.sum(axis=1)
    ll = n = 0.0
    for (ow, oc), (hw, hc) in zip(obs, held):
        P = phi[:, ow]                                   # K x n
        tx = a0 / a0.sum()
        txy = A / Asum[:, None]
        for _ in range(iters):
            j = tx[:, None, None] * txy[:, :, None] * P[None, :, :]
            j /= j.sum(axis=(0, 1), keepdims=True)
            nxy = (j * oc).sum(axis=2)
            nx = nxy.sum(axis=1)
            tx = (nx + a0) / (nx.sum() + a0.sum())
            txy = (nxy + A) / (nx + Asum)[:, None]
        theta = (tx[:, None] * txy).sum(axis=0)
        ll += (hc * np.log(theta @ phi[:, hw])).sum()
        n += hc.sum()
    return float(np.exp(-ll / n))


def run_streamlda(a, split, kind, seed, tmp, vocab):
    model = os.path.join(tmp, "m.slda")
    cmd = [a.streamlda, "train", "-q", "-f", "uci", "-k", str(a.k), "-X", "threads=1",
           "-X", f"seed={seed}", "-X", "replay=off", "-X", f"model.kind={kind}",
           "-X", f"pam.super={a.s}", "-o", model, os.path.join(split, "docword.train.txt")]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    sec = time.perf_counter() - t0
    subprocess.run([a.streamlda, "export", model, "--npy", os.path.join(tmp, "phi.npy"),
                    "--vocab", os.path.join(tmp, "phi.voc")], check=True, capture_output=True)
    phi = evaluate.load_phi(os.path.join(tmp, "phi.npy"), os.path.join(tmp, "phi.voc"), vocab)
    if kind == "lda":
        return phi, np.ones(1), np.full((1, a.k), ALPHA), sec
    j = json.loads(subprocess.run([a.streamlda, "topics", "--json", model], check=True,
                                  capture_output=True, text=True).stdout)
    A = np.array([s["alpha"] for s in j["supers"]], dtype=np.float64)
    return phi, np.full(a.s, j["alpha0"]), A, sec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--streamlda", required=True)
    ap.add_argument("--corpora", default="kos,ap,20news")
    ap.add_argument("-k", type=int, default=50)
    ap.add_argument("-s", type=int, default=10)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--iters", default="10,50,200")
    a = ap.parse_args()
    import tomotopy as tp
    iters = [int(x) for x in a.iters.split(",")]
    for corpus in a.corpora.split(","):
        split = os.path.join(a.data, corpus)
        with open(os.path.join(split, "vocab.train.txt"), encoding="utf-8") as f:
            vocab = [w.rstrip("\n") for w in f]
        index = {w: i for i, w in enumerate(vocab)}
        train = split_docs(os.path.join(split, "docword.train.txt"))
        obs = split_docs(os.path.join(split, "docword.testobs.txt"))
        held = split_docs(os.path.join(split, "docword.testheld.txt"))
        for seed in [int(s) for s in a.seeds.split(",")]:
            res = {}
            with tempfile.TemporaryDirectory(prefix="slda-pam-") as tmp:
                for kind in ("lda", "pam"):
                    phi, a0, A, sec = run_streamlda(a, split, kind, seed, tmp, vocab)
                    p = fold(phi, a0, A, obs, held)
                    res[kind] = p
                    print(f"pam corpus={corpus} seed={seed} model=streamlda-{kind} "
                          f"perplexity={p:.1f} seconds={sec:.2f}", flush=True)
            m = tp.PAModel(k1=a.s, k2=a.k, alpha=ALPHA, subalpha=ALPHA, eta=ALPHA, seed=seed)
            for w, c in train:
                m.add_doc([vocab[i] for i, n in zip(w.tolist(), c.astype(int).tolist())
                           for _ in range(n)])
            done = 0
            spent = 0.0
            reach = None
            for it in iters:
                t0 = time.perf_counter()
                m.train(it - done, workers=1)
                spent += time.perf_counter() - t0
                done = it
                wid = {w: i for i, w in enumerate(m.used_vocabs)}
                phi = np.full((a.k, len(vocab)), 1e-12)
                for y in range(a.k):
                    dist = np.asarray(m.get_topic_word_dist(y), dtype=np.float64)
                    for word, i in wid.items():
                        phi[y, index[word]] = dist[i]
                phi /= phi.sum(axis=1, keepdims=True)
                p = fold(phi, np.asarray(m.alpha, dtype=np.float64),
                         np.asarray(m.subalpha, dtype=np.float64), obs, held)
                if reach is None and p <= res["pam"]:
                    reach = (it, spent)
                print(f"pam corpus={corpus} seed={seed} model=tomotopy-pam iterations={it} "
                      f"perplexity={p:.1f} seconds={spent:.2f}", flush=True)
            print(f"pam corpus={corpus} seed={seed} tomotopy reaches streamlda-pam's "
                  f"{res['pam']:.1f}: " + (f"after {reach[0]} iterations, {reach[1]:.2f} s"
                                           if reach else f"not within {iters[-1]} iterations"),
                  flush=True)



if __name__ == "__main__":
    main()
