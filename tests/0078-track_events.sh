#!/usr/bin/env bash
# 0078-track_events.sh - events that mean something: a stationary stream (bench/track/gen.py
# --shuffle-time: a year of 10,000 documents whose mixtures do not move with time), trained
# with the default tracking settings, raises no death and no rise or fall. Deaths are judged
# on the windows the charts show (days here), not the finest ring: in one-document minutes a
# topic of 8% 'died' (the old binary, hour windows: 5 deaths; with minute windows 7).
set -u
. "$(dirname "$0")/checks.sh"
GEN="${SLDA_SOURCE_DIR:?}/bench/track/gen.py"

for seed in 11 12; do
    python3 "$GEN" --docs 10000 --topics 10 --span-days 365 --seed "$seed" \
        --shape step,ramp,burst,late,fall --shuffle-time --out "$T/s$seed.jsonl"
    expect_rc 0 "train $seed" "$S" train -q -k 10 -X seed=1 -X births=false --time-field time \
        --snapshot-dir "$T/s$seed" --snapshot-every 500 "$T/s$seed.jsonl" -o "$T/m$seed.slda"
    expect_rc 0 "report $seed" "$S" report "$T/s$seed" --json "$T/r$seed.json"
    python3 - "$T/r$seed.json" <<'PY' && ok || fail "stationary stream $seed: false events"
import collections, json, sys
d = json.load(open(sys.argv[1]))
rep = collections.Counter(e["kind"] for e in d["events"])
trk = collections.Counter(e["kind"] for e in d.get("tracker_events", []))
print("report events", dict(rep), "tracker events", dict(trk))
assert trk["death"] == 0, trk
assert rep["rise"] == 0 and rep["fall"] == 0, rep
PY
done
checks_done 0078-track_events
