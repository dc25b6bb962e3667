#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets (tests/fuzzers/) with clang and run each for a while.
#
# Usage: scripts/fuzz.sh [TARGET...]      (default: every target)
# Environment:
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_BUILD    build directory (default build-libfuzzer)
#   FUZZ_JOBS     make -j (default 2); the fuzzing itself runs one process
#   FUZZ_ARGS     extra libFuzzer flags, e.g. "-max_len=8192"
# Targets: message json snapshot snapshot_fixsum reader tokenize segment update update_fixsum.
#
# Dictionaries: tests/fuzzers/{json,snapshot,reader}.dict.
# Each target starts from a working copy of its seed corpus
# (tests/fuzzers/corpus/<corpus>/, never modified here) in
# $FUZZ_BUILD/fuzz-corpus/<target>/, which grows across runs. Findings
# (crash-*, leak-*, timeout-*, oom-*) land in $FUZZ_BUILD/fuzz-findings/<target>/;
# replay one with `$FUZZ_BUILD/fuzz_<target> FILE` (or the plain
# `$FUZZ_BUILD/fuzz_replay_<target> FILE`). Exit status: 0 when no target
# found anything, 1 when one did, 2 when the tools are missing.
#
# Needs clang and libFuzzer (Debian: apt-get install clang libclang-rt-14-dev);
# this script installs nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-build-libfuzzer}
jobs=${FUZZ_JOBS:-2}
all_targets="message json snapshot snapshot_fixsum reader tokenize segment update update_fixsum"
targets=${*:-$all_targets}

corpus_of() {
    case $1 in
    snapshot_fixsum) echo snapshot ;;
    update_fixsum) echo update ;;
    segment) echo tokenize ;;
    *) echo "$1" ;;
    esac
}

dict_of() { # tests/fuzzers/<name>.dict, if the target has one
    case $1 in
    message | json) echo json ;;
    snapshot | snapshot_fixsum) echo snapshot ;;
    reader) echo reader ;;
    esac
}

# ---- tools ----
missing=""
command -v clang >/dev/null 2>&1 || missing="$missing clang"
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
if [ -z "$missing" ]; then
    probe=$(mktemp -d)
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' \
        >"$probe/probe.c"
    if ! clang -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" \
        >"$probe/log" 2>&1; then
        missing="$missing libFuzzer-runtime(libclang-rt-dev)"
        sed 's/^/  clang: /' "$probe/log" | head -5 >&2
    fi
    rm -rf "$probe"
fi
if [ -n "$missing" ]; then
    echo "fuzz.sh: missing:$missing" >&2
    echo "fuzz.sh: on Debian: apt-get install clang libclang-rt-14-dev cmake" >&2
    exit 2
fi
for t in $targets; do
    case " $all_targets " in
    *" $t "*) ;;
    *) echo "fuzz.sh: unknown target '$t' (targets: $all_targets)" >&2; exit 2 ;;
    esac
done

# ---- build ----
echo "fuzz.sh: building in $build (clang, SLDA_FUZZ=ON)"
if ! cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLDA_FUZZ=ON >"$build.cmake.log" 2>&1; then
    cat "$build.cmake.log" >&2
    exit 2
fi
rm -f "$build.cmake.log"
make_targets=""
for t in $targets; do make_targets="$make_targets fuzz_$t"; done
# shellcheck disable=SC2086
if ! cmake --build "$build" -j"$jobs" --target $make_targets >/dev/null; then
    echo "fuzz.sh: build failed (run cmake --build $build for the details)" >&2
    exit 2
fi

# ---- run ----
# Hostile sizes must fail softly (SLDA_ERR_NOMEM) rather than exhaust the
# machine: the allocator returns NULL above 1 GiB, under libFuzzer's RSS limit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
found=0
summary=""
for t in $targets; do
    corpus="$build/fuzz-corpus/$t"
    findings="$build/fuzz-findings/$t"
    log="$build/fuzz-findings/$t.log"
    mkdir -p "$corpus" "$findings"
    cp -n "$root/tests/fuzzers/corpus/$(corpus_of "$t")"/* "$corpus"/ 2>/dev/null
    marker="$build/fuzz-findings/.$t.start"
    touch "$marker"
    before=$(find "$findings" -type f | wc -l)
    dict=""
    [ -n "$(dict_of "$t")" ] && dict="-dict=$root/tests/fuzzers/$(dict_of "$t").dict"
    echo "fuzz.sh: fuzz_$t for ${seconds}s (corpus $corpus)"
    # -fork/-jobs off: one process, one core.
    # shellcheck disable=SC2086
    "$build/fuzz_$t" "$corpus" $dict -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
        -max_len=16384 -print_final_stats=1 -artifact_prefix="$findings/" ${FUZZ_ARGS:-} \
        >"$log" 2>&1
    rc=$?
    after=$(find "$findings" -type f | wc -l)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
        found=1
        summary="$summary\n  $t: FINDING (exit $rc), see $log"
        grep -m3 -E 'ERROR: |fuzz invariant broken|runtime error|SUMMARY' "$log" | sed 's/^/    /'
        for f in $(find "$findings" -type f -newer "$marker" 2>/dev/null); do
            echo "    reproducer: $f"
        done
    else
        summary="$summary\n  $t: ok (${execs:-?} runs, coverage ${cov:-?})"
    fi
done
printf "fuzz.sh: summary%b\n" "$summary"
exit $found
