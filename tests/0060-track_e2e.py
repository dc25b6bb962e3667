#!/usr/bin/python3
"""0060-track_e2e - topic tracking through the service: event time, prevalence, restart, bad input.

A synthetic stream of 2000 JSON documents, 100 per hour of event time (field
"date", 2020-03-01 onwards), drawn from three word themes: before a known
event time (10.5 h in) themes A and B, after it mostly theme C. `streamlda
produce --time-field date --partition 0` sets the message timestamps and
keeps the order. Checked through the service on a `streamlda broker` cluster:
 - the status (/api/status, /metrics, the status line) reports the newest
   event time of the stream (2020, not the wall clock) and its lag;
 - the prevalence windows are the stream's hours, and the topic of theme C
   jumps within one window of the change; once the stream is trained, every
   window is scored again under the model of the moment (/api/prevalence
   "rescored", /metrics streamlda_track_rescored_windows_total);
 - output records carry event_time and a warm-up flag on the first ones;
 - bad times: one far in the future (clamped, counted, the windows intact),
   one going back (late, counted), one without the field (counted);
 - the tracking state beside each snapshot (<snapshot>.track.json) restores
   on restart: the windows and the topic ids survive, and new documents
   continue the same topic ids;
 - a corrupt tracking state, and a snapshot without one (a gap), are reported
   and tracking restarts from the snapshot: no crash; the newest event time
   still comes back, from the snapshot's header ("event_ms").
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

PROPS = ["topics=3", "http.port=0", "status.ms=1000", "minibatch.docs=50", "minibatch.ms=300",
         "snapshot.every.ms=800", "snapshot.topic=", "input.time.field=date",
         "track.warmup.docs=300", "output.topic=out", "seed=7"]


def theme_topic(topics, theme):
    """The topic id whose top words hold most of the theme's words."""
    best, score = None, -1
    for t in topics["topics"]:
        s = sum(1 for w, _ in t["words"] if w in sc.THEMES[theme])
        if s > score:
            best, score = t["id"], s
    return best, score


