#!/usr/bin/env bash
# 0031-gzip_input.sh - gzip input is read transparently (src/io/gzfile.c): files, standard input,
# concatenated members, format detection on the decompressed first line; truncated and corrupt
# .gz files are clear errors naming the file, never a crash, and a cut line never reaches the model.
set -u
. "$(dirname "$0")/checks.sh"
PY=/usr/bin/python3
run() { # rc-file description command... (stdout in $T/out, stderr in $T/err)
    "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"
}
rc() { cat "$T/rc"; }
no_crash() { [ "$(rc)" -lt 2 ] && ok || fail "$1: exit $(rc); stderr: $(head -c 400 "$T/err")"; }

for i in $(seq 1 150); do
    echo "apple banana cherry fruit orchard apple banana juice fruit harvest"
    echo "engine piston turbine motor engine gearbox motor fuel piston torque"
done >"$T/docs.txt"
gzip -c "$T/docs.txt" >"$T/docs.txt.gz"
TRAIN=("$S" train -q -k 2 -X text.stopwords=none -X seed=3)

# the same model from the plain file, the .gz file and gzip on standard input
run "${TRAIN[@]}" -o "$T/plain.slda" "$T/docs.txt"
plain=$(sed 's/ seconds=.*//' "$T/out")
run "${TRAIN[@]}" -o "$T/gz.slda" "$T/docs.txt.gz"
[ "$(sed 's/ seconds=.*//' "$T/out")" = "$plain" ] && ok || fail "gz: $(cat "$T/out" "$T/err") vs $plain"
[ "$plain" = "train docs=300 tokens=3000 test_docs=0" ] || [ "${plain#train docs=300 tokens=3000}" != "$plain" ] && ok \
    || fail "plain summary: $plain"
"$S" topics "$T/plain.slda" >"$T/t1" 2>/dev/null
"$S" topics "$T/gz.slda" >"$T/t2" 2>/dev/null
cmp -s "$T/t1" "$T/t2" && [ -s "$T/t1" ] && ok || fail "plain and gzip input give different topics"
gzip -c "$T/docs.txt" | "${TRAIN[@]}" - >"$T/out" 2>"$T/err"
[ "$(sed 's/ seconds=.*//' "$T/out")" = "$plain" ] && ok || fail "gzip on stdin: $(cat "$T/out" "$T/err")"

# concatenated members read as one stream (gzip -d does the same)
cat "$T/docs.txt.gz" "$T/docs.txt.gz" >"$T/two.gz"
run "${TRAIN[@]}" "$T/two.gz"
grep -q '^train docs=600 tokens=6000 ' "$T/out" && ok || fail "two members: $(cat "$T/out" "$T/err")"

# format detection looks at the decompressed first line: JSON lines in a file named *.gz
printf '{"id":"fruit-1","text":"apple banana fruit"}\n{"id":"motor-2","text":"engine piston motor"}\n' |
    gzip -c >"$T/docs.gz"
run "$S" infer -t 1 "$T/plain.slda" "$T/docs.gz"
grep -q '"id":"fruit-1"' "$T/out" && grep -q '"id":"motor-2"' "$T/out" && ok \
    || fail "JSON lines in docs.gz: $(cat "$T/out" "$T/err")"

# a file that starts with 1f but is not gzip is read as it is
printf '\037apple banana\nengine motor\n' >"$T/odd.txt"
run "$S" infer -t 1 "$T/plain.slda" "$T/odd.txt"
[ "$(wc -l <"$T/out")" -eq 2 ] && ok || fail "1f without 8b: $(cat "$T/out" "$T/err")"
printf '\037' >"$T/one.txt"
run "${TRAIN[@]}" "$T/one.txt"
no_crash "a lone 1f byte"

# a larger, poorly compressible corpus to cut and damage
"$PY" - "$T/big.txt" <<'EOF'
import random, sys
random.seed(7)
words = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 9)))
         for _ in range(3000)]
with open(sys.argv[1], "w") as f:
    for _ in range(3000):
        f.write(" ".join(random.choice(words) for _ in range(20)) + "\n")
EOF
gzip -c "$T/big.txt" >"$T/big.gz"

