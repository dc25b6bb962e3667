#!/usr/bin/env python3
"""news20_text.py - 20 Newsgroups as raw text for the benches: the subject and the body of each
training message (quotes, signatures and addresses as posted), one line each, in the archive's
order; bytes read as Latin-1 (the archive's few non-UTF-8 files), written as UTF-8.

    python3 bench/news20_text.py SHARED/data/20news-bydate/20news-bydate.tar.gz OUT.txt [N]

N: at most this many messages (default all 11,314). messages() is the reader bench/track/real.py
uses too.
"""
import sys
import tarfile


def messages(path):
    """(split, group, name, subject, body) of each message of the archive, in its order."""
    with tarfile.open(path) as tf:
        for m in tf:
            parts = m.name.split("/")
            if not m.isfile() or len(parts) < 3:
                continue
            raw = tf.extractfile(m).read().decode("latin-1").replace("\r\n", "\n")
            head, _, body = raw.partition("\n\n")
            subj = ""
            for h in head.split("\n"):
                if h.lower().startswith("subject:"):
                    subj = h[8:].strip()
            yield parts[-3], parts[-2], parts[-1], subj, body


def main():
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    n = 0
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for split, _, _, subj, body in messages(sys.argv[1]):
            if limit is not None and n >= limit:
                break
            text = " ".join((subj + ". " + body).split())
            if split == "20news-bydate-train" and text:
                out.write(text + "\n")
                n += 1


if __name__ == "__main__":
    main()
