#!/usr/bin/env bash
# threads.sh - the whole `streamlda train` job with 1..N threads (docs/engine.md, "Threads").
#
#   bench/threads.sh            env: STREAMLDA (binary; default: a Release build in build/),
#                               THREADS_MAX (default: nproc, at most 4), REPEAT (5), K (100),
#                               SLDA_SHARED_DIR (default ../shared beside the repository),
#                               X (extra settings, space-separated k=v, each given as -X k=v)
#
# Corpora: Reuters-21578 as text (title + body of each article, in time order: read, tokenised,
# trained) and KOS (UCI bag of words). For each thread count: the median over REPEAT runs of the
# process's wall time (the whole process but writing the model, whose fsync is disk time, not
# cores: also starting the process and loading its shared libraries, about 1 ms), of the job
# (`wall_seconds` of the summary line: reading, tokenising and training, from the first byte
# read to the last update applied) and of the training steps alone (`seconds`), their ratios
# to one thread, and whether the model (written by one more run, -o) is bit-identical to one
# thread's (it must be). Runs alternate between
# thread counts so a slow phase of a shared machine hits all of them. Speed figures need a quiet
# machine: run it alone (uptime's load average well below 1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
REPEAT=${REPEAT:-5}
K=${K:-100}
nproc=$(nproc)
THREADS_MAX=${THREADS_MAX:-$((nproc < 4 ? nproc : 4))}
if [ -z "${STREAMLDA:-}" ]; then
    cmake -S "$repo" -B "$repo/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$repo/build" -j2 --target streamlda >/dev/null
    STREAMLDA=$repo/build/streamlda
fi
S=$STREAMLDA
extra=()
for x in ${X:-}; do extra+=(-X "$x"); done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

python3 "$here/reuters_text.py" "$shared/data/reuters21578/reuters21578.by-time.tsv.gz" \
    "$T/reuters.txt"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); K=$K, one pass, defaults${X:+ but $X}"

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }

run_corpus() { # name args...
    local name=$1
    shift
    for r in $(seq 1 "$REPEAT"); do
        for t in $(seq 1 "$THREADS_MAX"); do
            local t0 t1 out
            t0=$EPOCHREALTIME # bash's clock: no process of its own inside the interval
            out=$("$S" train -q -k "$K" -X threads="$t" "${extra[@]}" "$@" 2>/dev/null)
            t1=$EPOCHREALTIME
            awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN {print b - a}' >>"$T/$name.$t.wall"
            echo "$out" | sed -n 's/.* seconds=\([0-9.]*\) .*/\1/p' >>"$T/$name.$t.train"
            echo "$out" | sed -n 's/.* wall_seconds=\([0-9.]*\).*/\1/p' >>"$T/$name.$t.job"
        done
    done
    for t in $(seq 1 "$THREADS_MAX"); do # the models, for the identity check (not timed)
        "$S" train -q -k "$K" -X threads="$t" "${extra[@]}" -o "$T/$name.$t.slda" "$@" >/dev/null 2>&1
    done
    "$S" export "$T/$name.1.slda" --npy "$T/$name.1.npy" 2>/dev/null
    local w1 j1 s1
    w1=$(median <"$T/$name.1.wall")
    j1=$(median <"$T/$name.1.job")
    s1=$(median <"$T/$name.1.train")
    printf "%-8s %7s %10s %8s %9s %8s %10s %8s %s\n" corpus threads "wall (s)" ratio "job (s)" \
        ratio "train (s)" ratio "model"
    for t in $(seq 1 "$THREADS_MAX"); do
        local w j s same=identical
        w=$(median <"$T/$name.$t.wall")
        j=$(median <"$T/$name.$t.job")
        s=$(median <"$T/$name.$t.train")
        "$S" export "$T/$name.$t.slda" --npy "$T/$name.$t.npy" 2>/dev/null
        cmp -s "$T/$name.1.npy" "$T/$name.$t.npy" || same=DIFFERENT
        printf "%-8s %7d %10.3f %7.2fx %9.3f %7.2fx %10.3f %7.2fx %s\n" "$name" "$t" "$w" \
            "$(ratio "$w1" "$w")" "$j" "$(ratio "$j1" "$j")" "$s" "$(ratio "$s1" "$s")" "$same"
    done
}

run_corpus reuters -f text "$T/reuters.txt"
run_corpus kos "$shared/data/kos/docword.kos.txt"
echo "(median of $REPEAT runs each; wall = the whole process without -o; job = reading, tokenising"
echo " and training (wall_seconds); train = the training steps alone)"
