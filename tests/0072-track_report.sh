#!/usr/bin/env bash
# 0072-track_report.sh - `streamlda report` over a snapshot directory written by
# `train --snapshot-dir`: a corrupt file, a snapshot of another K, one of another run, one of
# another model, a badly named file, a name that disagrees with its header and a missing
# snapshot are each reported with the file named and kept out of the charts; the HTML has one
# chart per topic and no external resource; a stream whose themes change makes events; event
# time comes from the snapshots' headers (event_ms) and prevalence from the tracker's sidecars
# (train --time-field); a corrupt or missing sidecar is reported and costs only its windows;
# exit codes.
set -u
. "$(dirname "$0")/checks.sh"
SRC=${SLDA_SOURCE_DIR:?}
A=("$SRC"/examples/janeausten/*.txt)
# one visit per document (replay=off): the snapshot names below are update counts, and
# second visits of the old themes' documents would slow the takeover of the shift stream
R=(-X replay=off)
# the snapshot names below are also the update counts of 32-document minibatches
M=(-X minibatch.docs=32)
snap() { printf '%s/streamlda-%020d.slda' "$1" "$2"; }

"$S" train -q -k 8 -X seed=3 "${R[@]}" "${M[@]}" --snapshot-dir "$T/d" --snapshot-every 300 "${A[@]}" >/dev/null 2>&1 &&
    ok || fail "train --snapshot-dir"
ls "$T/d"
[ "$(ls "$T/d" | grep -c '^streamlda-[0-9]\{20\}\.slda$')" -eq 7 ] && ok || fail "wanted 7 snapshots"
"$S" train -q -k 5 -X seed=3 "${R[@]}" "${M[@]}" --snapshot-dir "$T/k5" --snapshot-every 300 "${A[@]}" >/dev/null 2>&1
"$S" train -q -k 8 -X seed=9 "${R[@]}" "${M[@]}" --snapshot-dir "$T/run2" --snapshot-every 300 "${A[@]}" >/dev/null 2>&1

# the full directory first: every snapshot used, nothing skipped
"$S" report "$T/d" --json "$T/full.json" 2>"$T/err" && ok || fail "report (clean): $(cat "$T/err")"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['snapshots'])==7 and not d['skipped'], d['skipped']" \
    "$T/full.json" && ok || fail "clean directory: not 7 snapshots used"

cp "$(snap "$T/k5" 19)" "$(snap "$T/d" 19)"         # another K
cp "$(snap "$T/run2" 29)" "$(snap "$T/d" 29)"       # another run of the same model
head -c 2000 "$(snap "$T/d" 47)" >"$T/x" && mv "$T/x" "$(snap "$T/d" 47)"   # truncated
rm "$(snap "$T/d" 38)"                               # a gap
cp "$(snap "$T/d" 57)" "$T/d/other-00000000000000000057.slda"    # another model
cp "$(snap "$T/d" 57)" "$(snap "$T/d" 58)"           # the name says 58, the header 57
echo "not a snapshot" >"$T/d/notes.slda"             # not a snapshot name
"$S" report "$T/d" --html "$T/r.html" --json "$T/r.json" 2>"$T/err"
rc=$?
cat "$T/err"
[ $rc -eq 0 ] && ok || fail "report exit $rc"
expect() { grep -q "$1" "$T/err" && ok || fail "no message: $1"; }
expect "skipped $T/d/streamlda-00000000000000000019.slda: K=5, the newest snapshot has K=8"
expect "skipped $T/d/streamlda-00000000000000000029.slda: another"
expect "skipped $T/d/streamlda-00000000000000000047.slda: .*SLDA_ERR_"
expect "skipped $T/d/streamlda-00000000000000000058.slda: its header says 57 updates, its name 58"
expect "skipped $T/d/other-00000000000000000057.slda: a snapshot of model \"other\""
expect "skipped $T/d/notes.slda: not a snapshot file name"
expect "3 snapshots of model \"streamlda\" (K=8), 6 skipped"

python3 - "$T/r.json" <<'PY' && ok || fail "report JSON"
import json, sys
d = json.load(open(sys.argv[1]))
files = [s["file"] for s in d["snapshots"]]
assert files == ["streamlda-%020d.slda" % t for t in (10, 57, 59)], files
# 19..47 and 58 were skipped: both steps are gaps (a dashed line, never a made-up point)
assert [s["gap_before"] for s in d["snapshots"]] == [False, True, True], d["snapshots"]
assert d["K"] == 8 and len(d["topics"]) == 8
for t in d["topics"]:
    assert len(t["weights"]) == 3 and len(t["drift"]) == 3, t
    assert t["drift"][0] is None and all(0 <= x <= 1 for x in t["drift"][1:]), t["drift"]
    assert t["weight"] == t["weights"][-1]
    assert len(t["words"]) == 10
for i in range(3):
    assert abs(sum(t["weights"][i] for t in d["topics"]) - 1) < 1e-4
assert len(d["skipped"]) == 6, d["skipped"]
assert d["time"] == "updated"
print("json ok")
PY

charts=$(grep -o 'class="chart"' "$T/r.html" | wc -l)
[ "$charts" -eq 8 ] && ok || fail "HTML has $charts charts, wanted one per topic (8)"
if grep -Eiq 'https?://|<script|<link|src=|url\(|@import' "$T/r.html"; then
    fail "HTML refers to something external: $(grep -Eio 'https?://[^"]*|<script|<link|src=|url\(|@import' "$T/r.html" | head -3)"
else
    ok
fi
grep -q 'notes.slda: not a snapshot file name' "$T/r.html" && ok || fail "HTML does not list the skipped files"
python3 -c "import html.parser,sys; p=html.parser.HTMLParser(); p.feed(open(sys.argv[1]).read())" "$T/r.html" &&
    ok || fail "HTML does not parse"

# a stream whose themes change after a third: the slots are taken over, events say so (the
# drift of an event is per snapshot step: a snapshot every 400 documents sees the takeover).
# global.rows=decay: with counts (and rho.min=0) the old themes' words keep their running
# counts, so the slots change more gradually (the new themes lead only by the end): no
# 400-document step reaches 0.5, and the accumulated drift passes 0.5 while the old words lead
for i in $(seq 1 200); do
    echo "apple banana cherry fruit orchard pear juice harvest"
    echo "engine piston turbine motor gearbox fuel torque diesel"
done >"$T/shift.txt"
for i in $(seq 1 400); do
    echo "violin cello orchestra symphony concerto sonata melody tempo"
    echo "goal striker referee penalty stadium league match keeper"
done >>"$T/shift.txt"
"$S" train -q -k 2 -X text.stopwords=none -X seed=1 -X minibatch.docs=50 -X global.rows=decay "${R[@]}" \
    --snapshot-dir "$T/shift" \
    --snapshot-every 400 "$T/shift.txt" >/dev/null 2>&1 && ok || fail "train shift"
# the takeover comes from the snapshot at 400 documents: inside the default warm-up (1000), so
# no event by default; with --warmup 300 it is one
"$S" report "$T/shift" --json "$T/shift0.json" 2>"$T/err" && ok || fail "report shift"
python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['events']; assert not e, e" "$T/shift0.json" &&
    ok || fail "events inside the warm-up"
"$S" report "$T/shift" --warmup 300 --json "$T/shift.json" --html "$T/shift.html" 2>"$T/err" &&
    ok || fail "report shift --warmup 300"
python3 - "$T/shift.json" <<'PY' && ok || fail "no takeover event"
import json, sys
d = json.load(open(sys.argv[1]))
kinds = {}
for e in d["events"]:
    kinds.setdefault(e["kind"], []).append(e)
print({k: len(v) for k, v in kinds.items()})
taken = kinds.get("taken", []) + kinds.get("change", [])
assert taken, d["events"]
e = taken[0]
assert e["js"] >= 0.5, e
# the first takeover happens once the new themes arrive (after 400 of 1200 documents)
snap = [s for s in d["snapshots"] if s["file"] == e["snapshot"]][0]
assert snap["docs"] > 400, snap
assert any(w in e["words"] for w in ("violin", "goal", "orchestra", "striker")), e["words"]
PY

# the same stream with a snapshot every 100 documents: no single step reaches 0.5 (0.44-0.49 at
# most), the change accumulates over several: a drift event, measured from the slot's words at
# the end of the warm-up
"$S" train -q -k 2 -X text.stopwords=none -X seed=1 -X minibatch.docs=50 -X global.rows=decay "${R[@]}" \
    --snapshot-dir "$T/shift100" \
    --snapshot-every 100 "$T/shift.txt" >/dev/null 2>&1 && ok || fail "train shift100"
"$S" report "$T/shift100" --warmup 300 --json "$T/shift100.json" 2>"$T/err" && ok || fail "report shift100"
python3 - "$T/shift100.json" <<'PY' && ok || fail "no drift event for a takeover over several snapshots"
import json, sys
d = json.load(open(sys.argv[1]))
steps = [x for t in d["topics"] for x in t["drift"] if x is not None]
assert max(steps) < 0.5, max(steps)
drift = [e for e in d["events"] if e["kind"] == "drift"]
assert sorted(e["topic"] for e in drift) == [0, 1], d["events"]
for e in drift:
    assert e["js"] >= 0.5, e
    assert "(was at streamlda-00000000000000000006.slda: " in e["words"], e["words"]
    assert any(w in e["words"].split("(")[0] for w in ("violin", "goal", "orchestra", "striker")), e
PY

# event time from a JSON field: the tracker's sidecars give the axis and prevalence by day
python3 - "${A[@]}" >"$T/timed.jsonl" <<'PY'
import json, sys
n = 0
for path in sys.argv[1:]:
    for line in open(path):
        if line.strip():
            day, hour = divmod(n, 24)
            print(json.dumps({"id": str(n), "time": "2020-01-%02dT%02d:00:00Z" % (1 + day % 28, hour), "text": line.strip()}))
            n += 1
            if n == 24 * 28:
                sys.exit(0)
PY
# one far in the future (clamped to the newest time), one going back a year (late, and older
# than the 60 day windows kept: counted there, and kept in the weeks), one without a time
# (rejected with its line)
echo '{"id":"future","time":"2099-01-01T00:00:00Z","text":"anne elliot captain"}' >>"$T/timed.jsonl"
echo '{"id":"back","time":"2019-01-01T00:00:00Z","text":"anne elliot captain"}' >>"$T/timed.jsonl"
echo '{"id":"bad","time":"not a time","text":"anne elliot"}' >>"$T/timed.jsonl"
"$S" train -q -k 4 -X track.window=day -X track.windows=60 --time-field time --snapshot-dir "$T/tm" \
    --snapshot-every 200 "$T/timed.jsonl" >/dev/null 2>"$T/err" && ok || fail "train --time-field: $(cat "$T/err")"
grep -q "timed.jsonl:$(wc -l <"$T/timed.jsonl"): .*not a time" "$T/err" &&
    ok || fail "bad time not reported with file:line: $(cat "$T/err")"
grep -q "event time: newest 2020-01-28T23:00:00Z, 1 late .*, 1 in the far future (clamped); prevalence: [0-9]* documents, 0 left out (no mixture), 1 older than the 60 finest windows kept (counted in the coarser ones)" "$T/err" &&
    ok || fail "event-time summary: $(grep 'event time' "$T/err")"
ls "$T/tm" | grep -q '\.slda\.track\.json$' && ok || fail "no tracker sidecar written"
"$S" report "$T/tm" --json "$T/tm.json" --html "$T/tm.html" 2>"$T/err" && ok || fail "report timed: $(cat "$T/err")"
python3 - "$T/tm.json" <<'PY' && ok || fail "timed report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["time"] == "event", d["time"]
assert all(s["event_time"] for s in d["snapshots"])
# event times, not the wall clock: January 2020, increasing
ts = [s["time_ms"] for s in d["snapshots"]]
assert 1577836800000 <= ts[0] and ts[-1] < 1580515200000 and ts == sorted(ts), ts
w = d["prevalence"]["windows"]
assert d["prevalence"]["window_ms"] == 86400000 and len(w) == 28, (d["prevalence"]["window_ms"], len(w))
# 24 lines a day, less the few paragraphs left without tokens
assert all(20 <= x["docs"] <= 24 for x in w), [x["docs"] for x in w]
assert all(abs(sum(x["share"]) - 1) < 1e-3 for x in w)
# nothing left out: the document of a year before is in the weeks, and the days shown say
# one document of the stream lies outside them
tiers = {t["window_ms"]: t for t in d["prevalence"]["tiers"]}
assert set(tiers) == {86400000, 604800000}, tiers
assert tiers[604800000]["windows"] == 6, tiers
assert d["prevalence"]["outside"] == 1, d["prevalence"]["outside"]
PY
[ "$(grep -o 'class="prev"' "$T/tm.html" | wc -l)" -eq 5 ] && ok || fail "wanted 4 prevalence charts and the documents chart"

# a corrupt sidecar: reported and not used; the snapshots' headers still carry their event time
# (event_ms), so the axis stays event time and only that state's windows are missing
side=$(ls "$T/tm"/*.track.json | head -1)
echo '{"K":' >"$side"
"$S" report "$T/tm" --json "$T/tm2.json" 2>"$T/err" && ok || fail "report with a corrupt sidecar"
grep -q "ignored $side: not a JSON object" "$T/err" && ok || fail "corrupt sidecar not reported: $(cat "$T/err")"
python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); assert b['time']=='event' and [s['time_ms'] for s in a['snapshots']]==[s['time_ms'] for s in b['snapshots']], b['snapshots']" \
    "$T/tm.json" "$T/tm2.json" && ok || fail "event time lost with a corrupt sidecar"
# no sidecars at all: event time from the headers, no prevalence
rm "$T/tm"/*.track.json
"$S" report "$T/tm" --json "$T/tm3.json" --html "$T/tm3.html" 2>"$T/err" && ok || fail "report without sidecars"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['time']=='event' and not d['prevalence']['windows'], d['time']" \
    "$T/tm3.json" && ok || fail "report without sidecars: not event time"
! grep -q 'class="prev"' "$T/tm3.html" && ok || fail "prevalence charts without prevalence"
# a state with one window and one event of the service's tracker: both reach the report
newest=$(ls "$T/tm"/*.slda | tail -1)
upd=$(basename "$newest" .slda | sed 's/.*-0*//')
cat >"$newest.track.json" <<JSON
{"format":1,"model":"streamlda","update":$upd,"K":4,"window_ms":86400000,"windows":60,
 "newest_ms":1580256000000,"prevalence":[[1580169600000,10,[1,2,3,4]]],
 "events":[{"kind":"birth","topic":2,"event_ms":1580256000000,"event_time":"2020-01-29T00:00:00Z",
            "update":$upd,"js":0.91,"words":["violin","cello"]},
           {"kind":"merge","topic":1,"other":9,"event_ms":1,"update":1,"words":[]}]}
JSON
"$S" report "$T/tm" --json "$T/tm4.json" --html "$T/tm4.html" 2>"$T/err" && ok || fail "report with a state: $(cat "$T/err")"
python3 - "$T/tm4.json" <<'PY' && ok || fail "tracker events / one window"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["tracker_events"]
# the merge names topic 9 of a K=4 model: kept without its partner, not invented
assert [(e["kind"], e["topic"], e["words"]) for e in ev] == [("birth", 2, "violin cello"), ("merge", 1, "")], ev
assert "other" not in ev[1], ev
w = d["prevalence"]["windows"]
assert len(w) == 1 and w[0]["docs"] == 10 and abs(w[0]["share"][3] - 0.4) < 1e-9, w
PY
grep -q 'violin cello' "$T/tm4.html" && ok || fail "tracker event not in the HTML"

# --model other: its only file is a copy of a "streamlda" snapshot (the header says so)
"$S" report "$T/d" --model other --json "$T/o.json" 2>"$T/err"
[ $? -eq 1 ] && ok || fail "--model other: exit status not 1"
grep -q "skipped $T/d/other-00000000000000000057.slda: its header names model \"streamlda\"" "$T/err" &&
    ok || fail "--model other: $(cat "$T/err")"
grep -q 'no usable snapshot of model "other"' "$T/err" && ok || fail "--model other: no final message"

# exit codes
mkdir "$T/empty"
"$S" report "$T/empty" --json "$T/e.json" 2>"$T/err"
[ $? -eq 1 ] && ok || fail "empty directory: exit status not 1"
grep -q "no snapshot" "$T/err" && ok || fail "empty directory: $(cat "$T/err")"
"$S" report "$T/nodir" --json "$T/e.json" 2>"$T/err"
[ $? -eq 1 ] && ok || fail "missing directory: exit status not 1"
grep -q "nodir" "$T/err" && ok || fail "missing directory not named"
"$S" report "$T/d" 2>/dev/null
[ $? -eq 2 ] && ok || fail "no --html/--json: exit status not 2"
"$S" report "$T/d" --json "$T/empty" 2>/dev/null
[ $? -eq 1 ] && ok || fail "--json naming a directory: exit status not 1"

"$S" train -q --snapshot-dir "$T/x" --snapshot-every x "$T/shift.txt" >/dev/null 2>&1
[ $? -eq 2 ] && ok || fail "--snapshot-every x: exit status not 2"
"$S" train -q --snapshot-every 10 "$T/shift.txt" >/dev/null 2>&1
[ $? -eq 2 ] && ok || fail "--snapshot-every without --snapshot-dir: exit status not 2"
echo x >"$T/afile"
"$S" train -q --snapshot-dir "$T/afile" "$T/shift.txt" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && ok || fail "--snapshot-dir naming a file: exit status not 1"
grep -q 'not a directory' "$T/err" && ok || fail "--snapshot-dir naming a file: $(cat "$T/err")"

checks_done 0072-track_report
