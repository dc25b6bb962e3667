#!/usr/bin/env bash
# 0001-cli_train.sh - the command line end to end: train from a file and from
# standard input, snapshot, topics, infer, export, help, exit codes, bad input.
set -u
. "$(dirname "$0")/checks.sh"

# A small corpus with two obvious themes, one document per line.
for i in $(seq 1 150); do
    echo "apple banana cherry fruit orchard apple banana juice fruit harvest"
    echo "engine piston turbine motor engine gearbox motor fuel piston torque"
done >"$T/docs.txt"

expect_rc 0 "train from a file" "$S" train -q -k 2 -X text.stopwords=none -X seed=3 -o "$T/m.slda" "$T/docs.txt"
grep -q '^train docs=300 tokens=3000 ' "$T/out" && ok || fail "summary line: $(cat "$T/out")"
[ -s "$T/m.slda" ] && ok || fail "snapshot not written"
ls "$T" | grep -q '\.tmp\.' && fail "temporary snapshot file left behind" || ok

expect_rc 0 "topics" "$S" topics -n 4 "$T/m.slda"
[ "$(wc -l <"$T/out")" -eq 2 ] && ok || fail "topics printed $(wc -l <"$T/out") lines, wanted 2"
# the two learned topics separate the two themes
if grep -q 'engine\|motor\|piston' "$T/out" && grep -q 'apple\|banana\|fruit' "$T/out" &&
   ! grep -E 'topic [0-9]+:.*(apple|banana|fruit).*(engine|motor|piston)' "$T/out" >/dev/null &&
   ! grep -E 'topic [0-9]+:.*(engine|motor|piston).*(apple|banana|fruit)' "$T/out" >/dev/null; then ok
else fail "topics do not separate the themes: $(cat "$T/out")"; fi

# same seed, same input => same snapshot model (bit for bit apart from times)
"$S" train -q -k 2 -X text.stopwords=none -X seed=3 -o "$T/m2.slda" - <"$T/docs.txt" >/dev/null 2>&1
"$S" topics -n 4 "$T/m2.slda" >"$T/t2" 2>/dev/null
"$S" topics -n 4 "$T/m.slda" >"$T/t1" 2>/dev/null
cmp -s "$T/t1" "$T/t2" && ok || fail "standard input and file give different topics"

printf 'piston engine motor torque\nbanana apple fruit\nzzzz qqqq\n' >"$T/new.txt"
expect_rc 0 "infer" "$S" infer -t 1 "$T/m.slda" "$T/new.txt"
[ "$(wc -l <"$T/out")" -eq 3 ] && ok || fail "infer printed $(wc -l <"$T/out") lines"
t1=$(sed -n 1p "$T/out" | sed 's/.*\[\[\([0-9]*\),.*/\1/')
t2=$(sed -n 2p "$T/out" | sed 's/.*\[\[\([0-9]*\),.*/\1/')
[ -n "$t1" ] && [ "$t1" != "$t2" ] && ok || fail "infer: engine and fruit documents got the same top topic: $(cat "$T/out")"
grep -q 'no known words' "$T/err" && ok || fail "infer: unknown-word document not reported"

expect_rc 0 "export" "$S" export "$T/m.slda" --npy "$T/phi.npy" --vocab "$T/vocab.txt"
if command -v /usr/bin/python3 >/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    /usr/bin/python3 - "$T/phi.npy" "$T/vocab.txt" <<'EOF' && ok || fail "npy check"
import sys, numpy as np
phi = np.load(sys.argv[1])
words = open(sys.argv[2]).read().split()
assert phi.dtype == np.float32 and phi.shape == (2, len(words)), (phi.dtype, phi.shape, len(words))
assert np.all(phi > 0) and np.all(phi.sum(axis=1) <= 1.0 + 1e-4), phi.sum(axis=1)
EOF
fi

