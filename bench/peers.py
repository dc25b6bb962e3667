#!/usr/bin/python3
"""peers.py - train the peer LDA implementations on a kos_split.py split; time and score them.

Peers:
  gensim   gensim.models.LdaModel (online variational Bayes, Hoffman et al. 2010), one process.
           num_topics=K, alpha=eta=0.1 symmetric, chunksize=256 (the engine's minibatch.docs
           default), update_every=1, eval_every=None, iterations=50 and gamma_threshold=0.001
           (gensim's defaults), decay=0.5 and offset=1.0 (gensim's defaults, i.e. its own
           learning-rate schedule, not the engine's rho.kappa/rho.tau), random_state=SEED,
           float32 (gensim's default). `passes` = gensim's passes.
  sklearn  sklearn.decomposition.LatentDirichletAllocation, learning_method='online',
           n_components=K, doc_topic_prior=topic_word_prior=0.1, batch_size=256,
           total_samples=training documents, max_iter=passes, evaluate_every=-1, n_jobs=1,
           random_state=SEED; learning_offset=10, learning_decay=0.7, max_doc_update_iter=100
           (scikit-learn's defaults). Skipped with a note if python3-sklearn is not installed.

Timing: seconds = wall time of training only (gensim: the LdaModel constructor given the corpus,
i.e. initialisation + all passes; sklearn: fit()), corpus already in memory in the peer's own
format. tokens_per_s = training tokens x passes / seconds. With --repeat R each configuration is
trained R times (same seed) and the medians are printed.

Perplexity (document completion, as `streamlda train --test-obs --test-held`): for each
document of docword.testobs.txt, theta = normalised variational gamma inferred by the peer
itself on the observed half (gensim: model.inference(); sklearn: transform()); phi = the
normalised topic-word matrix (gensim: get_topics(); sklearn: components_ row-normalised); the
document with the same docID in docword.testheld.txt is scored:
perplexity = exp(-sum_{d,w} n_dw log sum_k theta_dk phi_kw / sum n_dw).

One core: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS are forced to 1.
Output, one line per (peer, passes) on standard output:
  peer=gensim K=100 passes=5 tokens_per_s=R perplexity=P seconds=S chunksize=256 repeats=N
  peak_rss_mib=M
(peak_rss_mib: this process's peak resident size so far, corpus included - run one
configuration per process for a per-configuration figure.)
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def read_docword(path):
    """Return (W, docs): docs maps docID -> (word ids 0-based, counts), in docID order."""
    with open(path, "rb") as f:
        nums = np.array(f.read().split(), dtype=np.int64)
    nwords = int(nums[1])
    entries = nums[3:].reshape(-1, 3)
    entries = entries[np.lexsort((entries[:, 1], entries[:, 0]))]
    ids, starts = np.unique(entries[:, 0], return_index=True)
    ends = np.append(starts[1:], entries.shape[0])
    docs = {}
    for d, s, e in zip(ids, starts, ends):
        docs[int(d)] = (entries[s:e, 1] - 1, entries[s:e, 2])
    return nwords, docs


def load_split(split):
    path = lambda name: os.path.join(split, f"docword.{name}.txt")  # noqa: E731
    nwords, train = read_docword(path("train"))
    _, obs = read_docword(path("testobs"))
    _, held = read_docword(path("testheld"))
    common = sorted(set(obs) & set(held))
    vocab = os.path.join(split, "vocab.train.txt")
    words = open(vocab).read().split("\n")[:nwords] if os.path.isfile(vocab) else []
    words += [str(i) for i in range(len(words), nwords)]
    return {
        "W": nwords,
        "words": words,
        "train": [train[d] for d in sorted(train)],
        "obs": [obs[d] for d in common],
        "held": [held[d] for d in common],
    }


def completion_perplexity(theta, phi, held):
    """theta: D x K rows summing to 1; phi: K x W rows summing to 1; held: [(words, counts)]."""
    loglik, ntok = 0.0, 0
    for t, (w, c) in zip(theta, held):
        p = t @ phi[:, w]
        loglik += float(np.dot(c, np.log(np.maximum(p, 1e-300))))
        ntok += int(c.sum())
    return math.exp(-loglik / ntok)


def normalise_rows(m):
    m = np.asarray(m, dtype=np.float64)
    return m / m.sum(axis=1, keepdims=True)


def run_gensim(data, k, passes, a):
    from gensim.models import LdaModel

    bow = lambda docs: [list(zip(w.tolist(), c.tolist())) for w, c in docs]  # noqa: E731
    corpus, obs = bow(data["train"]), bow(data["obs"])
    id2word = dict(enumerate(data["words"]))
    t0 = time.perf_counter()
    model = LdaModel(corpus=corpus, id2word=id2word, num_topics=k, alpha=0.1, eta=0.1,
                     passes=passes, chunksize=a.chunksize, update_every=1, eval_every=None,
                     iterations=a.iterations, random_state=a.seed)
    seconds = time.perf_counter() - t0
    gamma, _ = model.inference(obs)
    perp = completion_perplexity(normalise_rows(gamma), normalise_rows(model.get_topics()),
                                 data["held"])
    return seconds, perp


def sparse_matrix(docs, nwords):
    from scipy.sparse import csr_matrix

    rows = np.concatenate([np.full(w.size, i) for i, (w, _) in enumerate(docs)])
    cols = np.concatenate([w for w, _ in docs])
    vals = np.concatenate([c for _, c in docs]).astype(np.float64)
    return csr_matrix((vals, (rows, cols)), shape=(len(docs), nwords))


def run_sklearn(data, k, passes, a):
    from sklearn.decomposition import LatentDirichletAllocation

    x_train = sparse_matrix(data["train"], data["W"])
    x_obs = sparse_matrix(data["obs"], data["W"])
    lda = LatentDirichletAllocation(n_components=k, doc_topic_prior=0.1, topic_word_prior=0.1,
                                    learning_method="online", batch_size=a.chunksize,
                                    total_samples=x_train.shape[0], max_iter=passes,
                                    evaluate_every=-1, n_jobs=1, random_state=a.seed)
    t0 = time.perf_counter()
    lda.fit(x_train)
    seconds = time.perf_counter() - t0
    theta = normalise_rows(lda.transform(x_obs))
    perp = completion_perplexity(theta, normalise_rows(lda.components_), data["held"])
    return seconds, perp


def have_sklearn():
    try:
        import sklearn.decomposition  # noqa: F401
        return True
    except ImportError:
        return False


RUNNERS = {"gensim": run_gensim, "sklearn": run_sklearn}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("split", help="directory written by kos_split.py")
    ap.add_argument("--peers", default="gensim,sklearn", help="comma list: gensim, sklearn")
    ap.add_argument("--topics", "-k", default="100", help="comma list of K (default 100)")
    ap.add_argument("--passes", "-p", default="1,5", help="comma list of passes (default 1,5)")
    ap.add_argument("--chunksize", type=int, default=256, help="documents per update (256)")
    ap.add_argument("--iterations", type=int, default=50, help="gensim iterations (50)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration; medians")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    peers = [p for p in a.peers.split(",") if p]
    for p in peers:
        if p not in RUNNERS:
            sys.exit(f'peers: peer "{p}": unknown (gensim, sklearn)')
    if "sklearn" in peers and not have_sklearn():
        print("peers: scikit-learn not installed (Debian python3-sklearn): sklearn skipped",
              file=sys.stderr)
        peers.remove("sklearn")
    data = load_split(a.split)
    tokens = sum(int(c.sum()) for _, c in data["train"])
    for peer in peers:
        for k in (int(x) for x in a.topics.split(",")):
            for passes in (int(x) for x in a.passes.split(",")):
                runs = [RUNNERS[peer](data, k, passes, a) for _ in range(max(1, a.repeat))]
                seconds = statistics.median(s for s, _ in runs)
                perp = statistics.median(p for _, p in runs)
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
                print(f"peer={peer} K={k} passes={passes} "
                      f"tokens_per_s={tokens * passes / seconds:.0f} perplexity={perp:.2f} "
                      f"seconds={seconds:.3f} chunksize={a.chunksize} repeats={len(runs)} "
                      f"peak_rss_mib={rss:.1f}", flush=True)


if __name__ == "__main__":
    main()
