#!/usr/bin/env python3
"""gensim_peer.py - gensim's online LDA on a prepare.py split, written as phi.npy for evaluate.py.

    gensim_peer.py SPLITDIR OUT.npy [-k 100] [--passes 1] [--chunksize 256] [--seed 1]

gensim.models.LdaModel (online variational Bayes, Hoffman et al. 2010) with the settings of
bench/peers.py: alpha = eta = 0.1 symmetric, chunksize 256, update_every=1, iterations=50,
decay=0.5 and offset=1.0 (gensim's defaults), eval_every=None, random_state=seed, one core.
Writes the normalised topic-word matrix (get_topics(), columns in vocabulary-id order), so it
is scored by the same evaluator, with the same alpha and theta estimator, as every other model.
Prints `gensim passes=P seconds=S tokens_per_s=R` (training only).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evaluate  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("split")
    ap.add_argument("out")
    ap.add_argument("-k", type=int, default=100)
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--chunksize", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    from gensim.models import LdaModel

    with open(os.path.join(a.split, "vocab.train.txt"), encoding="utf-8") as f:
        vocab = [w.rstrip("\n") for w in f]
    d, w, c = evaluate.read_uci(os.path.join(a.split, "docword.train.txt"))
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
    ends = np.r_[starts[1:], d.size]
    corpus = [list(zip(w[s:e].tolist(), c[s:e].astype(int).tolist())) for s, e in zip(starts, ends)]
    t0 = time.perf_counter()
    model = LdaModel(corpus=corpus, id2word=dict(enumerate(vocab)), num_topics=a.k, alpha=0.1,
                     eta=0.1, passes=a.passes, chunksize=a.chunksize, update_every=1,
                     eval_every=None, iterations=50, random_state=a.seed)
    seconds = time.perf_counter() - t0
    np.save(a.out, model.get_topics().astype(np.float32))
    print(f"gensim passes={a.passes} seconds={seconds:.2f} "
          f"tokens_per_s={c.sum() * a.passes / seconds:.0f}")


if __name__ == "__main__":
    main()