# truncated: the complete lines are read, the cut one is not, the error names the file
head -c 100000 "$T/big.gz" >"$T/trunc.gz"
complete=$("$PY" -c '
import sys, zlib
d = zlib.decompressobj(31).decompress(open(sys.argv[1], "rb").read())
print(d.count(b"\n"))' "$T/trunc.gz")
run "${TRAIN[@]}" -X text.min.length=1 "$T/trunc.gz"
no_crash "truncated"
grep -q "trunc.gz:$complete: read error: truncated gzip data" "$T/err" && ok \
    || fail "truncated: $(head -c 400 "$T/err") (complete lines: $complete)"
grep -q "^train docs=$complete " "$T/out" && ok || fail "truncated: $(cat "$T/out"), wanted docs=$complete"

# corrupt: bytes flipped inside the compressed data (each file damaged in another place)
for at in 20 5000 90000 176000; do
    "$PY" -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
at = min(int(sys.argv[3]), len(b) - 12)
for i in range(at, at + 4):
    b[i] ^= 0x5A
open(sys.argv[2], "wb").write(b)' "$T/big.gz" "$T/bad$at.gz" "$at"
    run "${TRAIN[@]}" "$T/bad$at.gz"
    no_crash "corrupt at $at"
    grep -q "bad$at.gz:[0-9]*: read error: corrupt gzip data" "$T/err" && ok \
        || fail "corrupt at $at: $(head -c 400 "$T/err")"
done
# a damaged trailer (CRC-32) is caught too
"$PY" -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-6] ^= 1
open(sys.argv[2], "wb").write(b)' "$T/big.gz" "$T/crc.gz"
run "${TRAIN[@]}" "$T/crc.gz"
grep -q "crc.gz:[0-9]*: read error: corrupt gzip data: incorrect data check" "$T/err" && ok \
    || fail "CRC: $(head -c 400 "$T/err")"

# bytes after the last member that are not another member: every line read, then an error
{ cat "$T/big.gz"; printf 'trailing'; } >"$T/trail.gz"
run "${TRAIN[@]}" "$T/trail.gz"
grep -q "trail.gz:3000: read error: corrupt gzip data: bytes after the last member" "$T/err" && ok \
    || fail "trailing bytes: $(head -c 400 "$T/err")"
grep -q '^train docs=3000 ' "$T/out" && ok || fail "trailing bytes: $(cat "$T/out")"

# UCI read in blocks (reader_uci.c): a truncated .gz gives every complete entry line, the read
# error at the last complete line, the document being gathered, then the short NNZ count
"$PY" - "$T/docword.big.txt" "$T/vocab.big.txt" <<'EOF'
import random, sys
random.seed(11)
W, D = 2000, 1500
rows = []
for d in range(1, D + 1):
    for w in sorted(random.sample(range(1, W + 1), random.randint(20, 60))):
        rows.append("%d %d %d" % (d, w, random.randint(1, 4)))
with open(sys.argv[1], "w") as f:
    f.write("%d\n%d\n%d\n" % (D, W, len(rows)))
    f.write("\n".join(rows) + "\n")
with open(sys.argv[2], "w") as f:
    f.write("\n".join("w%d" % i for i in range(W)) + "\n")
EOF
gzip -c "$T/docword.big.txt" >"$T/docword.big.gz"
head -c 150000 "$T/docword.big.gz" >"$T/docword.cut.gz"
read -r complete entries docs nnz <<<"$("$PY" -c '
import sys, zlib
d = zlib.decompressobj(31).decompress(open(sys.argv[1], "rb").read())
lines = d.split(b"\n")[:-1]  # complete lines only
entries = lines[3:]
print(len(lines), len(entries), len({e.split()[0] for e in entries}), int(lines[2]))' "$T/docword.cut.gz")"
UCI=("$S" train -q -k 3 -f uci -X vocab.file="$T/vocab.big.txt" -X seed=3)
for t in 1 2; do
    run "${UCI[@]}" -X threads=$t "$T/docword.cut.gz"
    no_crash "uci truncated, threads=$t"
    grep -q "docword.cut.gz:$complete: read error: truncated gzip data" "$T/err" && ok \
        || fail "uci truncated, threads=$t: $(head -c 400 "$T/err") (complete lines: $complete)"
    grep -q "docword.cut.gz:$complete: file ends after $entries of $nnz entries (NNZ)" "$T/err" && ok \
        || fail "uci truncated NNZ, threads=$t: $(head -c 600 "$T/err") ($entries of $nnz)"
    grep -q "^train docs=$docs " "$T/out" && ok || fail "uci truncated, threads=$t: $(cat "$T/out"), wanted docs=$docs"
done
# whole: the same model from the file, its .gz, and standard input (read a line at a time)
run "${UCI[@]}" -X threads=2 -o "$T/uci1.slda" "$T/docword.big.txt"
run "${UCI[@]}" -X threads=2 -o "$T/uci2.slda" "$T/docword.big.gz"
"$S" export "$T/uci1.slda" --npy "$T/uci1.npy" 2>/dev/null
"$S" export "$T/uci2.slda" --npy "$T/uci2.npy" 2>/dev/null
cmp -s "$T/uci1.npy" "$T/uci2.npy" && [ -s "$T/uci1.npy" ] && ok || fail "uci: file and .gz give different models"
grep -q "^train docs=1500 " "$T/out" && ok || fail "uci .gz: $(cat "$T/out" "$T/err")"
"${UCI[@]}" -X threads=2 - <"$T/docword.big.txt" >"$T/out" 2>"$T/err"
grep -q "^train docs=1500 " "$T/out" && ok || fail "uci on stdin: $(cat "$T/out" "$T/err")"

checks_done 0031-gzip_input