# batch mode through the command line
expect_rc 0 "train --batch" "$S" train --batch --iterations 30 -X topics=2 -X text.stopwords=none -X local=cvb0+cgs "$T/docs.txt"
perp=$(sed -n 's/^batch local=cvb0+cgs K=2 iterations=30 perplexity=\([0-9.]*\) .*/\1/p' "$T/out")
# 20 distinct words, two clean themes of 10: a fitted model scores near 10
[ -n "$perp" ] && awk -v p="$perp" 'BEGIN { exit !(p > 5 && p < 13) }' && ok || fail "batch summary: $(cat "$T/out")"

# help and usage
for cmd in train topics infer export run produce broker config; do
    expect_rc 0 "$cmd --help" "$S" "$cmd" --help
    grep -qi usage "$T/out" && ok || fail "$cmd --help prints no usage"
done
expect_rc 2 "unknown command" "$S" frobnicate
expect_rc 2 "unknown option" "$S" train --no-such-option "$T/docs.txt"
expect_rc 2 "unknown property" "$S" train -X no.such.key=1 "$T/docs.txt"
grep -q 'unknown property "no.such.key"' "$T/err" && ok || fail "unknown property message: $(cat "$T/err")"
expect_rc 2 "bad value" "$S" train -X topics=0 "$T/docs.txt"
expect_rc 0 "-X list" "$S" train -X list
grep -q '^topics' "$T/out" && ok || fail "-X list does not list topics"
expect_rc 0 "-X dump" "$S" train -X topics=7 -X dump
grep -q '^topics=7$' "$T/out" && ok || fail "-X dump does not show topics=7: $(head -3 "$T/out")"
expect_rc 0 "config --markdown" "$S" config --markdown
cmp -s "$T/out" "${SLDA_SOURCE_DIR:?}/config/CONFIGURATION.md" && ok ||
    fail "config/CONFIGURATION.md is stale: run streamlda config --markdown > config/CONFIGURATION.md"

# runtime failures exit 1 with a message naming the file
expect_rc 1 "missing input" "$S" train -q "$T/nope.txt"
grep -q 'nope.txt' "$T/err" && ok || fail "missing file not named: $(cat "$T/err")"
printf 'garbage that is not a snapshot at all, but long enough to have a trailer\n' >"$T/bad.slda"
expect_rc 1 "corrupt snapshot" "$S" topics "$T/bad.slda"
grep -q 'bad.slda' "$T/err" && ok || fail "corrupt snapshot not named: $(cat "$T/err")"
head -c 1000 "$T/m.slda" >"$T/cut.slda"
expect_rc 1 "truncated snapshot" "$S" topics "$T/cut.slda"

# bad documents are reported with file:line, counted, and the rest still trains
printf 'good words here apple\n12 34 !! ..\n\xff\xfe broken utf8\n\nmore good apple words\n' >"$T/mixed.txt"
expect_rc 0 "mixed input" "$S" train -q -k 2 -X text.stopwords=none "$T/mixed.txt"
grep -q 'mixed.txt:2' "$T/err" && ok || fail "document without tokens not reported with file:line: $(cat "$T/err")"
grep -q 'mixed.txt:4' "$T/err" && fail "blank line reported as a document: $(cat "$T/err")" || ok
grep -q 'mixed.txt:3' "$T/err" && ok || fail "invalid UTF-8 not reported with file:line: $(cat "$T/err")"
grep -q 'docs=2 .*perplexity=- rejected=2 dropped_tokens=0 ' "$T/out" && ok || fail "mixed input summary: $(cat "$T/out")"

# counts past SLDA_MAX_DOC_TOKENS (a fuzz finding: once a heap overflow in the local step)
# (its only document is refused, so nothing is trained: exit 1, see 0021-cli_train_nothing.sh)
expect_rc 1 "huge counts" "$S" train -q -k 2 -X local=cgs \
    -X vocab.file="$SLDA_SOURCE_DIR/tests/fixtures/huge-counts.vocab" "$SLDA_SOURCE_DIR/tests/fixtures/huge-counts.dat"
grep -q 'out of range 1..16777216 (SLDA_ERR_RANGE)' "$T/err" && ok || fail "huge counts not refused: $(cat "$T/err")"

checks_done 0001-cli_train
