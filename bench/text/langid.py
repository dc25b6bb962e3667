#!/usr/bin/env python3
"""langid.py - language identification of streamlda against a PyPI detector (lingua), same run.

Usage: langid.py STREAMLDA PARAGRAPHS.jsonl [--per-lang 400] [--seed 1] [--errors FILE]
  PARAGRAPHS.jsonl: lines {"id", "dir", "text"} (bench/text/manpara.py over Debian's translated
  manual pages). Run with the venv of bench/text/setup_venv.sh (it imports lingua).
Per language directory, paragraphs are drawn at random (seeded); a paragraph counts when lingua
names the directory's language (the translated pages keep some English paragraphs: those are
left out, not counted against either side). Each paragraph's language by streamlda comes from
`streamlda infer` on a model trained on the sample (the "lang" of its output; a document infer
rejects counts as wrong). Prints, per language, the paragraphs of >= 10 words and of 3-9 words
and streamlda's agreement with lingua on each; --errors writes the disagreements (JSON lines).
"""
import json, os, random, subprocess, sys, tempfile
from lingua import LanguageDetectorBuilder

DIR_LANG = {"de": "de", "fr": "fr", "es": "es", "it": "it", "nl": "nl", "pl": "pl",
            "pt_BR": "pt", "ru": "ru", "ja": "ja", "zh_CN": "zh", "en": "en"}


def main():
    exe, path = sys.argv[1], sys.argv[2]
    per = int(sys.argv[sys.argv.index("--per-lang") + 1]) if "--per-lang" in sys.argv else 400
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    by_dir = {}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r["dir"] in DIR_LANG:
            by_dir.setdefault(r["dir"], []).append(r)
    rng = random.Random(seed)
    det = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()
    sample = []
    for d in sorted(by_dir):
        rows = by_dir[d]
        rng.shuffle(rows)
        long_n = short_n = 0
        for r in rows:
            n = len(r["text"].split()) if d not in ("ja", "zh_CN") else len(r["text"]) // 2
            if n < 3 or (n >= 10 and long_n >= per) or (n < 10 and short_n >= per):
                continue
            ref = det.detect_language_of(r["text"])
            if ref is None or ref.iso_code_639_1.name.lower() != DIR_LANG[d]:
                continue
            r["long"] = n >= 10
            long_n += r["long"]
            short_n += not r["long"]
            sample.append(r)
            if long_n >= per and short_n >= per:
                break
    with tempfile.TemporaryDirectory() as t:
        src = os.path.join(t, "s.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            for r in sample:
                f.write(json.dumps({"id": r["id"], "text": r["text"]}, ensure_ascii=False) + "\n")
        subprocess.run([exe, "train", "-q", "-k", "2", "-o", os.path.join(t, "m.slda"), src],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = subprocess.run([exe, "infer", os.path.join(t, "m.slda"), src], capture_output=True,
                             text=True).stdout
    if "--errors" in sys.argv:
        got0 = {json.loads(l)["id"]: json.loads(l).get("lang", "") for l in out.splitlines()}
        with open(sys.argv[sys.argv.index("--errors") + 1], "w", encoding="utf-8") as f:
            for r in sample:
                if got0.get(r["id"]) != DIR_LANG[r["dir"]]:
                    f.write(json.dumps({"want": DIR_LANG[r["dir"]], "got": got0.get(r["id"]),
                                        "long": r["long"], "text": r["text"]},
                                       ensure_ascii=False) + "\n")
    got = {}
    for line in out.splitlines():
        o = json.loads(line)
        got[o["id"]] = o.get("lang", "")
    print("langid: streamlda %s against lingua 2.1.1 on %s (seed %d)" % (exe, path, seed))
    print("%-6s %8s %9s %8s %9s" % ("lang", ">=10 w", "agree", "3-9 w", "agree"))
    tot = [0, 0, 0, 0]
    for d in sorted(by_dir):
        rows = [r for r in sample if r["dir"] == d]
        c = [0, 0, 0, 0]
        for r in rows:
            k = 0 if r["long"] else 2
            c[k] += 1
            c[k + 1] += got.get(r["id"]) == DIR_LANG[d]
        tot = [a + b for a, b in zip(tot, c)]
        print("%-6s %8d %8.1f%% %8d %8.1f%%" % (DIR_LANG[d], c[0], 100.0 * c[1] / max(c[0], 1),
                                              c[2], 100.0 * c[3] / max(c[2], 1)))
    print("%-6s %8d %8.1f%% %8d %8.1f%%" % ("all", tot[0], 100.0 * tot[1] / max(tot[0], 1),
                                          tot[2], 100.0 * tot[3] / max(tot[2], 1)))


if __name__ == "__main__":
    main()
