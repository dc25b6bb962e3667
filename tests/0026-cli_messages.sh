#!/usr/bin/env bash
# 0026-cli_messages.sh - what the commands print when asked for help or given too little.
#
#  - `train --help` prints the usage as written: no printf escape (`%%`) left in it;
#  - `export` and `report` without an output option exit 2 naming what is missing (before,
#    both printed only the usage), and a command given too many snapshots says so.
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
checks_done 0026-cli_messages
