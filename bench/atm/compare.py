#!/usr/bin/env python3
"""compare.py - the author-topic model against LDA and gensim's AuthorTopicModel, one split.

    compare.py SPLIT --streamlda BIN [-k 50] [--seeds 1,2,3] [--skip-gensim]
                     [--gensim-chunksize 2000] [--passes 1]

SPLIT is bench/atm/prepare.py's output (20 Newsgroups, senders as authors). For each seed:
  - streamlda LDA and ATM: `streamlda train -f json -k K -X model.kind=lda|atm -X threads=1
    -X replay=off` on train.jsonl (the tokens as given: text.stopwords=none,
    text.min.length=1, text.segment=simple), phi by `export --npy --vocab`, the author
    mixtures and masses by `authors --npy --names --json`; the whole process timed;
  - gensim.models.AuthorTopicModel (alpha = eta = 0.1 symmetric, passes, chunksize, its
    default iterations, random_state = seed, one core), its phi (get_topics) and each
    author's variational Dirichlet parameters gamma (state.gamma) as its prior; fit timed.
Every model is scored by the same estimator (this file):
  - completion: theta of each held-out document fitted on its observed half by EM with a
    Dirichlet prior (LDA: alpha; ATM: its author's N_a + alpha, gensim: its author's gamma),
    theta = (n + prior) / (|n| + |prior|); perplexity of the scored half;
  - completion10: the same with only the first 10 observed tokens (a short document, where
    Rosen-Zvi et al. found the author-topic model ahead of LDA);
  - author only (ATM): the scored half predicted by the author's prior alone, normalised;
  - nearest author: the whole held-out document's log-likelihood under every training
    author's mixture (prior normalised); accuracy@1 and @10 of its true author.
Prints one line per model and seed, then the medians over seeds:
  atm model=M seed=S completion=P completion10=P author_only=P acc1=A acc10=A seconds=T
      rss_mb=R
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ALPHA = 0.1


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Split:
    def __init__(self, d):
        with open(os.path.join(d, "vocab.txt"), encoding="utf-8") as f:
            self.vocab = [w.rstrip("\n") for w in f]
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.train = read_jsonl(os.path.join(d, "train.jsonl"))
        self.obs = read_jsonl(os.path.join(d, "testobs.jsonl"))
        self.held = read_jsonl(os.path.join(d, "testheld.jsonl"))
        self.dir = d

    def bags(self, recs, limit=None):
        out = []
        for r in recs:
            ids = np.array([self.index[t] for t in r["tokens"][:limit]], dtype=np.int64)
            w, c = np.unique(ids, return_counts=True)
            out.append((w, c.astype(np.float64)))
        return out


def completion(phi, obs, held, priors, iters=100):
    """priors: D x K pseudo-counts. Returns (completion perplexity, author-only perplexity)."""
    ll = ll0 = 0.0
    n = 0.0
    for (ow, oc), (hw, hc), pr in zip(obs, held, priors):
        theta = pr / pr.sum()
        po = phi[:, ow]                               # K x |obs|
        for _ in range(iters):
            r = theta[:, None] * po
            r /= r.sum(axis=0, keepdims=True)
            nk = (r * oc).sum(axis=1)
            new = (nk + pr) / (oc.sum() + pr.sum())
            if np.abs(new - theta).max() < 1e-7:
                theta = new
                break
            theta = new
        ph = phi[:, hw]
        ll += (hc * np.log(theta @ ph)).sum()
        ll0 += (hc * np.log((pr / pr.sum()) @ ph)).sum()
        n += hc.sum()
    return float(np.exp(-ll / n)), float(np.exp(-ll0 / n))


def nearest(phi, docs, mixtures, truth):
    """accuracy@1, @10 of the true author among all rows of mixtures (A x K)."""
    logm = mixtures
    acc1 = acc10 = 0
    for (w, c), t in zip(docs, truth):
        ll = (np.log(logm @ phi[:, w]) * c).sum(axis=1)   # A
        rank = int((ll > ll[t]).sum())
        acc1 += rank == 0
        acc10 += rank < 10
    return acc1 / len(docs), acc10 / len(docs)


def peak_child_mb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def run_streamlda(a, sp, kind, seed, tmp):
    model = os.path.join(tmp, f"{kind}-{seed}.slda")
    cmd = [a.streamlda, "train", "-f", "json", "-q", "-k", str(a.k), "-X", f"model.kind={kind}",
           "-X", "threads=1", "-X", f"seed={seed}", "-X", "replay=off", "-X", "text.stopwords=none",
           "-X", "text.min.length=1", "-X", "text.segment=simple", "-p", str(a.passes),
           "-o", model, os.path.join(sp.dir, "train.jsonl")]
    t0 = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "rss_kb=%M"] + cmd, capture_output=True,
                         text=True, check=True)
    seconds = time.perf_counter() - t0
    rss = [int(x.split("=")[1]) for x in out.stderr.split() if x.startswith("rss_kb=")][-1]
    subprocess.run([a.streamlda, "export", model, "--npy", os.path.join(tmp, "phi.npy"), "--vocab",
                    os.path.join(tmp, "phi.vocab")], check=True, capture_output=True)
    phi_cols = np.load(os.path.join(tmp, "phi.npy")).astype(np.float64)
    with open(os.path.join(tmp, "phi.vocab"), encoding="utf-8") as f:
        cols = [w.rstrip("\n") for w in f]
    phi = np.full((phi_cols.shape[0], len(sp.vocab)), 1e-12)
    for j, w in enumerate(cols):
        if w in sp.index:
            phi[:, sp.index[w]] = phi_cols[:, j]
    phi /= phi.sum(axis=1, keepdims=True)
    authors = None
    if kind == "atm":
        js = subprocess.run([a.streamlda, "authors", "--top", "0", "--json", "--npy",
                             os.path.join(tmp, "a.npy"), "--names", os.path.join(tmp, "a.txt"),
                             model], check=True, capture_output=True, text=True).stdout
        mass = {e["author"]: e["mass"] for e in json.loads(js)["list"]}
        mix = np.load(os.path.join(tmp, "a.npy")).astype(np.float64)
        with open(os.path.join(tmp, "a.txt"), encoding="utf-8") as f:
            names = [x.rstrip("\n") for x in f]
        prior = mix * np.array([mass[n] + ALPHA * a.k for n in names])[:, None]
        authors = (names, prior)
    return phi, authors, seconds, rss / 1024.0


def run_gensim(a, sp, seed):
    from gensim.models import AuthorTopicModel
    corpus = [list(zip(w.tolist(), c.astype(int).tolist())) for w, c in sp.bags(sp.train)]
    author2doc = {}
    for i, r in enumerate(sp.train):
        author2doc.setdefault(r["author"], []).append(i)
    t0 = time.perf_counter()
    model = AuthorTopicModel(corpus=corpus, num_topics=a.k, id2word=dict(enumerate(sp.vocab)),
                             author2doc=author2doc, chunksize=a.gensim_chunksize,
                             passes=a.passes, alpha=ALPHA, eta=ALPHA, eval_every=0,
                             random_state=seed)
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    phi = model.get_topics().astype(np.float64)
    phi /= phi.sum(axis=1, keepdims=True)
    names = [model.id2author[i] for i in range(len(model.id2author))]
    prior = np.asarray(model.state.gamma, dtype=np.float64)
    return phi, (names, prior), seconds, rss


def score(sp, phi, authors, K):
    obs, held, obs10 = sp.bags(sp.obs), sp.bags(sp.held), sp.bags(sp.obs, 10)
    if authors is None:
        priors = [np.full(K, ALPHA)] * len(obs)
        comp, _ = completion(phi, obs, held, priors)
        comp10, _ = completion(phi, obs10, held, priors)
        return comp, comp10, None, None, None
    names, prior = authors
    pos = {n: i for i, n in enumerate(names)}
    priors = [prior[pos[r["author"]]] if r["author"] in pos else np.full(K, ALPHA)
              for r in sp.obs]
    comp, only = completion(phi, obs, held, priors)
    comp10, _ = completion(phi, obs10, held, priors)
    whole = []
    for r1, r2 in zip(sp.obs, sp.held):
        ids = np.array([sp.index[t] for t in r1["tokens"] + r2["tokens"]], dtype=np.int64)
        w, c = np.unique(ids, return_counts=True)
        whole.append((w, c.astype(np.float64)))
    keep = [i for i, r in enumerate(sp.obs) if r["author"] in pos]
    mix = prior / prior.sum(axis=1, keepdims=True)
    acc1, acc10 = nearest(phi, [whole[i] for i in keep], mix,
                          [pos[sp.obs[i]["author"]] for i in keep])
    return comp, comp10, only, acc1, acc10


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("split")
    ap.add_argument("--streamlda", required=True)
    ap.add_argument("-k", type=int, default=50)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--gensim-chunksize", type=int, default=2000)
    ap.add_argument("--skip-gensim", action="store_true")
    a = ap.parse_args()
    sp = Split(a.split)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="slda-atm-") as tmp:
        for seed in [int(s) for s in a.seeds.split(",")]:
            models = ["lda", "atm"] + ([] if a.skip_gensim else ["gensim-atm"])
            for m in models:
                if m == "gensim-atm":
                    phi, authors, sec, rss = run_gensim(a, sp, seed)
                else:
                    phi, authors, sec, rss = run_streamlda(a, sp, m, seed, tmp)
                comp, comp10, only, acc1, acc10 = score(sp, phi, authors, a.k)
                r = dict(completion=comp, completion10=comp10, author_only=only, acc1=acc1,
                         acc10=acc10,
                         seconds=sec, rss_mb=rss)
                rows.setdefault(m, []).append(r)
                print(f"atm model={m} seed={seed} k={a.k} passes={a.passes} " +
                      " ".join(f"{k}={'-' if v is None else f'{v:.4g}'}" for k, v in r.items()),
                      flush=True)
    for m, rs in rows.items():
        med = {k: (None if rs[0][k] is None else statistics.median(r[k] for r in rs))
               for k in rs[0]}
        print(f"atm median model={m} k={a.k} passes={a.passes} seeds={len(rs)} " +
              " ".join(f"{k}={'-' if v is None else f'{v:.4g}'}" for k, v in med.items()))


if __name__ == "__main__":
    main()
