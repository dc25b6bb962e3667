#!/usr/bin/python3
"""0062-track_engine_events - the engine's topic births reach the tracker and the live page.

A shifting stream (bench/shift/gen.py: 5 topics, then 70% of the documents from 5 new
ones) through the service with births=true and tracking on: the engine gives new topics
slots (births.c) and reports them (slda_track_engine_event); the service must keep
running (it used to look up the newborn's words with a NULL probability buffer and
crash), log the births, and serve them on /api/events with the topic's words. With
track.events.topic set, every event (the engine's and the tracker's) is also a JSON record on
that topic, keyed by model/topic, counted in streamlda_topic_events_total when delivered.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0062-")
    prefix = os.path.join(tmp, "shift")
    res = subprocess.run(["/usr/bin/python3", os.path.join(sc.SRC, "bench", "shift", "gen.py"),
                          "--docs", "8000", "--shift", "4000", prefix],
                         capture_output=True, text=True, timeout=120)
    check(res.returncode == 0, "gen.py", res.stderr[-300:])
    broker = sc.Broker(tmp, "documents,topic-events", partitions=1, brokers=1)
    props = ["topics=15", "births=true", "http.port=0", "status.ms=1000", "minibatch.docs=64",
             "snapshot.every.ms=1000", "snapshot.topic=", "track.warmup.docs=500",
             "track.events.topic=topic-events", "snapshot.dir=" + os.path.join(tmp, "snaps")]
    try:
        svc = sc.Service(tmp, broker.addr, props)
        res = subprocess.run([sc.BIN, "produce", "--brokers", broker.addr, "--topic", "documents",
                              "--partition", "0", prefix + ".txt"],
                             capture_output=True, text=True, timeout=300)
        check(res.returncode == 0, "produce the stream", res.stderr[-300:])
        sc.wait_for(lambda: svc.proc.poll() is not None or
                    svc.metric("streamlda_documents_total") >= 7900, 180, "stream trained")
        check(svc.proc.poll() is None, "the service is still running", svc.proc.poll(),
              svc.text()[-1500:])
        log = svc.text()
        births = [line for line in log.splitlines() if "topic birth topic=" in line]
        print("engine births logged:", len(births))
        check(births, "the engine gave new topics slots (births logged)")
        status, body = svc.get("/api/events")
        events = json.loads(body)["events"] if status == 200 else []
        engine = [e for e in events if e["kind"] == "birth" and "js" not in e]
        print("engine births on /api/events:", engine[:3])
        check(len(engine) >= 1 and all(len(e["words"]) >= 5 for e in engine),
              "engine births on /api/events, with the topic's words", len(engine))
        check("topic event: birth of topic" in log and "(engine)" in log,
              "the tracker logged them as engine events")
        # the last minibatches may still make events after the wait above: settle on a count
        # that the topic and the counter agree on, with nothing left to deliver, and check what
        # that moment saw (reading them again later raced with a late event)
        seen = {}

        def settled():
            n = svc.metric("streamlda_topic_events_total")
            recs = sc.reader.fetch_records(broker.addr, "topic-events")
            if svc.metric("streamlda_undelivered_records") == 0 and len(recs) == n and \
                    svc.metric("streamlda_topic_events_total") == n:
                seen.update(recs=recs, n=n)
                return True
            return False
        agreed = sc.wait_for(settled, 120, "events delivered and counted")
        recs = seen.get("recs") or sc.reader.fetch_records(broker.addr, "topic-events")
        published = [json.loads(v) for _, v, _ in recs]
        print("events on the topic:", len(published), published[:2])
        keys_ok = all(k.decode() == "streamlda/%d" % p["topic"] for (k, _, _), p in zip(recs, published))
        on_topic = {(p["kind"], p["topic"], p["update"]) for p in published}
        on_api = {(e["kind"], e["topic"], e["update"]) for e in events}
        check(published and keys_ok and on_api <= on_topic,
              "every event on /api/events is a record on track.events.topic, keyed model/topic",
              len(on_api), len(on_topic), sorted(on_api - on_topic)[:3])
        check(any(p["engine"] and p["kind"] == "birth" and len(p["words"].split()) >= 5
                  for p in published), "engine births on the topic, with their words")
        check(agreed and seen.get("n") == len(published),
              "streamlda_topic_events_total counts the delivered events",
              seen.get("n"), len(published), svc.metric("streamlda_topic_events_total"))
        if svc.proc.poll() is None:
            check(svc.stop() == 0, "SIGTERM -> exit 0")
    finally:
        broker.stop()
    return sc.done("0062-track_engine_events", tmp)


if __name__ == "__main__":
    raise SystemExit(main())
