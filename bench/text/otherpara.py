#!/usr/bin/env python3
"""otherpara.py - a second source for langid.py: gettext catalogues and English news, as JSON lines {"id", "dir", "text"}.

Usage: otherpara.py LOCALEROOT REUTERS_DIR ABC_CSV > out.jsonl
  LOCALEROOT is /usr/share/locale: the translated messages (msgstr) of the installed packages'
  catalogues (LOCALEROOT/DIR/LC_MESSAGES/*.mo) for de, fr, es, it, nl, pl, pt_BR, ru, ja, zh_CN,
  with printf and brace placeholders and accelerator marks (& _) removed; user-interface strings,
  shorter and terser than manual pages. English ("en") from REUTERS_DIR/reut2-*.sgm.gz (title +
  body of each article) and ABC_CSV (ABC news headlines, column headline_text): the data sets in
  /work/shared/data (reuters21578, abcnews-headlines-sample). Deterministic: files in sorted order,
  each text once. Which catalogues there are depends on the installed packages: the run prints
  their count per language to stderr.
"""
import csv, glob, gettext, gzip, html, json, os, re, sys

DIRS = ("de", "fr", "es", "it", "nl", "pl", "pt_BR", "ru", "ja", "zh_CN")
PLACEHOLDER = re.compile(r"%[-+ #0-9.*]*[a-zA-Z]|\{[^}]*\}|[&_]")


def emit(seen, rid, d, text):
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) < 8 or text in seen:
        return 0
    seen.add(text)
    sys.stdout.write(json.dumps({"id": rid, "dir": d, "text": text}, ensure_ascii=False) + "\n")
    return 1


def main():
    root, reuters, abc = sys.argv[1:4]
    seen = set()
    for d in DIRS:
        files = sorted(glob.glob(os.path.join(root, d, "LC_MESSAGES", "*.mo")))
        n = 0
        for path in files:
            try:
                with open(path, "rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog
            except (OSError, UnicodeDecodeError, ValueError):  # not a catalogue this Python reads
                continue
            for k, v in sorted(catalog.items(), key=lambda kv: str(kv[0])):
                if k and isinstance(v, str):
                    n += emit(seen, "%s/%s/%d" % (d, os.path.basename(path), n), d,
                              PLACEHOLDER.sub(" ", v))
        sys.stderr.write("otherpara: %s: %d messages from %d catalogues\n" % (d, n, len(files)))
    n = 0
    for path in sorted(glob.glob(os.path.join(reuters, "reut2-*.sgm.gz"))):
        sgml = gzip.open(path, "rt", encoding="latin-1").read()
        for m in re.finditer(r"<TEXT[^>]*>(.*?)</TEXT>", sgml, re.S):
            parts = [re.search(r"<%s>(.*?)</%s>" % (t, t), m.group(1), re.S) for t in ("TITLE", "BODY")]
            text = " ".join(p.group(1) for p in parts if p).replace("&#3;", "")
            n += emit(seen, "reuters/%d" % n, "en", html.unescape(text))
    with open(abc, encoding="utf-8") as f:
        for row in csv.DictReader(f):
            n += emit(seen, "abc/%d" % n, "en", row["headline_text"])
    sys.stderr.write("otherpara: en: %d Reuters articles and ABC headlines\n" % n)


if __name__ == "__main__":
    main()
