#!/usr/bin/python3
"""0051-kafka_backpressure - SIGTERM, health and group membership while Produce requests fail; fatal errors.

The old service blocked in a loop while the producer queue was full: SIGTERM was
ignored (over 25 s), /healthz said 200 throughout, and the consumer, no longer polled,
dropped out of its group after max.poll.interval.ms. A fatal Kafka error only turned
/healthz red. On the mock cluster (`streamlda broker --control`), with a producer queue
of 20 messages (kafka.queue.buffering.max.messages) and output.topic on:
  1. normal traffic is trained and its outputs delivered;
  2. every Produce request fails (REQUEST_TIMED_OUT) while a minibatch's outputs are
     produced: the service pauses consumption but keeps polling (no "maximum poll
     interval exceeded" in its log once its /healthz says nothing was delivered for
     twice max.poll.interval.ms),
     /healthz turns 503 naming the stall, nothing is committed past the undelivered
     records; then Produce recovers: every output is delivered, /healthz is 200 again
     and new documents are trained;
  3. Produce fails again and SIGTERM arrives: the service exits 1 once shutdown.timeout.ms
     has passed, saying so and that the final snapshot was not written (the old one never
     exited while Produce failed);
     after a restart (Produce healthy) the model counts every produced document exactly
     once and every document has an output record;
  4. an idempotent producer with enable.gapless.guarantee meets OUT_OF_ORDER_SEQUENCE_NUMBER,
     a fatal error: the service exits 1 with a message naming it, and writes no snapshot
     after it.
Every wait is on a condition (a metric, /healthz, a log line, an exit), with generous limits
that only end a failing run: a fixed deadline failed on a busy machine.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

PROPS = ["topics=4", "http.port=0", "status.ms=1000", "minibatch.docs=1000", "minibatch.ms=3000",
         "snapshot.every.ms=500", "snapshot.topic=", "output.topic=mixtures",
         "kafka.queue.buffering.max.messages=20", "health.stall.ms=2000",
         "shutdown.timeout.ms=3000", "kafka.max.poll.interval.ms=7000"]


def stalled_s(svc):
    """How long /healthz says nothing has been delivered ("none delivered for N s"), or 0."""
    m = re.search(r"none delivered for (\d+) s", svc.get("/healthz")[1])
    return int(m.group(1)) if m else 0


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0051-")
    with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")) as f:
        lines = [line.strip() for line in f if len(line.strip()) > 200]  # never all stop words
    broker = sc.Broker(tmp, "documents,mixtures,streamlda.deadletter", control=True)
    produced = [0]

    def produce(docs, tag):
        produced[0] += sc.produce_lines(broker.addr, tmp, docs, tag)

    def dead(m):
        return sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))

    def accounted(svc):  # trained + dead-lettered (a paragraph of stop words only)
        m = svc.metrics()
        return m.get("streamlda_documents_total", 0) + dead(m)

    snapdir = os.path.join(tmp, "snaps")
    svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run1")
    try:
        # 1: normal
        produce(lines[0:100], 1)
        ok = sc.wait_for(lambda: accounted(svc) >= 100 and svc.metric("streamlda_outputs_total") ==
                         svc.metric("streamlda_documents_total"), 60, "part 1 outputs")
        check(ok, "part 1 trained and its outputs delivered", svc.metric("streamlda_outputs_total"))

        # 2: Produce fails while the next minibatch's outputs go out
        produce(lines[100:400], 2)
        broker.control("errors Produce 100000 REQUEST_TIMED_OUT")
        red = sc.wait_for(lambda: svc.get("/healthz")[0] == 503, 60, "/healthz 503")
        status = svc.get("/healthz")
        check(red and ("stalled" in status[1] or "paused" in status[1]),
              "/healthz 503 names the stall", status)
        m = svc.metrics()
        check(m.get("streamlda_undelivered_records", 0) > 0, "undelivered records shown",
              m.get("streamlda_undelivered_records"))
        # until the service itself has seen nothing delivered for over twice
        # max.poll.interval.ms (its /healthz says for how long)
        stalled = sc.wait_for(lambda: stalled_s(svc) > 2 * 7, 120, "a stall of 15 s")
        check(stalled, "the producer stalled for over twice max.poll.interval.ms", svc.get("/healthz"))
        log = svc.text()
        check("poll interval" not in log.lower() and "max_poll_exceeded" not in log.lower(),
              "still polling: no maximum poll interval exceeded",
              [l for l in log.splitlines() if "poll" in l.lower()][:3])
        check(svc.proc.poll() is None, "service alive while Produce fails")
        broker.control("clear Produce")
        ok = sc.wait_for(lambda: accounted(svc) >= 400 and svc.metric("streamlda_outputs_total") ==
                         svc.metric("streamlda_documents_total"), 60, "part 2 outputs")
        check(ok, "every output delivered after recovery", svc.metric("streamlda_outputs_total"),
              accounted(svc))
        green = sc.wait_for(lambda: svc.get("/healthz")[0] == 200, 30, "/healthz 200")
        check(green, "/healthz 200 again", svc.get("/healthz"))
        produce(lines[400:450], 3)
        ok = sc.wait_for(lambda: accounted(svc) >= 450, 60, "part 3 trained")
        check(ok, "consumption resumed", accounted(svc))
        check("maximum poll interval" not in svc.text().lower(), "stayed in the group")

        # 3: SIGTERM while Produce fails
        produce(lines[450:550], 4)
        broker.control("errors Produce 100000 REQUEST_TIMED_OUT")
        sc.wait_for(lambda: svc.metric("streamlda_undelivered_records") > 0, 30, "outputs stuck")
        # the old service never ended while Produce failed: 120 s only ends a failing run;
        # the message says the wait ended at shutdown.timeout.ms, not at a recovery
        rc = svc.stop(timeout=120)
        check(rc == 1, "SIGTERM while records are undelivered -> exit 1", rc)
        check("final snapshot not written" in svc.text() and
              "undelivered after shutdown.timeout.ms=3000" in svc.text(),
              "says the final snapshot was not written after shutdown.timeout.ms",
              [l for l in svc.text().splitlines() if "final snapshot" in l][-1:])
        broker.control("clear Produce")
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run2")
        # caught up: every document in the model (the lag gauge read 0 while a partition's
        # watermark was still unknown, and run 2 was stopped before reading it)
        sc.wait_for(lambda: svc.metric("streamlda_snapshots_total") >= 1 and
                    svc.metric("streamlda_undelivered_records") == 0 and
                    svc.metric("streamlda_model_documents") >= produced[0], 60, "run 2 caught up")
        dead2 = dead(svc.metrics())
        rc = svc.stop()
        check(rc == 0, "run 2: SIGTERM -> exit 0", rc)
        header = sc.newest_header(snapdir, "streamlda")
        check(header and header["docs"] == produced[0] and dead2 == 0,
              "every document exactly once in the model", header and header["docs"], produced[0])
        ids = set()
        for key, value, hdrs in sc.reader.fetch_records(broker.addr, "mixtures"):
            h = {k: v.decode() for k, v in hdrs}
            ids.add((h.get("source.partition"), h.get("source.offset")))
        check(header and len(ids) == header["docs"], "every trained document has an output record",
              len(ids), header and header["docs"])

        # 4: a fatal producer error
        fdir = os.path.join(tmp, "fatal")
        # the errors wait for the service's first Produce requests (nothing else produces now):
        # injected after its start, they came after its first snapshot on a busy machine
        broker.control("errors Produce 3 OUT_OF_ORDER_SEQUENCE_NUMBER")
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + fdir, "model.name=fatal",
                                                    "kafka.enable.idempotence=true",
                                                    "kafka.enable.gapless.guarantee=true"],
                         name="fatal")
        try:
            rc = svc.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            rc = "still running"
        check(rc == 1, "fatal Kafka error -> exit 1 by itself", rc)
        check("fatal" in svc.text().lower() and "OUT_OF_ORDER" in svc.text(),
              "the message names the fatal error",
              [l for l in svc.text().splitlines() if "fatal" in l.lower()][:2])
        check(not sc.snapshots(fdir, "fatal"), "no snapshot after a fatal error",
              sc.snapshots(fdir, "fatal"))
        if svc.proc.poll() is None:
            svc.stop()
    finally:
        if svc.proc.poll() is None:
            svc.stop()
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0051-kafka_backpressure", tmp)


if __name__ == "__main__":
    sys.exit(main())
