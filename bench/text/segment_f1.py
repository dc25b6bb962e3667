#!/usr/bin/env python3
"""segment_f1.py - token-boundary precision, recall and F1 of streamlda's Chinese and Japanese cuts
against jieba and fugashi + unidic-lite, where the granularity differs, and whether merging
frequent adjacent pairs (as phrase detection does) helps the topics. Same run for all.

Usage: segment_f1.py SEGDUMP STREAMLDA PARAGRAPHS.jsonl [--per-lang 2000] [--seed 1] [-k 20]
  SEGDUMP: bench/text/segdump.c built (segment_f1.sh does it); PARAGRAPHS.jsonl: manpara.py's
  lines (zh_CN and ja are used). Run with the venv of bench/text/setup_venv.sh.
Paragraphs of 20 characters or more are drawn (seeded), NFKC-normalised (streamlda folds so; the
references then see the same characters) and cut three ways: streamlda (text.segment=unicode, no
token dropped: ICU's dictionary), jieba.lcut (zh, default mode) and fugashi's surfaces (ja, the
unidic-lite short units). Only the Han and Kana characters count: each token is reduced to them
and a boundary pair (start, end) over that character sequence is a word; a paragraph where the
sequences differ is skipped (counted). P = shared words / streamlda's, R = shared / reference's.
Each streamlda word not shared is "coarser" (exactly two or more reference words), "finer" (inside
one reference word) or "crossing"; the most frequent of each are printed.
Merging: adjacent CJK tokens a b (a+b found so in the text) whose pair count n_ab >= 5 and
(n_ab - 5) * N / (n_a * n_b) > 10 (gensim Phrases' default score, N tokens) are joined, one pass.
Topics: `streamlda train -k K` on the zh + ja paragraphs as "tokens" records, cut as ICU does and
merged; of the top-10 words with Han or Kana, the share that are whole words (cjk_words.py's rule:
jieba's dictionary for Chinese, one fugashi word for Japanese).
"""
import collections, json, os, random, re, subprocess, sys, tempfile, unicodedata
import fugashi, jieba

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
KANA = re.compile(r"[\u3040-\u30ff]")


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def cjk(tok):
    return "".join(CJK.findall(tok))


def spans(tokens):
    """The (start, end) words over the CJK character sequence, and that sequence."""
    out, at, seq = [], 0, []
    for t in tokens:
        c = cjk(t)
        if c:
            out.append((at, at + len(c)))
            seq.append(c)
            at += len(c)
    return out, "".join(seq)


def merge(seqs, text_of):
    n1, n2 = collections.Counter(), collections.Counter()
    for i, toks in enumerate(seqs):
        n1.update(toks)
        for a, b in zip(toks, toks[1:]):
            if cjk(a) == a and cjk(b) == b and a + b in text_of[i]:
                n2[a, b] += 1
    total = sum(n1.values())
    good = {p for p, n in n2.items() if n >= 5 and (n - 5) * total / (n1[p[0]] * n1[p[1]]) > 10}
    out = []
    for i, toks in enumerate(seqs):
        m, j = [], 0
        while j < len(toks):
            if j + 1 < len(toks) and (toks[j], toks[j + 1]) in good and \
                    toks[j] + toks[j + 1] in text_of[i]:
                m.append(toks[j] + toks[j + 1])
                j += 2
            else:
                m.append(toks[j])
                j += 1
        out.append(m)
    return out, len(good)


def score(ours, refs):
    tp = no = nr = skipped = 0
    kinds = collections.defaultdict(collections.Counter)
    for o, r in zip(ours, refs):
        so, co = spans(o)
        sr, cr = spans(r)
        if co != cr:
            skipped += 1
            continue
        rs = set(sr)
        starts = {s for s, _ in sr} | {len(cr)}
        ends = {e for _, e in sr} | {0}
        tp += sum(s in rs for s in so)
        no += len(so)
        nr += len(sr)
        for s, e in so:
            if (s, e) in rs:
                continue
            w = co[s:e]
            if s in starts and e in ends:
                kinds["coarser"][w] += 1
            elif not any(rs_s < s < rs_e or rs_s < e < rs_e for rs_s, rs_e in sr) or \
                    any(rs_s <= s and e <= rs_e for rs_s, rs_e in sr):
                kinds["finer"][w] += 1
            else:
                kinds["crossing"][w] += 1
    p, r = tp / max(no, 1), tp / max(nr, 1)
    return p, r, 2 * p * r / max(p + r, 1e-9), no, nr, skipped, kinds


