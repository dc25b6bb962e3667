#!/usr/bin/env python3
"""sparse_peer.py - streamlda's one pass against tomotopy's collapsed Gibbs at many topics: speed
and time to the same held-out perplexity (issue 27's ratios).

    sparse_peer.py DATADIR [--streamlda PATH] [--corpora kos,reuters] [--topics 100,1000]
                   [--repeat 3] [--max-iterations 200] [-X key=value]...

Run with the bench venv's python (bench/quality/setup_venv.sh: tomotopy pinned there). For each
corpus (a prepare.py split) and K, one core each:
  streamlda  `train -f uci -q -X topics=K -X threads=1 -X seed=1 [-X ...]` on docword.train.txt,
             REPEAT times; the whole process timed (wall and user+system CPU), medians; the
             held-out perplexity of its model (measure.py's evaluator: document completion, EM
             theta, alpha 0.1).
  tomotopy   LDAModel(k=K, alpha=0.1, eta=0.1, seed=1), documents added untimed, then trained one
             iteration at a time at first (1, 2, 3, 4, 6, 8, 12, ... iterations, workers=1),
             scored by the same evaluator after each step (untimed), until its perplexity is at
             most streamlda's or --max-iterations.
Prints per corpus and K: streamlda's tokens/s (wall and CPU) and perplexity, tomotopy's seconds
per iteration, the seconds it needed to reach streamlda's perplexity (the first step at or below
it), and ratio = those seconds / streamlda's wall seconds (">" when it did not get there).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate  # noqa: E402
from gibbs_ref import phi_of  # noqa: E402  (tomotopy's phi over the split's vocabulary)
from measure import evaluator, uci_tokens  # noqa: E402


def run_streamlda(binary, docword, K, extra, snap):
    """One timed train: (wall seconds, CPU seconds)."""
    cmd = [binary, "train", "-f", "uci", "-q", "-X", f"topics={K}", "-X", "threads=1",
           "-X", "seed=1"]
    for x in extra:
        cmd += ["-X", x]
    cmd += ["-o", snap, docword]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        sys.exit(f"sparse_peer: {' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def schedule(limit):
    """1, 2, 3, 4, 6, 8, 12, 16, ...: checkpoints fine at first, then about x1.5."""
    n, out = 1, []
    while n < limit:
        out.append(n)
        n = n + 1 if n < 4 else int(n * 1.5 // 2 * 2)
    out.append(limit)
    return out


def run_tomotopy(split, K, target, limit, score, tmp):
    """Iterations until tomotopy's perplexity (score, measure.evaluator's) reaches target."""
    import tomotopy as tp
    with open(os.path.join(split, "vocab.train.txt"), encoding="utf-8") as f:
        vocab = [w.rstrip("\n") for w in f]
    d, w, c = evaluate.read_uci(os.path.join(split, "docword.train.txt"))
    model = tp.LDAModel(k=K, alpha=0.1, eta=0.1, min_cf=0, rm_top=0, seed=1)
    model.optim_interval = 0
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
    ends = np.r_[starts[1:], d.size]
    for s, e in zip(starts, ends):
        model.add_doc([vocab[x] for x in np.repeat(w[s:e], c[s:e].astype(np.int64))])
    spent, done, perp = 0.0, 0, float("inf")
    for it in schedule(limit):
        t0 = time.perf_counter()
        model.train(it - done, workers=1)
        spent += time.perf_counter() - t0
        done = it
        npy, cols = os.path.join(tmp, "tp.npy"), os.path.join(tmp, "tp.cols")
        np.save(npy, phi_of(model, vocab))
        with open(cols, "w", encoding="utf-8") as f:
            f.write("".join(v + "\n" for v in vocab))
        perp = score(npy, cols)
        if perp <= target:
            return spent, done, perp, True
    return spent, done, perp, False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--streamlda", default=os.path.join(HERE, "..", "..", "build", "streamlda"))
    ap.add_argument("--corpora", default="kos,reuters")
    ap.add_argument("--topics", default="100,1000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-iterations", type=int, default=200)
    ap.add_argument("-X", action="append", default=[])
    a = ap.parse_args()
    print(f"sparse_peer: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="slda-sparse-peer-") as tmp:
        for corpus in a.corpora.split(","):
            split = os.path.join(a.data, corpus)
            docword = os.path.join(split, "docword.train.txt")
            tokens = uci_tokens(docword)
            score = evaluator(split, 0.1)
            for K in [int(k) for k in a.topics.split(",")]:
                snap = os.path.join(tmp, "m.slda")
                walls, cpus = [], []
                for _ in range(a.repeat):
                    wall, cpu = run_streamlda(a.streamlda, docword, K, a.X, snap)
                    walls.append(wall)
                    cpus.append(cpu)
                npy, cols = os.path.join(tmp, "phi.npy"), os.path.join(tmp, "cols.txt")
                subprocess.run([a.streamlda, "export", snap, "--npy", npy, "--vocab", cols],
                               check=True, capture_output=True)
                ours = score(npy, cols)
                wall, cpu = statistics.median(walls), statistics.median(cpus)
                print(f"sparse_peer corpus={corpus} K={K} streamlda wall_s={wall:.2f} "
                      f"cpu_s={cpu:.2f} tokens_per_s_wall={tokens / wall:.0f} "
                      f"tokens_per_s_cpu={tokens / cpu:.0f} perplexity={ours:.1f}", flush=True)
                spent, iters, perp, reached = run_tomotopy(split, K, ours, a.max_iterations,
                                                           score, tmp)
                ratio = spent / wall
                print(f"sparse_peer corpus={corpus} K={K} tomotopy iterations={iters} "
                      f"seconds={spent:.2f} s_per_iteration={spent / iters:.3f} "
                      f"perplexity={perp:.1f} reached={'yes' if reached else 'no'} "
                      f"ratio={'' if reached else '>'}{ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()
