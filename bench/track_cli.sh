#!/usr/bin/env bash
# track_cli.sh - time of `streamlda diff` and `streamlda report` at K=100 and K=1000, and what
# the top-M word lists of the distance cost and save against full rows.
#
# Models: `streamlda train` on the first DOCS articles of Reuters-21578 in time order (title +
# body; $SLDA_SHARED_DIR/data/reuters21578, see its SOURCE.md), two seeds per K, with
# snapshots every DOCS/SNAPS documents for the report. Printed per K:
#   diff --top 100 (the default), diff --top 0 (full rows over both vocabularies; skipped at
#   K=1000 unless FULL_1000=1: about K^2 W logarithms), the largest difference between the two
#   distance matrices' assigned pairs, and report over the snapshot directory (K x K distances
#   per consecutive pair of snapshots, HTML and JSON written).
# Speed figures: run on an idle machine (the times are wall clock, best of REPEAT).
#
# Environment: STREAMLDA (default: build Release into SLDA_BUILD_DIR, default build/),
# SLDA_SHARED_DIR (default ../shared beside the repository), KS (default "100 1000"),
# DOCS (default 8000), SNAPS (default 5), REPEAT (default 3), WORK (scratch, default a mktemp).
set -eu
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SLDA_SHARED_DIR:-$HERE/../shared}
if [ -z "${STREAMLDA:-}" ]; then
    B=${SLDA_BUILD_DIR:-$HERE/build}
    cmake -S "$HERE" -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$B" -j2 --target streamlda >/dev/null
    STREAMLDA=$B/streamlda
fi
S=$STREAMLDA
KS=${KS:-100 1000}
DOCS=${DOCS:-8000}
SNAPS=${SNAPS:-5}
REPEAT=${REPEAT:-3}
W=${WORK:-$(mktemp -d)}
mkdir -p "$W"
[ -n "${WORK:-}" ] || trap 'rm -rf "$W"' EXIT

python3 - "$SHARED/data/reuters21578/reuters21578.by-time.tsv.gz" "$DOCS" >"$W/docs.txt" <<'PY'
import gzip, sys
n, limit = 0, int(sys.argv[2])
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f:
    next(f)
    for line in f:
        p = line.rstrip("\n").split("\t")
        text = (p[4] + ". " + p[5]).strip() if len(p) >= 6 else ""
        if len(text) > 20:
            print(text)
            n += 1
            if n == limit:
                break
PY

# best wall time of REPEAT runs of a command, in seconds
best() {
    local b=999999 t0 t1 dt
    for _ in $(seq 1 "$REPEAT"); do
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        dt=$(echo "$t1 - $t0" | bc)
        b=$(echo "if ($dt < $b) $dt else $b" | bc)
    done
    printf '%.3f' "$b"
}

every=$((DOCS / SNAPS))
printf '%-6s %-8s %-12s %-12s %-14s %-12s %s\n' K words diff_top100 diff_full max_abs_delta report snapshots
for K in $KS; do
    "$S" train -q -k "$K" -X seed=1 --snapshot-dir "$W/s$K" --snapshot-every "$every" -o "$W/a$K.slda" \
        "$W/docs.txt" >/dev/null 2>&1
    "$S" train -q -k "$K" -X seed=2 -o "$W/b$K.slda" "$W/docs.txt" >/dev/null 2>&1
    words=$("$S" export "$W/a$K.slda" --vocab - | wc -l)
    d100=$(best "$S" diff --json "$W/a$K.slda" "$W/b$K.slda")
    "$S" diff --json "$W/a$K.slda" "$W/b$K.slda" >"$W/d100.json"
    if [ "$K" -lt 1000 ] || [ "${FULL_1000:-0}" = 1 ]; then
        dfull=$(REPEAT=1 best "$S" diff --json --top 0 "$W/a$K.slda" "$W/b$K.slda")
        "$S" diff --json --top 0 "$W/a$K.slda" "$W/b$K.slda" >"$W/dfull.json"
        delta=$(python3 - "$W/d100.json" "$W/dfull.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
pa = {(p["a"], p["b"]): p["js"] for p in a["pairs"]}
pb = {(p["a"], p["b"]): p["js"] for p in b["pairs"]}
same = len(set(pa) & set(pb))
print("%.4f(%d/%d_same_pairs)" % (max(abs(pa[k] - pb[k]) for k in set(pa) & set(pb)), same, len(pa)))
PY
)
    else
        dfull=skipped
        delta=-
    fi
    rep=$(best "$S" report "$W/s$K" --html "$W/r$K.html" --json "$W/r$K.json")
    printf '%-6s %-8s %-12s %-12s %-14s %-12s %s\n' "$K" "$words" "${d100}s" "$dfull" "$delta" "${rep}s" \
        "$(ls "$W/s$K" | grep -c '\.slda$')"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
