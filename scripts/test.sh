#!/usr/bin/env bash
# test.sh - build streamlda and run the whole test suite twice: a Release build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build (every test: unit, command line,
# Kafka scenarios, fuzz-corpus replays).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLDA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs" --timeout 900)
