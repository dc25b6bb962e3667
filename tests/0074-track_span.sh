#!/usr/bin/env bash
# 0074-track_span.sh - prevalence over any span with the default settings: a stream of nine
# years (bench/track/gen.py) trained with `train --time-field --snapshot-dir` and no track.*
# setting keeps every document in its prevalence (the summary says so and names the
# documents older than the finest windows), and `report` charts the whole span: its windows
# start at the first document and end at the last, and hold every document. So does a stream of
# a few hours (minutes) and one of a year (days). Before multi-resolution prevalence (a ring of
# 168 hours) the nine years were reduced to their last week.
set -u
. "$(dirname "$0")/checks.sh"
SRC=${SLDA_SOURCE_DIR:?}
GEN="$SRC/bench/track/gen.py"

span_check() { # name span-days docs want-window-ms
    local name=$1 days=$2 n=$3 want=$4
    python3 "$GEN" --docs "$n" --topics 5 --span-days "$days" --seed 74 --out "$T/$name.jsonl"
    "$S" train -q -k 5 -X seed=1 --time-field time --snapshot-dir "$T/$name" \
        --snapshot-every 1000 "$T/$name.jsonl" >/dev/null 2>"$T/$name.err" ||
        { fail "$name: train: $(cat "$T/$name.err")"; return; }
    grep -Eq "prevalence: $n documents, 0 left out \(no mixture\), [0-9]+ older than the 240 finest windows kept \(counted in the coarser ones\)" "$T/$name.err" &&
        ok || fail "$name: summary: $(grep 'event time' "$T/$name.err")"
    "$S" report "$T/$name" --json "$T/$name.json" --html "$T/$name.html" 2>"$T/$name.rerr" ||
        { fail "$name: report: $(cat "$T/$name.rerr")"; return; }
    python3 - "$T/$name.json" "$T/$name.jsonl" "$n" "$want" <<'PY' && ok || fail "$name: the report does not cover the whole span"
import calendar, json, sys, time
d = json.load(open(sys.argv[1]))
times = [calendar.timegm(time.strptime(json.loads(l)["time"], "%Y-%m-%dT%H:%M:%SZ")) * 1000
         for l in open(sys.argv[2])]
n, want = int(sys.argv[3]), int(sys.argv[4])
p = d["prevalence"]
w = p["windows"]
print("window", p["window_ms"], "windows", len(w), "docs", sum(x["docs"] for x in w),
      "first", w[0]["start_ms"] if w else None, min(times), "last",
      w[-1]["start_ms"] + p["window_ms"] if w else None, max(times), "outside", p.get("outside"))
assert p["window_ms"] == want, p["window_ms"]
assert len(w) <= 1024, len(w)  # bounded: the last tier doubles beyond 1024
assert sum(x["docs"] for x in w) == n, sum(x["docs"] for x in w)
assert w[0]["start_ms"] <= min(times) < w[0]["start_ms"] + p["window_ms"]
assert w[-1]["start_ms"] <= max(times) < w[-1]["start_ms"] + p["window_ms"]
assert p.get("outside") == 0
PY
}
span_check nine 3287 3000 604800000   # nine years: weeks
span_check year 365 2000 86400000     # a year: days
span_check hours 0.125 1500 60000     # three hours: minutes
checks_done 0074-track_span