def caught_up(svc, n):
    return svc.metric("streamlda_documents_total") >= n


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0060-")
    rng = random.Random(60)
    snapdir = os.path.join(tmp, "snaps")
    broker = sc.Broker(tmp, "documents,out", partitions=1, brokers=1)
    docs = sc.dated_docs(rng, 0, 2000)
    # bad times in the stream: far future, backwards (late), missing
    docs[1500]["date"] = "2999-01-01T00:00:00Z"
    docs[1600]["date"] = sc.T0 - 3600 * 24 * 400  # 400 days back: before the ring
    docs[1700]["date"] = sc.T0 + 3 * 3600          # back to hour 3: late, inside the ring
    del docs[1800]["date"]
    try:
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run1")
        res = sc.produce_dated(broker, tmp, docs[:1500], "1")
        check("messages delivered" in res.stderr, "produce reports its deliveries")
        # the future and missing ones through kcat (no timestamp from the field)
        raw = os.path.join(tmp, "raw.jsonl")
        sc.write_jsonl(raw, [docs[1500]])
        sc.produce_kcat(broker.addr, "documents", raw)
        res = sc.produce_dated(broker, tmp, docs[1501:1800], "2")
        sc.write_jsonl(raw, [docs[1800]])
        sc.produce_kcat(broker.addr, "documents", raw)
        sc.produce_dated(broker, tmp, docs[1801:], "3")
        bad = os.path.join(tmp, "bad.jsonl")
        sc.write_jsonl(bad, [{"id": "x", "text": "no date here"}])
        res = subprocess.run([sc.BIN, "produce", "--brokers", broker.addr, "--topic", "documents",
                              "--time-field", "date", "--partition", "0", bad],
                             capture_output=True, text=True, timeout=60)
        check(re.search(r"bad\.jsonl:1: time field \"date\": missing: line skipped", res.stderr),
              "produce --time-field: a line without the field is reported as FILE:LINE and skipped",
              res.stderr.strip())
        sc.wait_for(lambda: caught_up(svc, 1990), 90, "run 1 trained the stream")
        sc.wait_for(lambda: (svc.api("status") or {}).get("docs", 0) >= 1990, 10, "page status")
        st = svc.api("status")
        print("status:", st)
        newest = sc.T0 + 1999 * 36
        check(st and st["event_ms"] == newest * 1000, "newest event time = the stream's newest",
              st and st["event_ms"], newest * 1000)
        check(st and st["event_lag_s"] > 86400 * 365, "event-time lag: years behind the clock",
              st and st["event_lag_s"])
        m = svc.metrics()
        check(m.get("streamlda_event_time_seconds") == newest, "/metrics event time",
              m.get("streamlda_event_time_seconds"))
        check(m.get("streamlda_event_time_lag_seconds", 0) > 86400 * 365, "/metrics event-time lag")
        check(m.get("streamlda_event_time_clamped_total") == 1, "far-future time clamped, counted",
              m.get("streamlda_event_time_clamped_total"))
        check(m.get("streamlda_event_time_missing_total") == 1, "missing time field counted",
              m.get("streamlda_event_time_missing_total"))
        # exactly the two sent late: --partition 0 kept the other 1997 in order
        check(m.get("streamlda_event_time_late_total", 0) == 2,
              "late documents counted, and no other: the ordered stream stayed in order",
              m.get("streamlda_event_time_late_total"))
        log = svc.text()
        check("is more than a day ahead of the clock" in log, "far-future warning logged")
        check(re.search(r"status: .* event time 2020-03-01T\d\d:\d\d:\d\dZ \(lag \d+ s\)", log),
              "status line: event time and lag")
        prev = svc.api("prevalence") or {"windows": []}
        topics = svc.api("topics") or {"K": 0, "topics": []}
        starts = [w["start"] for w in prev["windows"]]
        print("windows:", len(starts), "first", starts[:2], "docs", [w["docs"] for w in prev["windows"]])
        check(len(starts) == 20 and starts[0] == sc.T0 * 1000 and starts[-1] == (sc.T0 + 19 * 3600) * 1000,
              "prevalence windows are the stream's 20 hours (not the wall clock)", len(starts))
        c, score = theme_topic(topics, "C")
        check(score >= 5, "a topic learned theme C", c, score)
        share = [w["share"][c] for w in prev["windows"]] if c is not None else []
        print("share of topic %s (theme C) per hour:" % c, " ".join("%.2f" % s for s in share))
        # the mixtures are the model's at training time, so the first hours (a young
        # model) are noisy: the change is where the share crosses the midpoint
        before, after = sum(share[:8]) / 8, sum(share[12:]) / max(1, len(share[12:]))
        jump = next((i for i, s in enumerate(share) if s > (before + after) / 2), None)
        check(jump in (10, 11), "theme C jumps within one window of the change (window 10)", jump)
        check(after > 2 * before and after > 0.5, "theme C: share before vs after the change",
              round(before, 3), round(after, 3))
        check(all(len(t["words"]) == 10 for t in topics["topics"]) and topics["K"] == 3,
              "/api/topics: 3 topics with 10 words each")
        # the timeline under one model: with the stream trained, every window's sample is
        # scored again under the model of the moment, off the training path
        def all_rescored():
            p = svc.api("prevalence") or {"windows": []}
            return p["windows"] and all(w.get("rescored") for w in p["windows"])
        check(sc.wait_for(all_rescored, 60, "every window rescored"),
              "every prevalence window scored again under the model of the moment")
        check(svc.metric("streamlda_track_rescored_windows_total") >= 20,
              "/metrics counts the windows scored again",
              svc.metric("streamlda_track_rescored_windows_total"))
        prev = svc.api("prevalence") or {"windows": []}
        share = [w["share"][c] for w in prev["windows"]] if c is not None else []
        print("rescored share of topic %s per hour:" % c, " ".join("%.2f" % s for s in share))
        before, after = sum(share[:8]) / 8, sum(share[12:]) / max(1, len(share[12:]))
        check(after > 2 * before and after > 0.5, "rescored: theme C before vs after the change",
              round(before, 3), round(after, 3))
        # output records: event_time and warm-up
        res = subprocess.run(["kcat", "-C", "-b", broker.addr, "-t", "out", "-o", "beginning", "-e",
                              "-q"], capture_output=True, text=True, timeout=60)
        recs = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
        check(len(recs) >= 1990, "output records", len(recs))
        byid = {r["id"]: r for r in recs}
        r5 = byid.get("d5", {})
        check(r5.get("event_time") == "2020-03-01T00:03:00Z" and r5.get("warmup") is True,
              "an early record: its event time and warmup: true", r5)
        r1999 = byid.get("d1999", {})
        check(r1999.get("event_ms") == newest * 1000 and "warmup" not in r1999,
              "a late record: its event time, no warmup flag", r1999)
        check(svc.stop() == 0, "run 1: SIGTERM -> exit 0")
        snaps = sc.snapshots(snapdir, "streamlda")
        if not check(bool(snaps), "run 1 wrote snapshots"):
            return sc.done("0060-track_e2e", tmp)
        side = snaps[-1] + ".track.json"
        check(os.path.exists(side), "tracking state beside the newest snapshot", side)
        state = {}
        if os.path.exists(side):
            with open(side) as f:
                state = json.load(f)
        hours = [t for t in state.get("tiers", []) if t["window_ms"] == 3600000]
        check(state.get("K") == 3 and hours and len(hours[0]["prevalence"]) == 20 and
              state["newest_ms"] == newest * 1000, "sidecar: K, 20 hour windows, newest event time")
        stale = [n for n in os.listdir(snapdir) if n.endswith(".track.json") and
                 not os.path.exists(os.path.join(snapdir, n[:-len(".track.json")]))]
        check(not stale, "no tracking state outlives its snapshot (pruned together)", stale)

        # restart: the state comes back, ids stay
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run2")
        sc.wait_for(lambda: "tracking state loaded from" in svc.text(), 30, "restored state")
        check("tracking state loaded from" in svc.text(), "run 2: tracking state restored")
        prev2 = sc.wait_for(lambda: svc.api("prevalence"), 20, "page")
        check(prev2 and [w["start"] for w in prev2["windows"]] == starts,
              "run 2: the 20 windows are back before any new document")
        more = sc.dated_docs(rng, 2000, 400)
        sc.produce_dated(broker, tmp, more, "4")
        sc.wait_for(lambda: caught_up(svc, 400), 60, "run 2 trained")
        sc.wait_for(lambda: len((svc.api("prevalence") or {"windows": []})["windows"]) >= 24, 10,
                    "page windows")
        prev3 = svc.api("prevalence") or {"windows": [{"start": 0, "share": [0, 0, 0]}]}
        topics3 = svc.api("topics") or {"K": 0, "topics": []}
        c3, _ = theme_topic(topics3, "C")
        check(c3 == c, "theme C keeps its topic id across the restart", c, c3)
        check(len(prev3["windows"]) == 24 and prev3["windows"][0]["start"] == sc.T0 * 1000,
              "run 2: windows continue (24 hours)", len(prev3["windows"]))
        check(prev3["windows"][-1]["share"][c3] > 0.5, "run 2: theme C dominant in the new hours")
        check(svc.stop() == 0, "run 2: SIGTERM -> exit 0")

        # a corrupt tracking state: reported, tracking starts afresh, no crash
        snaps = sc.snapshots(snapdir, "streamlda")
        with open(snaps[-1] + ".track.json", "w") as f:
            f.write('{"format":1,"K":3,"window_ms":3600000,"windows":168,"newest_ms":')
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run3")
        sc.wait_for(lambda: "start afresh" in svc.text(), 30, "corrupt state reported")
        log = svc.text()
        check(re.search(r"tracking state \".*\.track\.json\": JSON: .* start afresh", log),
              "run 3: corrupt tracking state named, with the reason", log[-600:])
        st = sc.wait_for(lambda: svc.api("status"), 20, "status")
        check(st is not None and (svc.api("prevalence") or {}).get("windows") == [],
              "run 3: serving, with empty windows (no wrong chart)")
        check(svc.stop() == 0, "run 3: SIGTERM -> exit 0")
        # a gap: the newest snapshot without its state
        snaps = sc.snapshots(snapdir, "streamlda")
        for s in snaps:
            if os.path.exists(s + ".track.json"):
                os.unlink(s + ".track.json")
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run4")
        sc.wait_for(lambda: "no tracking state beside" in svc.text(), 30, "gap reported")
        check("no tracking state beside" in svc.text(), "run 4: missing state reported")
        st = sc.wait_for(lambda: svc.api("status"), 20, "status")
        newest2 = sc.T0 + 2399 * 36
        check(st and st["event_ms"] == newest2 * 1000,
              "run 4: the newest event time comes from the snapshot's header",
              st and st["event_ms"], newest2 * 1000)
        check(svc.stop() == 0, "run 4: SIGTERM -> exit 0")
    finally:
        broker.stop()
    return sc.done("0060-track_e2e", tmp)


if __name__ == "__main__":
    raise SystemExit(main())
