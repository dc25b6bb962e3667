#!/usr/bin/env bash
# 0042-threads_text.sh - every core, the same model (docs/engine.md, "Threads"):
# - threads=1, 2 and 3 give the same model bit for bit with the pipeline (global.stale=1),
#   from a file (text read ahead and tokenised on the workers, src/io/reader_text.c) and from
#   standard input (one minibatch read ahead), with evictions (a small vocab.capacity) and with
#   snapshots along the way (--snapshot-dir: each snapshot applies the pending update);
# - the read-ahead keeps each document's line: errors name path:line across read-ahead
#   boundaries (256 lines), documents keep their line numbers as ids, and a file read ahead
#   gives what standard input (one minibatch at a time) gives;
# - global.stale=1 is a different model from global.stale=0 (the pipeline is in effect).
set -u
. "$(dirname "$0")/checks.sh"
PY=/usr/bin/python3

# 3,000 documents from 6 themes over 1,200 words, and words that occur once (evicted first)
"$PY" - "$T/docs.txt" "$(dirname "$0")" <<'EOF'
import random, sys
sys.path.insert(0, sys.argv[2])
from corpus_words import letters  # noqa: E402
rng = random.Random(5)
themes = [[f"t{letters(k)}w{letters(i)}" for i in range(200)] for k in range(6)]
with open(sys.argv[1], "w") as f:
    for d in range(3000):
        a, b = rng.sample(range(6), 2)
        words = [rng.choice(themes[a] if rng.random() < 0.7 else themes[b]) for _ in range(40)]
        words += [f"rare{letters(d)}x{letters(j)}" for j in range(3)]
        f.write(" ".join(words) + "\n")
EOF
X=(-q -k 8 -X seed=11 -X vocab.capacity=1500)

for t in 1 2 3; do
    "$S" train "${X[@]}" -X threads=$t -o "$T/file$t.slda" "$T/docs.txt" >/dev/null 2>"$T/err$t" ||
        fail "train threads=$t: $(head -c 300 "$T/err$t")"
    "$S" train "${X[@]}" -X threads=$t -o "$T/stdin$t.slda" - <"$T/docs.txt" >/dev/null 2>&1 ||
        fail "train threads=$t from stdin"
    "$S" train "${X[@]}" -X threads=$t --snapshot-dir "$T/snaps$t" --snapshot-every 700 \
        -o "$T/snap$t.slda" "$T/docs.txt" >/dev/null 2>&1 || fail "train threads=$t --snapshot-dir"
done
for t in 2 3; do
    same_model "file: threads=$t differs from threads=1" "$T/file1.slda" "$T/file$t.slda"
    same_model "stdin: threads=$t differs from threads=1" "$T/stdin1.slda" "$T/stdin$t.slda"
    same_model "snapshot-dir: threads=$t differs from threads=1" "$T/snap1.slda" "$T/snap$t.slda"
    for f in "$T/snaps1"/*.slda; do
        same_model "snapshot $(basename "$f"): threads=$t differs" "$f" "$T/snaps$t/$(basename "$f")"
    done
done
[ "$(ls "$T/snaps1" | grep -c '\.slda$')" -ge 4 ] && ok || fail "snapshots along the way: $(ls "$T/snaps1")"
# the stream evicted words (capacity 1,500 < 1,200 theme words + 9,000 rare ones)
"$S" topics "$T/stdin1.slda" --json >/dev/null 2>&1 && ok || fail "topics of the stdin model"
"$S" train "${X[@]}" -X global.stale=0 -o "$T/stale0.slda" "$T/docs.txt" >/dev/null 2>&1
"$S" export "$T/stale0.slda" --npy "$T/s0.npy" 2>/dev/null
"$S" export "$T/file1.slda" --npy "$T/s1.npy" 2>/dev/null
cmp -s "$T/s0.npy" "$T/s1.npy" && fail "global.stale=0 and 1 gave the same model" || ok

# read-ahead and line numbers: bad UTF-8 on lines 3, 300 and 700, a line of stop words only on
# line 513, blank lines in between; the ids of the documents are their line numbers
"$PY" - "$T/docs.txt" "$T/bad.txt" <<'EOF'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:800]
lines[2] = b"caf\xc3 au lait " + lines[2]
lines[299] = b"\xff" + lines[299]
lines[699] = lines[699] + b" \xed\xa0\x80"
lines[512] = b"the and of"
lines[100] = b""
lines[400] = b"   "
open(sys.argv[2], "wb").write(b"\n".join(lines) + b"\n")
EOF
for t in 1 2; do
    "$S" train -q -k 4 -X seed=3 -X threads=$t -o "$T/bad$t.slda" "$T/bad.txt" >"$T/out" 2>"$T/err"
    for n in 3 300 700 513; do
        grep -q "bad.txt:$n: " "$T/err" && ok || fail "threads=$t: no error naming bad.txt:$n: $(head -c 600 "$T/err")"
    done
    [ "$(grep -c 'bad.txt:[0-9]*: ' "$T/err")" = 4 ] && ok || fail "threads=$t: errors: $(cat "$T/err")"
    grep -q "rejected=4 " "$T/out" && ok || fail "threads=$t: summary $(cat "$T/out")"
done
# (a file is held in memory and C is its size: standard input gets the same C; a file whose
# documents all fit in replay.docs gets its second visits after its end, a stream after about
# twice the documents before them (docs/engine.md, "Second visits"): replay.docs below the
# file's 794 documents gives both the stream's rule)
C=$(sed -n 's/.* tokens=\([0-9]*\) .*/\1/p' "$T/out")
same_model "bad.txt: threads=2 differs from threads=1" "$T/bad1.slda" "$T/bad2.slda"
"$S" train -q -k 4 -X seed=3 -X replay.docs=500 -o "$T/badfile.slda" "$T/bad.txt" >/dev/null 2>&1
"$S" train -q -k 4 -X seed=3 -X replay.docs=500 -X corpus.tokens="$C" -o "$T/badin.slda" - \
    <"$T/bad.txt" >/dev/null 2>&1
same_model "bad.txt: the file read ahead differs from standard input" "$T/badfile.slda" "$T/badin.slda"
# document ids are line numbers: infer names them
"$S" infer "$T/bad1.slda" "$T/bad.txt" 2>/dev/null | "$PY" -c '
import sys, json
ids = []
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        ids.append(str(json.loads(line).get("id")))
    except ValueError:
        ids.append(line.split()[0])
sys.exit(0 if "2" in ids and "512" in ids and "514" in ids and "513" not in ids and "3" not in ids else 1)
' && ok || fail "infer ids are not the line numbers"

checks_done 0042-threads_text
