#!/usr/bin/env python3
"""measure.py - streamlda's held-out perplexity on the prepare.py splits, for one configuration.

    measure.py DATADIR [--streamlda PATH] [--corpora kos,ap,reuters,20news] [--passes 1]
               [--seeds 1,2,3] [-X key=value]... [--label NAME] [--ref ref.json] [--stream]

For each corpus and seed: `streamlda train -f uci -q -p PASSES -X topics=100 -X threads=1
-X seed=S [-X ...] -o M.slda DATADIR/<corpus>/docword.train.txt` (the project's defaults for
everything not given: alpha = eta = 0.1), `streamlda export M.slda --npy --vocab`, then
evaluate.py (the independent evaluator, em estimator, alpha 0.1). Prints one line per corpus:
  measure label=L corpus=C passes=P perplexity=MEAN (per seed ...) gap=G% tokens_per_s=R
gap is the mean perplexity over seeds against the Gibbs reference in ref.json (a JSON map
corpus -> perplexity) when given; tokens_per_s the median of streamlda's own training-only
figure over the seeds (one thread). A closing line gives the mean gap over the corpora.

--stream (one pass only) feeds docword.train.txt to `streamlda train ... -` on standard input
instead of naming it, so train streams it as it would any stream of unknown length: no
document waits for the end of the input, second visits follow the 2n rule (docs/engine.md,
"Second visits"), as in the service with replay=on or an input larger than replay.docs. A
stream has no file to find the vocabulary beside, and its size is unknown (corpus.tokens
would default to 1,000,000), so it is given what a stream user would configure:
`-X vocab.file=DATADIR/<corpus>/vocab.train.txt -X corpus.tokens=<training tokens>` (the
size a file run takes; a later -X corpus.tokens=... overrides it). The model is then the
one a file run gets with -X replay.docs=<documents - 1> (the 2n rule, bit for bit).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate  # noqa: E402


def evaluator(split, alpha):
    """A closure scoring a phi on split (the test halves are read once)."""
    with open(os.path.join(split, "vocab.train.txt"), encoding="utf-8") as f:
        vocab = [w.rstrip("\n") for w in f]
    od, ow, oc = evaluate.read_uci(os.path.join(split, "docword.testobs.txt"))
    hd, hw, hc = evaluate.read_uci(os.path.join(split, "docword.testheld.txt"))
    ids = np.unique(od)
    dmap = {x: i for i, x in enumerate(ids.tolist())}
    od = np.array([dmap[x] for x in od.tolist()])
    hd = np.array([dmap[x] for x in hd.tolist()])

    def score(phi_path, cols):
        phi = evaluate.load_phi(phi_path, cols, vocab)
        theta = evaluate.theta_em(od, ow, oc, ids.size, phi, alpha, 1000)
        p = np.einsum("ij,ji->i", theta[hd], phi[:, hw])
        return float(np.exp(-(hc * np.log(p)).sum() / hc.sum()))
    return score


def uci_tokens(path):
    """The tokens of a UCI docword file (the sum of its counts)."""
    with open(path, "rb") as f:
        nums = np.array(f.read().split(), dtype=np.int64)
    return int(nums[3:].reshape(-1, 3)[:, 2].sum())


def parse_train(out):
    fields = dict(kv.split("=", 1) for kv in out.split() if "=" in kv)
    return float(fields["tokens_per_s"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--streamlda", default=os.path.join(HERE, "..", "..", "build", "streamlda"))
    ap.add_argument("--corpora", default="kos,ap,reuters,20news")
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("-X", action="append", default=[])
    ap.add_argument("--label", default="")
    ap.add_argument("--ref")
    ap.add_argument("--stream", action="store_true",
                    help="feed the training file on standard input (the 2n rule); one pass")
    a = ap.parse_args()
    if a.stream and a.passes != 1:
        sys.exit("measure: --stream is one pass (train holds several passes in memory)")
    ref = {}
    if a.ref:
        with open(a.ref) as f:
            ref = json.load(f)
    label = a.label or (" ".join(a.X) if a.X else "defaults")
    if a.stream and not a.label:
        label = "stream " + label
    gaps = []
    with tempfile.TemporaryDirectory(prefix="slda-quality-") as tmp:
        for corpus in a.corpora.split(","):
            split = os.path.join(a.data, corpus)
            score = evaluator(split, 0.1)
            perps, speeds = [], []
            docword = os.path.join(split, "docword.train.txt")
            stream = []
            if a.stream:
                stream = ["-X", "vocab.file=" + os.path.join(split, "vocab.train.txt"),
                          "-X", f"corpus.tokens={uci_tokens(docword)}"]
            for seed in a.seeds.split(","):
                snap = os.path.join(tmp, "m.slda")
                cmd = [a.streamlda, "train", "-f", "uci", "-q", "-p", str(a.passes),
                       "-X", "topics=100", "-X", "threads=1", "-X", f"seed={seed}"] + stream
                for x in a.X:
                    cmd += ["-X", x]
                cmd += ["-o", snap, "-" if a.stream else docword]
                if a.stream:
                    with open(docword, "rb") as f:
                        r = subprocess.run(cmd, stdin=f, capture_output=True, text=True)
                else:
                    r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode:
                    sys.exit(f"measure: {' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
                speeds.append(parse_train(r.stdout))
                npy, cols = os.path.join(tmp, "phi.npy"), os.path.join(tmp, "cols.txt")
                subprocess.run([a.streamlda, "export", snap, "--npy", npy, "--vocab", cols],
                               check=True, capture_output=True)
                perps.append(score(npy, cols))
            mean = statistics.mean(perps)
            gap = ""
            if corpus in ref:
                g = 100 * (mean / ref[corpus] - 1)
                gaps.append(g)
                gap = f" gap={g:.1f}%"
            print(f"measure label='{label}' corpus={corpus} passes={a.passes} "
                  f"perplexity={mean:.1f} (per seed {' '.join(f'{p:.1f}' for p in perps)}){gap} "
                  f"tokens_per_s={statistics.median(speeds):.0f}", flush=True)
    if gaps:
        print(f"measure label='{label}' passes={a.passes} mean_gap={statistics.mean(gaps):.2f}% "
              f"max_gap={max(gaps):.2f}%", flush=True)


if __name__ == "__main__":
    main()
