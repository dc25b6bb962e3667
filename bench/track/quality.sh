#!/usr/bin/env bash
# quality.sh - the tracking figures of docs/tracking.md on synthetic streams with known curves
# (bench/track/gen.py), printed as tables: (1) the MAE of per-day shares against the truth
# (bench/track/mae.py), report (scored while training, reservoirs rescored at each snapshot) and
# `timeline` (every document under the last snapshot); (2) changes in prevalence found by the
# report on stationary streams (false events per 10,000 documents) and on the stream in time
# order (each known abrupt change found for its topic and kind within 0.04 of the span).
#   bench/track/quality.sh [BINARY]   (default build/streamlda; scratch in a mktemp directory)
set -eu
S=${1:-build/streamlda}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=10000

echo "stream                      report_mae  timeline_mae  report_first20%  timeline_first20%  aligned"
for seed in 12 13; do
    python3 "$HERE/gen.py" --docs "$N" --topics 10 --span-days 365 --seed "$seed" \
        --shape step,ramp,burst,late,fall --out "$T/s$seed.jsonl" --truth "$T/t$seed.jsonl"
    "$S" train -q -k 10 -X seed=1 --time-field time --snapshot-dir "$T/s$seed" \
        --snapshot-every 500 "$T/s$seed.jsonl" -o "$T/m$seed.slda" >/dev/null 2>&1
    "$S" report "$T/s$seed" --json "$T/r$seed.json" 2>/dev/null
    "$S" timeline --time-field time --window day "$T/m$seed.slda" "$T/s$seed.jsonl" \
        --json "$T/tl$seed.json" 2>/dev/null
    r=$(python3 "$HERE/mae.py" "$T/t$seed.jsonl" "$T/r$seed.json" --first 0.2)
    t=$(python3 "$HERE/mae.py" "$T/t$seed.jsonl" "$T/tl$seed.json" --first 0.2)
    printf "seed %-3s %6d docs, K=10     %s  %s  %s  %s  %s\n" "$seed" "$N" \
        "$(sed 's/.*mae=\([0-9.]*\) .*/\1/' <<<"$r")" "$(sed 's/.*mae=\([0-9.]*\) .*/\1/' <<<"$t")" \
        "$(sed 's/.*first_mae=//' <<<"$r")" "$(sed 's/.*first_mae=//' <<<"$t")" \
        "$(sed 's/.*topics_aligned=\([0-9/]*\).*/\1/' <<<"$t")"
done

echo
echo "stationary stream (--shuffle-time)   changes  per_10k_docs"
for seed in 11 12 13; do
    python3 "$HERE/gen.py" --docs "$N" --topics 10 --span-days 365 --seed "$seed" \
        --shape step,ramp,burst,late,fall --shuffle-time --out "$T/q$seed.jsonl"
    "$S" train -q -k 10 -X seed=1 --time-field time --snapshot-dir "$T/q$seed" \
        --snapshot-every 500 "$T/q$seed.jsonl" >/dev/null 2>&1
    "$S" report "$T/q$seed" --json "$T/q$seed.json" 2>/dev/null
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = len(d["changes"])
print("seed %-3s                             %7d  %12.2f" % (sys.argv[2], n, n * 1e4 / int(sys.argv[3])))
' "$T/q$seed.json" "$seed" "$N"
done

echo
echo "stream in time order   known  found  extra  (within 0.04 of the span; the ramp is not abrupt)"
for seed in 12 13; do
    python3 - "$T/r$seed.json" "$T/t$seed.jsonl" "$seed" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
times = [json.loads(l)["time_ms"] for l in open(sys.argv[2])]
t0, t1 = min(times), max(times)
true = {(4, "fall", 0.40), (2, "rise", 0.45), (0, "rise", 0.50), (2, "fall", 0.50),
        (3, "rise", 0.60)}
found = []
for c in d["changes"]:
    m = re.match(r"([a-z])word", c["words"])
    found.append((ord(m.group(1)) - 97 if m else -1, c["kind"], (c["start_ms"] - t0) / (t1 - t0)))
near = lambda f, t: f[0] == t[0] and f[1] == t[1] and abs(f[2] - t[2]) <= 0.04
hit = sum(1 for t in true if any(near(f, t) for f in found))
extra = sum(1 for f in found if not any(near(f, t) for t in true))
print("seed %-3s               %5d  %5d  %5d" % (sys.argv[3], len(true), hit, extra))
PY
done