def whole(word, japanese, tagger):
    if japanese or KANA.search(word):
        return len(tagger(word)) == 1
    return jieba.dt.FREQ.get(word, 0) > 0


def topics(exe, seqs, ids, k, seed, tagger):
    with tempfile.TemporaryDirectory() as t:
        src = os.path.join(t, "s.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            for i, toks in zip(ids, seqs):
                f.write(json.dumps({"id": i, "tokens": toks}, ensure_ascii=False) + "\n")
        snap = os.path.join(t, "m.slda")
        subprocess.run([exe, "train", "-q", "-k", str(k), "-X", "seed=%d" % seed, "-o", snap, src],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = subprocess.run([exe, "topics", "-n", "10", snap], capture_output=True, text=True,
                             check=True).stdout
    n = w = 0
    for line in out.splitlines():
        words = line.split(":", 1)[1].split() if ":" in line else []
        japanese = any(KANA.search(x) for x in words)
        for x in words:
            if CJK.search(x):
                n += 1
                w += whole(x, japanese, tagger)
    return n, w


def main():
    segdump, exe, path = sys.argv[1:4]
    per, seed, k = arg("--per-lang", 2000), arg("--seed", 1), arg("-k", 20)
    rows = {"zh_CN": [], "ja": []}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r["dir"] in rows and len(r["text"]) >= 20:
            rows[r["dir"]].append(r)
    rng = random.Random(seed)
    jieba.setLogLevel(60)
    jieba.initialize()
    tagger = fugashi.Tagger()
    print("segment_f1: %s against jieba 0.42.1 and fugashi 1.5.2 + unidic-lite 1.0.8 "
          "(bench/text/setup_venv.sh) on %s (seed %d)" % (exe, path, seed))
    all_ours, all_ids, all_text = [], [], []
    for d in ("zh_CN", "ja"):
        sample = rows[d]
        rng.shuffle(sample)
        sample = sample[:per]
        texts = [unicodedata.normalize("NFKC", r["text"]).replace("\n", " ") for r in sample]
        cut = subprocess.run([segdump], input="\n".join(texts) + "\n", capture_output=True,
                             text=True, check=True).stdout.split("\n")
        ours = [c.split("\t") if c else [] for c in cut[:len(texts)]]
        if d == "zh_CN":
            refs = [jieba.lcut(t) for t in texts]
        else:
            refs = [[w.surface for w in tagger(t)] for t in texts]
        merged, npairs = merge(ours, texts)
        for name, o in (("ICU (text.segment=unicode)", ours), ("ICU + merged pairs", merged)):
            p, r, f, no, nr, skipped, kinds = score(o, refs)
            print("%-5s %-28s P %.3f  R %.3f  F1 %.3f  (%d words, reference %d; %d of %d "
                  "paragraphs skipped)" % (d, name, p, r, f, no, nr, skipped, len(texts)))
            if o is ours:
                for kind in ("coarser", "finer", "crossing"):
                    c = kinds[kind]
                    print("      %-9s %5d (%4.1f%% of streamlda's words): %s" %
                          (kind, sum(c.values()), 100.0 * sum(c.values()) / max(no, 1),
                           " ".join(w for w, _ in c.most_common(12))))
            else:
                print("      %d pairs merged" % npairs)
        all_ours.append((ours, merged))
        all_ids += [r["id"] for r in sample]
        all_text += texts
    print("topics: -k %d on %d zh + ja paragraphs as tokens records, top-10 words with Han/Kana:" %
          (k, len(all_ids)))
    plain = all_ours[0][0] + all_ours[1][0]
    merged = all_ours[0][1] + all_ours[1][1]
    for name, seqs in (("ICU", plain), ("ICU + merged pairs", merged)):
        n, w = topics(exe, seqs, all_ids, k, seed, tagger)
        print("  %-20s %3d CJK top words, %5.1f%% whole words" % (name, n, 100.0 * w / max(n, 1)))


if __name__ == "__main__":
    main()
