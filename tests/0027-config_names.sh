#!/usr/bin/env bash
# 0027-config_names.sh - names that become paths, metric labels or Kafka keys are refused at
# start unless they are names.
#
# model.name names the snapshot files and the lock (<snapshot.dir>/<model.name>-...), the
# metrics' label and the Kafka keys: "../escaped" used to put every snapshot in the parent of
# snapshot.dir (where snapshot.keep never pruned them), and a newline forged lines in /metrics
# and the logs. Now: 1 to 100 of A-Z a-z 0-9 . _ - (not starting with . or -), anything else
# exit 2 with the reason, the value shown with its control bytes escaped; Kafka topic settings
# follow Kafka's own rule (1 to 249 of the same characters, comma separated for input.topics).
set -u
. "$(dirname "$0")/checks.sh"

mkdir -p "$T/run/snaps"
cd "$T/run" || exit 1
for bad in "../escaped" "a/b" ".hidden" "-dash" "has space" "$(printf 'x\ny')" \
    "$(printf 'caf\xc3\xa9')" "$(head -c 101 /dev/zero | tr '\0' a)"; do
    expect_rc 2 "run -X model.name=$(printf %q "$bad")" "$S" run --embedded -X snapshot.dir=snaps \
        -X "model.name=$bad"
    says "the reason names the rule" 'property "model.name": ".*" is not a name: 1 to 100 of'
    if grep -q "$(printf '\n')y: property" "$T/err"; then fail "a newline reached the message"; else ok; fi
    expect_rc 2 "train -X model.name=$(printf %q "$bad")" "$S" train -k 2 -X "model.name=$bad" \
        "$SLDA_SOURCE_DIR/examples/janeausten/persuasion.txt"
done
check "nothing was written outside the scratch directory's snaps" test -z "$(ls -A "$T" | grep -v '^run$\|^out$\|^err$')"
check "no snapshot or lock in snaps" test -z "$(ls -A snaps)"
grep -c 'x\\x0ay' "$T/err" >/dev/null || true
expect_rc 2 "a newline in model.name is shown escaped" "$S" train -k 2 -X "model.name=$(printf 'x\ny')" \
    "$SLDA_SOURCE_DIR/examples/janeausten/persuasion.txt"
says "escaped as \\x0a" '"x\\x0ay" is not a name'
for good in streamlda news-2026 a.b_c 0; do
    expect_rc 0 "train -X model.name=$good" "$S" train -q -k 2 -X "model.name=$good" \
        "$SLDA_SOURCE_DIR/examples/janeausten/persuasion.txt"
done
for bad in "a b" "x/y" "." ".." "docs,,more" "$(head -c 250 /dev/zero | tr '\0' t)"; do
    expect_rc 2 "run -X input.topics=$(printf %q "$bad")" "$S" run --embedded -X "input.topics=$bad"
    says "not a Kafka topic name" 'is not a Kafka topic name'
done
expect_rc 2 "run -X deadletter.topic=a:b" "$S" run --embedded -X "deadletter.topic=a:b"
expect_rc 0 "run --help with valid topics" "$S" run -X input.topics=docs,news.en -X output.topic= --help
checks_done 0027-config_names
