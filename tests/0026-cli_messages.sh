#!/usr/bin/env bash
# 0026-cli_messages.sh - what the commands print when asked for help or given too little.
#
#  - `train --help` prints the usage as written: no printf escape (`%%`) left in it;
#  - `export` and `report` without an output option exit 2 naming what is missing (before,
#    both printed only the usage), and a command given too many snapshots says so; report's
#    bad option values are named with what they must be;
#  - train's summary says what its figures are: `rejected=N` for records left out (it said
#    `errors=`), `perplexity=-` without held-out documents (it said `nan`), and
#    `dropped_tokens=N` for the occurrences of new words a full vocabulary could not take
#    (with one warning on stderr).
set -u
. "$(dirname "$0")/checks.sh"

for cmd in train run topics diff report infer export produce broker; do
    expect_rc 0 "$cmd --help" "$S" "$cmd" --help
    if grep -q '%%' "$T/out" "$T/err"; then fail "$cmd --help prints '%%': $(grep -h '%%' "$T/out" "$T/err" | head -1)"; else ok; fi
done
"$S" train -q -k 3 -o "$T/m.slda" "$(dirname "$0")/../examples/janeausten/persuasion.txt" >/dev/null 2>&1 ||
    fail "train a small model"
expect_rc 2 "export with no output option" "$S" export "$T/m.slda"
says "export names the missing output" 'missing an output: --npy FILE and/or --vocab FILE'
expect_rc 2 "export with no snapshot" "$S" export --npy "$T/x.npy"
says "export names the missing snapshot" 'missing a SNAPSHOT'
expect_rc 2 "export with two snapshots" "$S" export "$T/m.slda" "$T/m.slda" --npy "$T/x.npy"
says "export says one snapshot" 'one SNAPSHOT, not 2 arguments'
expect_rc 2 "report with no output option" "$S" report "$T"
says "report names the missing output" 'missing an output: --html FILE and/or --json FILE'
expect_rc 2 "report with no directory" "$S" report --json "$T/r.json"
says "report names the missing directory" 'missing a SNAPSHOT_DIR'
expect_rc 2 "report with two directories" "$S" report "$T" "$T" --json "$T/r.json"
says "report says one directory" 'one SNAPSHOT_DIR, not 2 arguments'
expect_rc 2 "report with --words 0" "$S" report "$T" --json "$T/r.json" --words 0
says "report names the bad value" 'report: --words "0": not a whole number in 1\.\.30'
printf 'alpha beta gamma\n\n12 34\n%s\n' "$(head -c 3000 /dev/zero | tr '\0' '\377')" >"$T/mixed.txt"
python3 -c '
import sys
words = ["w" + "".join(chr(97 + (i >> (4 * k)) % 16) for k in range(5)) for i in range(5000)]
print(" ".join(words))
print("delta epsilon zeta eta theta")' >>"$T/mixed.txt"
# rejected: "12 34" (no token left), the invalid UTF-8 line, and the last line, whose new words
# the full vocabulary refuses (an empty document)
expect_rc 0 "train with rejected records and a vocabulary too small" "$S" train -k 2 \
    -X vocab.capacity=1000 -X progress.ms=0 -f text "$T/mixed.txt"
grep -Eq '^train docs=[0-9]+ .* perplexity=- rejected=3 dropped_tokens=4[0-9]{3} wall_seconds=' "$T/out" &&
    ok || fail "summary: $(cat "$T/out")"
says "one warning names the dropped words" 'warning: 4[0-9]{3} occurrences of new words were left out'
if grep -q 'nan' "$T/out" "$T/err"; then fail "nan printed: $(grep -h nan "$T/out" "$T/err")"; else ok; fi
checks_done 0026-cli_messages
