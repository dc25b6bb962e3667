#!/usr/bin/python3
"""kos_split.py - a deterministic train / document-completion split of the KOS corpus.

Reads a UCI docword file (default $SLDA_SHARED_DIR/data/kos/docword.kos.txt, SLDA_SHARED_DIR
defaulting to ../shared beside the repository), holds out a fraction of the documents (default
10%, chosen by a seeded permutation, seed 1) and writes into OUT:

  docword.train.txt    the other documents, original docIDs kept
  docword.testobs.txt  each held-out document's observed half
  docword.testheld.txt each held-out document's scored half (same docIDs as testobs)
  vocab.{train,testobs,testheld}.txt  copies of the vocabulary beside each docword file

A held-out document is split token by token: its tokens (word repeated count times, in word
order) are shuffled with the same generator and the first floor(n/2) are the observed half, the
remaining ceil(n/2) the scored half. Every file is a valid UCI docword file: header D, W, NNZ, then
`docID wordID count` lines sorted by docID then wordID. W is the source's vocabulary size and
NNZ the file's entry count; D stays the source's D because docIDs are kept and a UCI reader
checks docID <= D (so D is the id range; the file holds fewer documents, reported on standard
error). Same input and seed => same bytes.
The summary goes to standard error; nothing is printed on standard output.
"""
import argparse
import os
import shutil
import sys

import numpy as np


def default_input():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = os.environ.get("SLDA_SHARED_DIR") or os.path.join(repo, "..", "shared")
    return os.path.join(shared, "data", "kos", "docword.kos.txt")


def read_docword(path):
    """Return (D, W, entries) with entries an (NNZ, 3) int64 array of docID, wordID, count."""
    with open(path, "rb") as f:
        nums = np.array(f.read().split(), dtype=np.int64)
    if nums.size < 3 or (nums.size - 3) % 3:
        sys.exit(f'kos_split: docword "{path}": expected 3 header numbers then triples')
    ndocs, nwords, nnz = (int(x) for x in nums[:3])
    entries = nums[3:].reshape(-1, 3)
    if entries.shape[0] != nnz:
        sys.exit(f'kos_split: docword "{path}": header says NNZ={nnz}, file has {entries.shape[0]}')
    if entries.size and (entries[:, 1].min() < 1 or entries[:, 1].max() > nwords
                         or entries[:, 2].min() < 1):
        sys.exit(f'kos_split: docword "{path}": word id outside 1..{nwords} or count < 1')
    if entries.size and (entries[:, 0].min() < 1 or entries[:, 0].max() > ndocs):
        sys.exit(f'kos_split: docword "{path}": doc id outside 1..{ndocs}')
    order = np.lexsort((entries[:, 1], entries[:, 0]))
    return ndocs, nwords, entries[order]


def write_docword(path, id_range, nwords, entries):
    """Write entries (sorted by docID, wordID) as a UCI docword file; return its document count."""
    with open(path, "w") as f:
        f.write(f"{id_range}\n{nwords}\n{entries.shape[0]}\n")
        np.savetxt(f, entries, fmt="%d")
    return len(np.unique(entries[:, 0]))


def split_doc(rng, words, counts):
    """Shuffle one document's tokens; return (observed, scored) as (word, count) arrays."""
    tokens = rng.permutation(np.repeat(words, counts))
    half = tokens.size // 2
    out = []
    for part in (tokens[:half], tokens[half:]):
        w, c = np.unique(part, return_counts=True)
        out.append((w, c))
    return out


def to_entries(doc_id, words, counts):
    return np.column_stack((np.full(words.size, doc_id, dtype=np.int64), words, counts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output directory (created if missing)")
    ap.add_argument("--input", default=default_input(), help="UCI docword file (default: KOS)")
    ap.add_argument("--vocab", help="vocabulary file (default: vocab.X.txt beside docword.X.txt)")
    ap.add_argument("--holdout", type=float, default=0.1, help="fraction of documents held out")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    vocab = a.vocab
    if not vocab:
        d, base = os.path.split(a.input)
        vocab = os.path.join(d, base.replace("docword.", "vocab.", 1))
    if not os.path.isfile(vocab):
        sys.exit(f'kos_split: vocabulary "{vocab}": not found (use --vocab)')
    if not 0 < a.holdout < 1:
        sys.exit(f"kos_split: --holdout {a.holdout}: expected a fraction in (0, 1)")

    ndocs, nwords, entries = read_docword(a.input)
    doc_ids, starts = np.unique(entries[:, 0], return_index=True)
    ends = np.append(starts[1:], entries.shape[0])
    rng = np.random.default_rng(a.seed)
    ntest = max(1, int(round(a.holdout * doc_ids.size)))
    is_test = np.zeros(doc_ids.size, dtype=bool)
    is_test[rng.permutation(doc_ids.size)[:ntest]] = True

    train, obs, held = [], [], []
    for i in range(doc_ids.size):
        rows = entries[starts[i]:ends[i]]
        if not is_test[i]:
            train.append(rows)
            continue
        (ow, oc), (hw, hc) = split_doc(rng, rows[:, 1], rows[:, 2])
        obs.append(to_entries(doc_ids[i], ow, oc))
        held.append(to_entries(doc_ids[i], hw, hc))

    os.makedirs(a.out, exist_ok=True)
    summary = []
    for name, parts in (("train", train), ("testobs", obs), ("testheld", held)):
        rows = np.concatenate(parts)
        nd = write_docword(os.path.join(a.out, f"docword.{name}.txt"), ndocs, nwords, rows)
        shutil.copyfile(vocab, os.path.join(a.out, f"vocab.{name}.txt"))
        summary.append(f"{name} docs={nd} tokens={int(rows[:, 2].sum())}")
    print(f"kos_split: {a.out}: " + ", ".join(summary) + f" (seed {a.seed})", file=sys.stderr)


if __name__ == "__main__":
    main()
