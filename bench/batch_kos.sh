#!/usr/bin/env bash
# batch_kos.sh - the hybrid paper's KOS experiment (Welling, Teh & Kappen 2008, Fig. 3-4):
# the seven batch variants at K=10, alpha=eta=0.1, then a table sorted by test
# perplexity and whether the paper's ordering CGS ~ CVB/CGS < CVB < SVB/CGS < SVB holds.
#
# Environment:
#   STREAMLDA       the binary (default: build/streamlda in the repository)
#   SLDA_SHARED_DIR the shared directory holding data/kos (default: ../shared beside the repo)
#   ITER            iterations per run (default 300, the paper's)
#   SEED            seed (default 1)
#   OUT             directory for the per-variant logs (default: a new temporary directory)
# Extra arguments are passed to every run (e.g. -X local.threshold=2).
# Full runs take minutes each (SVB and CVB are the slowest): not for a shared machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
STREAMLDA=${STREAMLDA:-$repo/build/streamlda}
shared=${SLDA_SHARED_DIR:-$repo/../shared}
data=$shared/data/kos/docword.kos.txt
ITER=${ITER:-300}
SEED=${SEED:-1}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/batch_kos.XXXXXX")}

[ -x "$STREAMLDA" ] || { echo "batch_kos: no binary at $STREAMLDA (set STREAMLDA)" >&2; exit 2; }
[ -r "$data" ] || { echo "batch_kos: no KOS corpus at $data (set SLDA_SHARED_DIR)" >&2; exit 2; }
mkdir -p "$OUT"

variants="cgs cvb+cgs cvb svb+cgs svb cvb0 cvb0+cgs"
results=$OUT/results.txt
: >"$results"
for v in $variants; do
    log=$OUT/${v//+/_}.log
    echo "batch_kos: local=$v iterations=$ITER (progress in $log)" >&2
    if ! "$STREAMLDA" train --batch -X topics=10 -X alpha=0.1 -X eta=0.1 -X "local=$v" \
        -X "seed=$SEED" --iterations "$ITER" "$@" "$data" >"$OUT/${v//+/_}.out" 2>"$log"; then
        echo "batch_kos: local=$v failed:" >&2
        tail -n 5 "$log" >&2
        exit 1
    fi
    # batch local=NAME K=K iterations=N perplexity=P seconds=S
    awk -v v="$v" '$1 == "batch" {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        print v, f["perplexity"], f["seconds"]
    }' "$OUT/${v//+/_}.out" >>"$results"
done

echo
echo "KOS, K=10, alpha=eta=0.1, $ITER iterations, seed $SEED"
printf '%-10s %12s %10s\n' variant perplexity seconds
sort -k2,2g "$results" | awk '{ printf "%-10s %12.2f %10.2f\n", $1, $2, $3 }'

# The paper's ordering (its Fig. 4): CGS ~ CVB/CGS < CVB < SVB/CGS < SVB,
# "~" read as within 2% of each other.
awk '
    { p[$1] = $2 }
    function check(name, ok) {
        printf "  %-36s %s\n", name, ok ? "yes" : "NO"
        all = all && ok
    }
    END {
        all = 1
        d = p["cgs"] - p["cvb+cgs"]; if (d < 0) d = -d
        print "paper ordering CGS ~ CVB/CGS < CVB < SVB/CGS < SVB:"
        check("CGS ~ CVB/CGS (within 2%)", d <= 0.02 * p["cgs"])
        check("CGS, CVB/CGS < CVB", p["cgs"] < p["cvb"] && p["cvb+cgs"] < p["cvb"])
        check("CVB < SVB/CGS", p["cvb"] < p["svb+cgs"])
        check("SVB/CGS < SVB", p["svb+cgs"] < p["svb"])
        print all ? "ordering holds" : "ordering does NOT hold"
    }' "$results"
echo "logs: $OUT"
