#!/bin/bash
# speed.sh - training tokens/s of two configurations, interleaved run by run so that both see
# the same machine load; one thread, one pass, K=100, medians of REPEAT runs.
#
#   bench/quality/speed.sh DATADIR [STREAMLDA]      e.g. build/quality/data build/streamlda
#
# A = BEFORE_X (default global.rows=decay), B = AFTER_X (default: the defaults), on each corpus
# of CORPORA (default kos,20news). Prints per corpus: medians and B/A. Still quote it with the
# load average it prints: interleaving evens out slow drifts of the load, not bursts.
set -euo pipefail
data=$1
bin=${2:-$(cd "$(dirname "$0")/../.." && pwd)/build/streamlda}
repeat=${REPEAT:-5}
before_x=${BEFORE_X-global.rows=decay}
after_x=${AFTER_X-}
echo "speed: $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # config-words corpus -> tokens/s
    local args=()
    for kv in $1; do args+=(-X "$kv"); done
    "$bin" train -f uci -q -X topics=100 -X threads=1 -X seed=1 ${args[@]+"${args[@]}"} \
        "$data/$2/docword.train.txt" 2>/dev/null | sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
IFS=, read -r -a list <<< "${CORPORA:-kos,20news}"
for c in "${list[@]}"; do
    a=() b=()
    for ((i = 0; i < repeat; i++)); do
        a+=("$(run "$before_x" "$c")")
        b+=("$(run "$after_x" "$c")")
    done
    ma=$(printf '%s\n' "${a[@]}" | median)
    mb=$(printf '%s\n' "${b[@]}" | median)
    echo "speed corpus=$c before='$before_x' tokens_per_s=$ma after='$after_x' tokens_per_s=$mb" \
         "ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}')"
done
echo "speed: done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
