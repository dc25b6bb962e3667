#!/bin/bash
# track_cost.sh - what topic tracking costs on the Kafka path: documents/s of `streamlda run`
# with track=true (the default: prevalence windows, drift at snapshots, the live page's JSON)
# against track=false, same corpus, same K, runs interleaved, median of N each.
#
#   bench/track_cost.sh [FILE...]      (default: examples/janeausten/*.txt, 4 times over)
#   env: STREAMLDA, K (100), MB (32), N (3)
# Target (issue: topic tracking): tracking costs at most 5%. Uses both cores: run it alone.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
K=${K:-100} MB=${MB:-32} N=${N:-3}
tmp=$(mktemp -d /tmp/slda-trackcost-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
    for _ in 1 2 3 4; do cat "$here"/examples/janeausten/*.txt; done > "$tmp/corpus.txt"
    set -- "$tmp/corpus.txt"
fi
for i in $(seq "$N"); do
    for t in true false; do
        r=$(K=$K MB=$MB RUN_X="-X track=$t -X snapshot.topic=" bash "$here/bench/kafka_throughput.sh" "$@" |
            awk '/^kafka \(run\)/ {print $5}')
        echo "$t $r" | tee -a "$tmp/runs"
    done
done
/usr/bin/python3 - "$tmp/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    t, v = line.split()
    runs.setdefault(t, []).append(float(v))
med = {t: statistics.median(v) for t, v in runs.items()}
for t in ("true", "false"):
    print("track=%-5s docs/s median %.0f (runs: %s)" % (t, med[t], " ".join("%.0f" % x for x in runs[t])))
print("tracking costs %.1f%% of the documents/s" % (100 * (1 - med["true"] / med["false"])))
PY
