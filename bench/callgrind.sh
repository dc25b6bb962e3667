#!/usr/bin/env bash
# callgrind.sh - instructions executed by `streamlda train` (valgrind's callgrind), for two builds:
# a count that does not depend on the machine's load, so a change meant to keep the speed can be
# checked on a busy machine (docs/benchmarks.md).
#
#   bench/callgrind.sh OLD NEW      OLD, NEW: directories holding a `streamlda` binary
#   env: SLDA_SHARED_DIR (default ../shared beside the repository), K (100),
#        CORPORA (default "kos reuters 20news")
#
# Runs, one thread each (a second thread's spinning would count): KOS (UCI bag of words),
# Reuters-21578 as raw text (title + body, time order) and 20 Newsgroups as raw text (subject
# and body of the first 4,000 training messages: headers, quotes, addresses; news20_text.py).
# Prints each binary's instruction count and NEW / OLD. Needs valgrind (`SLDA_BENCH=1 scripts/setup.sh`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
OLD=$(cd "${1:?usage: callgrind.sh OLD_DIR NEW_DIR}" && pwd)
NEW=$(cd "${2:?usage: callgrind.sh OLD_DIR NEW_DIR}" && pwd)
K=${K:-100}
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 "$here/reuters_text.py" "$shared/data/reuters21578/reuters21578.by-time.tsv.gz" \
    "$T/reuters.txt"
python3 "$here/news20_text.py" "$shared/data/20news-bydate/20news-bydate.tar.gz" "$T/20news.txt" 4000
count() { # bin args...: instructions of one run
    local bin=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$bin/streamlda" train -q \
        -k "$K" -X threads=1 "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : *//p'
}
printf "%-8s %16s %16s %9s\n" corpus old new new/old
for corpus in ${CORPORA:-kos reuters 20news}; do
    case $corpus in
    kos) args=("$shared/data/kos/docword.kos.txt") ;;
    reuters) args=(-f text "$T/reuters.txt") ;;
    20news) args=(-f text "$T/20news.txt") ;;
    *) echo "callgrind.sh: unknown corpus $corpus" >&2; exit 2 ;;
    esac
    o=$(count "$OLD" "${args[@]}")
    n=$(count "$NEW" "${args[@]}")
    printf "%-8s %16s %16s %9s\n" $corpus "$o" "$n" "$(awk -v a="$o" -v b="$n" 'BEGIN {printf "%.4f", b / a}')"
done
