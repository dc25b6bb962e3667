#!/usr/bin/env bash
# 0041-batch_output.sh - `train --batch -o FILE` writes the batch model as a snapshot that
# topics, infer and export read: topics from the corpus, a mixture per document, rows of phi
# summing to 1 over the words with training tokens; an -o that cannot be written fails first.
set -u
. "$(dirname "$0")/checks.sh"

# two obvious themes, one document per line
for i in $(seq 1 120); do
    echo "apple banana cherry fruit orchard apple banana juice fruit harvest pear"
    echo "engine piston turbine motor engine gearbox motor fuel piston torque diesel"
done >"$T/docs.txt"
x=(-X text.stopwords=none -X topics=2 -X seed=4)

"$S" train --batch -i 30 -e 0 "${x[@]}" -o "$T/b.slda" "$T/docs.txt" >"$T/out" 2>"$T/err" &&
    ok || fail "train --batch -o: $(tail -n 3 "$T/err")"
grep -q '^batch local=cvb0+cgs K=2 iterations=30 perplexity=' "$T/out" && ok || fail "result line: $(cat "$T/out")"
[ -s "$T/b.slda" ] && ok || fail "no snapshot written"

"$S" topics -n 5 "$T/b.slda" >"$T/topics" 2>"$T/err" && ok || fail "topics: $(cat "$T/err")"
cat "$T/topics"
[ "$(wc -l <"$T/topics")" -eq 2 ] && ok || fail "topics printed $(wc -l <"$T/topics") lines, wanted 2"
if grep -E 'topic [0-9]+:.*(apple|banana|fruit).*(engine|motor|piston)|topic [0-9]+:.*(engine|motor|piston).*(apple|banana|fruit)' \
    "$T/topics" >/dev/null || ! grep -q 'fruit' "$T/topics" || ! grep -q 'engine' "$T/topics"; then
    fail "topics do not separate the themes"
else
    ok
fi

printf 'banana fruit apple orchard\nturbine engine piston\n' >"$T/new.txt"
"$S" infer -t 1 "$T/b.slda" "$T/new.txt" >"$T/mix" 2>"$T/err" && ok || fail "infer: $(cat "$T/err")"
cat "$T/mix"
[ "$(wc -l <"$T/mix")" -eq 2 ] && ok || fail "infer printed $(wc -l <"$T/mix") lines, wanted 2"
a=$(sed -n '1s/.*"topics":\[\[\([0-9]*\),\([0-9.]*\)\].*/\1 \2/p' "$T/mix")
b=$(sed -n '2s/.*"topics":\[\[\([0-9]*\),\([0-9.]*\)\].*/\1 \2/p' "$T/mix")
[ -n "$a" ] && [ -n "$b" ] && [ "${a%% *}" != "${b%% *}" ] && ok || fail "the two new documents share a topic: $a / $b"
awk -v p="${a#* }" -v q="${b#* }" 'BEGIN { exit !(p > 0.8 && q > 0.8) }' && ok || fail "weak mixtures: $a / $b"

"$S" export "$T/b.slda" --npy "$T/phi.npy" --vocab "$T/words" 2>"$T/err" && ok || fail "export: $(cat "$T/err")"
/usr/bin/python3 - "$T/phi.npy" "$T/words" <<'PY' && ok || fail "exported phi"
import sys
import numpy as np
phi = np.load(sys.argv[1])
words = open(sys.argv[2]).read().split()
sums = phi.sum(axis=1, dtype=np.float64)
print("export: shape %s, %d words, row sums %s" % (phi.shape, len(words), sums))
assert phi.shape == (2, 16) and len(words) == 16, (phi.shape, len(words))
assert np.all(np.abs(sums - 1) < 1e-5)
PY

# an output that cannot be written fails before the corpus is read
"$S" train --batch -i 1 "${x[@]}" -o "$T/no/such/dir/b.slda" "$T/docs.txt" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && ok || fail "unwritable -o: exit $rc, wanted 1"
grep -q 'no/such/dir' "$T/err" && ok || fail "unwritable -o: $(cat "$T/err")"
! grep -q '^batch:' "$T/err" && ok || fail "unwritable -o: the corpus was read first: $(cat "$T/err")"

checks_done 0041-batch_output
