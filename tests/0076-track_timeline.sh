#!/usr/bin/env bash
# 0076-track_timeline.sh - `streamlda timeline SNAPSHOT FILE...`: every document scored under
# one snapshot, each topic's share per window of event time (issue 25, item 2). A synthetic
# stream with known topic-share curves (bench/track/gen.py: steps, ramps, a late topic), trained
# with snapshots, then scored under the last one from gzip and plain files at once: every
# document lands in a window (JSON and CSV agree, any thread count gives the same bytes), a
# record without its time is rejected with file:line and counted, and the shares follow the
# truth over the whole span (bench/track/mae.py, first windows included). The old binary had
# no way to get the timeline under one model (no such command).
set -u
. "$(dirname "$0")/checks.sh"
SRC=${SLDA_SOURCE_DIR:?}
GEN="$SRC/bench/track/gen.py"

python3 "$GEN" --docs 2000 --topics 5 --span-days 200 --seed 76 --shape step,ramp,late \
    --out "$T/s.jsonl" --truth "$T/truth.jsonl"
head -n 1000 "$T/s.jsonl" | gzip >"$T/a.jsonl.gz"
{
    tail -n +1001 "$T/s.jsonl"
    echo '{"id":"nt","text":"no time here at all"}'
} >"$T/b.jsonl"
expect_rc 0 "train" "$S" train -q -k 5 -X seed=1 --time-field time --snapshot-dir "$T/snaps" \
    --snapshot-every 1000 "$T/s.jsonl" -o "$T/m.slda"
expect_rc 0 "timeline" "$S" timeline -X threads=2 --time-field time "$T/m.slda" \
    "$T/a.jsonl.gz" "$T/b.jsonl" --json "$T/t.json" --csv "$T/t.csv"
says "summary" "2000 documents scored under .*m\.slda \(K=5, [0-9]+ updates\), 1 rejected, 200 windows of 86400 s"
says "the record without a time named" 'b\.jsonl:1001: time field "time": missing'
expect_rc 0 "timeline, one thread" "$S" timeline -X threads=1 --time-field time "$T/m.slda" \
    "$T/a.jsonl.gz" "$T/b.jsonl" --json "$T/t1.json"
check "any thread count: the same output" cmp -s "$T/t.json" "$T/t1.json"
python3 - "$T/t.json" "$T/t.csv" <<'PY' && ok || fail "timeline JSON/CSV"
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
w = d["windows"]
assert d["docs"] == 2000 and d["rejected"] == 1, (d["docs"], d["rejected"])
assert d["K"] == 5 and d["window_ms"] == 86400000
assert sum(x["docs"] for x in w) == 2000
assert len(rows) == len(w) == 200, (len(rows), len(w))
for x, r in zip(w, rows):
    assert int(r["start_ms"]) == x["start_ms"] and float(r["docs"]) == x["docs"]
    assert abs(sum(x["share"]) - 1) < 1e-3, sum(x["share"])
    for k in range(5):
        assert abs(float(r["topic_%d" % k]) - x["share"][k]) < 1e-5
PY
python3 "$SRC/bench/track/mae.py" "$T/truth.jsonl" "$T/t.json" --first 0.2 >"$T/mae" &&
    python3 - "$T/mae" <<'PY' && ok || fail "timeline against the truth: $(cat "$T/mae")"
import sys
f = dict(kv.split("=") for kv in open(sys.argv[1]).read().split())
print(f)
assert f["topics_aligned"] == "5/5"
assert float(f["mae"]) <= 0.03 and float(f["first_mae"]) <= 0.03
PY
# --window asks for a resolution and keeps every window
expect_rc 0 "timeline --window week" "$S" timeline --time-field time --window week \
    "$T/m.slda" "$T/s.jsonl" --csv "$T/w.csv"
python3 - "$T/w.csv" <<'PY' && ok || fail "weeks"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert 29 <= len(rows) <= 30 and sum(float(r["docs"]) for r in rows) == 2000, len(rows)
PY
# usage and failures
expect_rc 2 "no time field" "$S" timeline "$T/m.slda" "$T/s.jsonl"
says "no time field: says what is needed" "time-field NAME is needed"
expect_rc 1 "no snapshot" "$S" timeline --time-field time "$T/nope.slda" "$T/s.jsonl"
expect_rc 1 "no document" "$S" timeline --time-field time --json "$T/x.json" "$T/m.slda" \
    "$T/nope.jsonl"
check "nothing written when nothing was scored" test ! -e "$T/x.json"
checks_done 0076-track_timeline
