#!/usr/bin/env python3
"""fig2.py - Heinrich's Fig. 2 (VB against Gibbs for LDA, ATM and PAM) on 20 Newsgroups with senders.

    fig2.py SPLIT --streamlda BIN [-k 50] [-s 10] [--seed 1] [--gibbs-iters 80]
            [--vb-iters 40] [--hybrid-iters 40] [--pam-gibbs-iters 25] [--pam-vb-iters 30]
            [--pam-hybrid-iters 15] [--kinds lda,atm,pam] [--skip-peers]

The defaults took 23 minutes on two cores loaded by other jobs (load average 8-10; PAM is S
times LDA per token); --skip-peers saves 7 of them. The paper ran its
samplers 330-440 iterations and VB 19-28 to convergence, so the batch rows print their test
perplexity every 10 iterations (trace=) to show how far from converged they stop.

SPLIT is bench/atm/prepare.py's output; only its train.jsonl is read (16,928 messages, each
with its sender as its one author). One protocol for every row, the hybrid paper's batch
experiment: 10% of each message's tokens are withheld and predicted from the message's own
mixture (ATM: its author's) learned with the other 90%:
  - `streamlda train --batch -X model.kind=lda|atm|pam -X local=V` for V = cvb0 (the AMF form:
    "VB"), cgs (collapsed Gibbs) and cvb0+cgs (the hybrid): the withheld 10% are drawn inside
    streamlda (seeded, per token); its printed perplexity and seconds;
  - streaming, one pass (`streamlda train`, threads=1, replay=off) on the 90% of each message
    (this file withholds 10% of the tokens, seeded, per message), scored by `--test-obs` (the
    90%, folded in) and `--test-held` (the 10%): the same protocol with another draw of the
    10%; wall seconds of the whole process (reading and the held-out fold-in included);
  - peers on the same 90/10 files, scored here with the training mixtures of each message
    (tomotopy LDAModel and PAModel, Gibbs, doc.get_topic_dist / get_sub_topic_dist) or author
    (gensim AuthorTopicModel, VB, one pass: its normalised gamma): p(w) = sum_k theta_k phi_kw;
    a withheld word the peer never saw gets eta / (N_k + W eta); fit seconds.
alpha = 0.1 and eta = 0.1 (streamlda's defaults) for every model (tomotopy PAModel: alpha
0.1 for the super-topics, its sub-topic alpha starting at 0.1 and learned as streamlda's
alpha_x is). Times are one run each, under whatever load the machine has: print the load.
Prints one line per row:
  fig2 model=M method=X iterations=N perplexity=P seconds=T [trace=IT:P,...]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ALPHA = 0.1
ETA = 0.1
TEXT = ["-X", "text.stopwords=none", "-X", "text.min.length=1", "-X", "text.segment=simple"]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def split90(docs, seed):
    """Each message's tokens into (90%, 10%), each token withheld with probability 0.1."""
    rng = random.Random(seed)
    out = []
    for d in docs:
        obs, held = [], []
        for t in d["tokens"]:
            (held if rng.random() < 0.1 else obs).append(t)
        if obs and held:
            out.append((d, obs, held))
    return out


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def run(cmd):
    t0 = time.time()
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return r.stdout, time.time() - t0


def batch_row(a, train, kind, local, iters):
    cmd = [a.streamlda, "train", "--batch", "-f", "jsonl", "-i", str(iters), "-e", "10",
           "-X", f"model.kind={kind}", "-X", f"topics={a.k}", "-X", f"pam.super={a.s}",
           "-X", f"local={local}", "-X", f"seed={a.seed}"] + TEXT + [train]
    t0 = time.time()
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    m = re.search(r"perplexity=([\d.]+) seconds=([\d.]+)", r.stdout)
    trace = ",".join("%s:%s" % t for t in re.findall(r"iter (\d+) perplexity ([\d.]+)", r.stderr))
    return float(m.group(1)), float(m.group(2)), trace


def stream_row(a, kind, obs, held):
    cmd = [a.streamlda, "train", "-q", "-f", "jsonl", "-k", str(a.k), "-X", f"model.kind={kind}",
           "-X", f"pam.super={a.s}", "-X", "threads=1", "-X", "replay=off", "-X",
           f"seed={a.seed}", "--test-obs", obs, "--test-held", held] + TEXT + [obs]
    out, sec = run(cmd)
    return float(re.search(r"perplexity=([\d.]+)", out).group(1)), sec


def perplexity(thetas, phi_of, held_rows):
    ll, n = 0.0, 0
    for theta, held in zip(thetas, held_rows):
        for w in held:
            ll += np.log(float(theta @ phi_of(w)))
            n += 1
    return float(np.exp(-ll / n))


