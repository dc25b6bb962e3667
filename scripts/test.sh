#!/usr/bin/env bash
# test.sh - build streamlda and run the whole test suite twice: a Release build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build (every test: unit, command line,
# Kafka scenarios, fuzz-corpus replays), and last the realkafka tier (a real Apache Kafka broker)
# in both builds. Needs scripts/setup.sh first.
# --quick: the loop while editing: the Release build and the tests labelled quick only (every
# test but the Kafka scenarios and the realkafka tier: CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

if [ "${1:-}" = --quick ]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j"$jobs"
    cd build && exec ctest --output-on-failure -j"$jobs" --timeout 600 -L quick
elif [ $# -gt 0 ]; then
    echo "usage: scripts/test.sh [--quick]" >&2
    exit 2
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600 -LE realkafka)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLDA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs" --timeout 900 -LE realkafka)

# The real-broker tier last, in both builds: each run starts one Apache Kafka broker
# (scripts/kafka.sh, fixture tests) for its tests/01NN-realkafka_* and stops it.
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600 -L realkafka)
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs" --timeout 900 -L realkafka)
