#!/bin/sh
# gen_fixtures.sh - rewrite the snapshot fixtures of the current format version.
#
# tests/fixtures/snapshot-v1-k3.slda is the tiny K=3 model that
# tests/unit_snapshot.c builds in fixture_model() and then checks value by value
# after loading the frozen file. Run this only when that model changes on
# purpose; a new snapshot format version gets a new fixture file and the old
# ones stay, so old snapshots keep loading (docs/snapshot-format.md).
#
# Usage: scripts/gen_fixtures.sh [BUILD_DIR]   (default: $SLDA_BUILD_DIR or ./build)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${SLDA_BUILD_DIR:-$src/build}}
cmake -S "$src" -B "$build" >/dev/null
make -C "$build" -j2 t_unit_snapshot >/dev/null
mkdir -p "$src/tests/fixtures"
"$build/t_unit_snapshot" --write-fixture "$src/tests/fixtures/snapshot-v1-k3.slda"
