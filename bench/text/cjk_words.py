#!/usr/bin/env python3
"""cjk_words.py - are the top words of topics whole words? streamlda against jieba (Chinese) and
fugashi + unidic-lite (Japanese) as references, same run.

Usage: cjk_words.py STREAMLDA PARAGRAPHS.jsonl [--per-lang 3000] [-k 30] [--seed 1]
  PARAGRAPHS.jsonl: lines {"id", "dir", "text"} (bench/text/manpara.py). Run with the venv of
  bench/text/setup_venv.sh (it imports jieba and fugashi).
A multilingual stream is drawn (seeded) from the zh_CN, ja, de, fr, ru and es paragraphs, shuffled,
and trained with `streamlda train -k K` twice: with the defaults (text.segment=unicode,
text.stopwords=auto) and with text.segment=simple text.stopwords=smart (the old tokenizer). Of
the top-10 words of all topics, those with a Han or Kana character are checked: a Chinese one
(no Kana) is whole when jieba's dictionary holds it, a Japanese one (with Kana, or Han in a topic
whose CJK words hold Kana) when fugashi cuts it as one word. Prints the whole-word share, and
the share of top words that are stop words of the stream's languages (smart for English, the
stopwords-iso lists of zh, ja, de, fr, ru, es: the lists text.stopwords=auto applies).
"""
import json, os, random, re, subprocess, sys, tempfile
import fugashi, jieba

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
KANA = re.compile(r"[\u3040-\u30ff]")


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main():
    exe, path = sys.argv[1], sys.argv[2]
    per, k, seed = arg("--per-lang", 3000), arg("-k", 30), arg("--seed", 1)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    stops = set()  # the lists text.stopwords=auto applies to the stream's languages
    for f in [os.path.join(repo, "config", "stopwords", "smart.txt")] + \
            [os.path.join(repo, "config", "stopwords", "iso", c + ".txt")
             for c in ("zh", "ja", "de", "fr", "ru", "es")]:
        stops.update(w.strip().lower() for w in open(f, encoding="utf-8") if not w.startswith("#"))
    by_dir = {}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r["dir"] in ("zh_CN", "ja", "de", "fr", "ru", "es"):
            by_dir.setdefault(r["dir"], []).append(r)
    rng = random.Random(seed)
    docs = []
    for d in sorted(by_dir):
        rows = [r for r in by_dir[d] if len(r["text"]) >= 20]
        rng.shuffle(rows)
        docs += rows[:per]
    rng.shuffle(docs)
    jieba.initialize()
    tagger = fugashi.Tagger()
    print("cjk_words: %s, %d paragraphs (%s), -k %d, seed %d" %
          (exe, len(docs), " ".join("%s %d" % (d, min(per, len(by_dir[d]))) for d in sorted(by_dir)),
           k, seed))
    print("%-40s %9s %9s %11s" % ("tokenizer", "CJK top", "whole", "stop words"))
    with tempfile.TemporaryDirectory() as t:
        src = os.path.join(t, "s.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            for r in docs:
                f.write(json.dumps({"id": r["id"], "text": r["text"]}, ensure_ascii=False) + "\n")
        for name, extra in (("unicode + auto (defaults)", []),
                            ("simple + smart (before text.segment)",
                             ["-X", "text.segment=simple", "-X", "text.stopwords=smart"])):
            snap = os.path.join(t, "m.slda")
            subprocess.run([exe, "train", "-q", "-k", str(k), "-X", "seed=%d" % seed] + extra +
                           ["-o", snap, src], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            out = subprocess.run([exe, "topics", "-n", "10", snap], capture_output=True,
                                 text=True, check=True).stdout
            cjk = whole = total = stop = 0
            found = []
            for line in out.splitlines():
                words = line.split(":", 1)[1].split() if ":" in line else []
                japanese = any(KANA.search(w) for w in words)
                for w in words:
                    total += 1
                    stop += w in stops
                    if w in stops and w not in found:
                        found.append(w)
                    if not CJK.search(w):
                        continue
                    cjk += 1
                    if japanese or KANA.search(w):
                        whole += len(tagger(w)) == 1
                    else:
                        whole += jieba.dt.FREQ.get(w, 0) > 0
            print("%-40s %9d %8.1f%% %10.1f%%" % (name, cjk, 100.0 * whole / max(cjk, 1),
                                                  100.0 * stop / max(total, 1)))
            print("    stop words among them: %s" % " ".join(found[:25]))


if __name__ == "__main__":
    main()