def tomotopy_rows(a, rows, W):
    import tomotopy as tp
    out = []
    for name, make, iters in (("LDA", lambda: tp.LDAModel(k=a.k, alpha=ALPHA, eta=ETA, seed=a.seed),
                               a.gibbs_iters),
                              ("PAM", lambda: tp.PAModel(k1=a.s, k2=a.k, alpha=ALPHA,
                                                         subalpha=ALPHA, eta=ETA, seed=a.seed),
                               a.pam_gibbs_iters)):
        mdl = make()
        for _, obs, _ in rows:
            mdl.add_doc(obs)
        t0 = time.time()
        mdl.train(iters, workers=1)
        sec = time.time() - t0
        vocab = {w: i for i, w in enumerate(mdl.used_vocabs)}
        phi = np.array([mdl.get_topic_word_dist(k) for k in range(a.k)])  # K x V_t
        nk = np.asarray(mdl.get_count_by_topics(), dtype=float)
        unseen = ETA / (nk + W * ETA)
        if name == "LDA":
            thetas = [np.asarray(d.get_topic_dist()) for d in mdl.docs]
        else:
            thetas = [np.asarray(d.get_sub_topic_dist()) for d in mdl.docs]
        p = perplexity(thetas, lambda w: phi[:, vocab[w]] if w in vocab else unseen,
                       [h for _, _, h in rows])
        out.append((name, "Gibbs (tomotopy %s)" % tp.__version__, iters, p, sec))
    return out


def gensim_row(a, rows, W):
    import gensim
    from gensim.corpora import Dictionary
    from gensim.models import AuthorTopicModel
    dct = Dictionary([obs for _, obs, _ in rows])
    corpus = [dct.doc2bow(obs) for _, obs, _ in rows]
    author2doc = {}
    for i, (d, _, _) in enumerate(rows):
        author2doc.setdefault(d["author"], []).append(i)
    t0 = time.time()
    mdl = AuthorTopicModel(corpus, num_topics=a.k, id2word=dct, author2doc=author2doc, passes=1,
                           chunksize=2000, alpha=ALPHA, eta=ETA, random_state=a.seed)
    sec = time.time() - t0
    phi = mdl.get_topics()
    gamma = mdl.state.gamma
    thetas = []
    for d, _, _ in rows:
        g = gamma[mdl.author2id[d["author"]]]
        thetas.append(g / g.sum())
    nk = np.full(a.k, sum(len(o) for _, o, _ in rows) / a.k)
    unseen = ETA / (nk + W * ETA)
    p = perplexity(thetas, lambda w: phi[:, dct.token2id[w]] if w in dct.token2id else unseen,
                   [h for _, _, h in rows])
    return [("ATM", "VB (gensim %s, 1 pass)" % gensim.__version__, 1, p, sec)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("split")
    ap.add_argument("--streamlda", required=True)
    ap.add_argument("-k", type=int, default=50)
    ap.add_argument("-s", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gibbs-iters", type=int, default=80)
    ap.add_argument("--vb-iters", type=int, default=40)
    ap.add_argument("--hybrid-iters", type=int, default=40)
    ap.add_argument("--pam-gibbs-iters", type=int, default=25)
    ap.add_argument("--pam-vb-iters", type=int, default=30)
    ap.add_argument("--pam-hybrid-iters", type=int, default=15)
    ap.add_argument("--kinds", default="lda,atm,pam")
    ap.add_argument("--skip-peers", action="store_true")
    a = ap.parse_args()
    print("fig2 load %s" % " ".join("%.1f" % x for x in os.getloadavg()), flush=True)
    train = os.path.join(a.split, "train.jsonl")
    docs = read_jsonl(train)
    W = sum(1 for _ in open(os.path.join(a.split, "vocab.txt"), encoding="utf-8"))
    rows = split90(docs, a.seed)

    def show(model, method, iters, p, sec, trace=""):
        print(f"fig2 model={model} method={method!r} iterations={iters} perplexity={p:.1f} "
              f"seconds={sec:.1f}" + (f" trace={trace}" if trace else ""), flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        obs, held = os.path.join(tmp, "obs.jsonl"), os.path.join(tmp, "held.jsonl")
        write_jsonl(obs, [{"id": d["id"], "author": d["author"], "tokens": o} for d, o, _ in rows])
        write_jsonl(held, [{"id": d["id"], "author": d["author"], "tokens": h}
                           for d, _, h in rows])
        for kind in a.kinds.split(","):
            pam = kind == "pam"
            for local, method, iters in (
                    ("cvb0", "VB (AMF, batch)", a.pam_vb_iters if pam else a.vb_iters),
                    ("cgs", "Gibbs (batch)", a.pam_gibbs_iters if pam else a.gibbs_iters),
                    ("cvb0+cgs", "hybrid (batch)", a.pam_hybrid_iters if pam else a.hybrid_iters)):
                p, sec, trace = batch_row(a, train, kind, local, iters)
                show(kind.upper(), method, iters, p, sec, trace)
            p, sec = stream_row(a, kind, obs, held)
            show(kind.upper(), "streaming, 1 pass", 1, p, sec)
        if not a.skip_peers:
            for r in tomotopy_rows(a, rows, W) + gensim_row(a, rows, W):
                show(*r)
    print("fig2 load %s" % " ".join("%.1f" % x for x in os.getloadavg()), flush=True)


if __name__ == "__main__":
    sys.exit(main())
