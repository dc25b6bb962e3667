#!/usr/bin/env bash
# 0004-header_examples.sh - the worked examples of include/streamlda.h run as the header says.
#
# CMake builds each example of the header's opening comment into a program (header_example_N,
# from scripts/header_examples.py), so one that no longer compiles breaks the build. Here they
# run in a scratch directory: example 1 trains on docs.txt (the Austen paragraphs of
# examples/janeausten, one per line) and writes model.slda, which `streamlda topics` reads;
# example 3 loads it and prints each topic with its share of a short text; example 2 starts
# the service on the embedded cluster with its stop flag already set, so it returns at once.
set -u
. "$(dirname "$0")/checks.sh"
SRC=${SLDA_SOURCE_DIR:?}
B=${SLDA_BUILD_DIR:?}

for n in 1 2 3; do check "header_example_$n is built" test -x "$B/header_example_$n"; done
cd "$T" || exit 1
awk 'NF' "$SRC"/examples/janeausten/*.txt >docs.txt
expect_rc 0 "example 1 (train from a file)" "$B/header_example_1"
check "example 1 wrote model.slda" test -s model.slda
expect_rc 0 "streamlda topics reads example 1's snapshot" "$S" topics -n 5 model.slda
check "the snapshot holds 20 topics" test "$(grep -c '^topic ' "$T/out")" -eq 20
expect_rc 0 "example 3 (load a snapshot and query it)" "$B/header_example_3"
check "example 3 printed 20 topics with their share" \
    test "$(grep -cE '^topic [0-9]+ \(0\.[0-9]{3}\): [a-z]' "$T/out")" -eq 20
printf 'not a snapshot' >model.slda
expect_rc 1 "example 3 on a corrupt snapshot exits 1" "$B/header_example_3"
says "example 3 names the reason" 'snapshot "model.slda".*SLDA_ERR_'
expect_rc 0 "example 2 (the service, stopped at once)" "$B/header_example_2"
check "example 2 made its snapshot directory" test -d snaps
checks_done 0004-header_examples
