#!/usr/bin/python3
"""0013-kafka_faults - brokers down, request errors, slow brokers, a missing snapshot topic.

`streamlda broker --control FIFO` hosts 3 brokers; faults are injected
through the FIFO while `streamlda run` consumes (output.topic on, and
snapshot.topic pointing at a topic that does not exist). Phases, each with
fresh documents produced by `streamlda produce`:
  1. normal;
  2. all brokers down: /healthz must turn 503 and the log must not flood (rate-limited
     warnings: once the client has reported enough errors, at most half as many warning
     lines as Kafka errors counted, where each error would be a line of its own without
     the limit); then up again: /healthz 200;
  3. request errors on Fetch, OffsetCommit, Produce, Metadata and Heartbeat;
  4. one broker answering 300 ms late;
  5. one broker down until the service has counted a Kafka error for it, then up.
Every wait is on a condition (a metric, a log line, /healthz), with generous limits that only
end a failing run: a fixed pause raced the service on a busy machine.
After each phase every document so far must be trained. At the end SIGTERM
gives exit 0; the final snapshot counts every produced document exactly once
and its offsets cover every message; the output topic has a record for
every document (distinct source offsets); Kafka errors were counted; the
service stayed alive throughout.
"""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0013-")
    lines = []
    for name in ["persuasion.txt", "northangerabbey.txt"]:
        with open(os.path.join(sc.SRC, "examples", "janeausten", name)) as f:
            lines += [line.strip() for line in f if line.strip()]
    phases = [lines[i * 300:(i + 1) * 300] for i in range(5)]
    broker = sc.Broker(tmp, "documents,mixtures,streamlda.deadletter", control=True)
    # The mock creates any topic a client asks for: make this one look missing.
    broker.control("topic-error no.such.topic UNKNOWN_TOPIC_OR_PART")
    produced = [0]

    def produce(docs, tag):
        path = os.path.join(tmp, "phase-%s.txt" % tag)
        with open(path, "w") as f:
            f.write("\n".join(docs) + "\n")
        res = subprocess.run([sc.BIN, "produce", "--brokers", broker.addr, "--topic", "documents",
                              "--key-from-id", path], capture_output=True, text=True, timeout=120)
        check(res.returncode == 0, "produce phase %s" % tag, res.returncode, res.stderr.strip()[-200:])
        produced[0] += len(docs)

    svc = sc.Service(tmp, broker.addr, ["topics=5", "http.port=0", "status.ms=1000", "minibatch.docs=50",
                                        "minibatch.ms=200", "snapshot.every.ms=1000",
                                        "snapshot.dir=snaps", "output.topic=mixtures",
                                        "snapshot.topic=no.such.topic",
                                        # fail records to a missing topic after 3 s, not 30 s
                                        "kafka.topic.metadata.propagation.max.ms=3000"])

    def caught_up(phase):
        dead = lambda m: sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
        ok = sc.wait_for(lambda: (lambda m: m.get("streamlda_documents_total", 0) + dead(m))(svc.metrics())
                         >= produced[0], 60, "phase %s caught up" % phase)
        m = svc.metrics()
        check(ok, "phase %s: every document so far trained" % phase,
              m.get("streamlda_documents_total"), dead(m), produced[0])
        check(svc.proc.poll() is None, "phase %s: service alive" % phase)

    try:
        produce(phases[0], 1)
        caught_up(1)
        reported = sc.wait_for(lambda: "no.such.topic" in svc.text(), 30, "missing topic warning")
        check(reported, "the missing snapshot topic is reported",
              [l for l in svc.text().splitlines() if "no.such.topic" in l][:2])

        # 2: every broker down.
        before = len(svc.text().splitlines())
        errors0 = svc.metric("streamlda_kafka_errors_total")
        broker.control("down -1")
        unhealthy = sc.wait_for(lambda: svc.get("/healthz")[0] == 503, 60, "/healthz 503")
        check(unhealthy, "/healthz 503 while all brokers are down", svc.get("/healthz"))

        def warnings_and_errors():  # the log read first: the counter only grows meanwhile
            during = svc.text().splitlines()[before:]
            warned = [l for l in during if ": warning: " in l or ": error: " in l]
            return during, warned, svc.metric("streamlda_kafka_errors_total") - errors0
        # Reconnections to three brokers fail over and over (each an error line without the
        # limit): wait until the client has reported 10 or more and the log holds at least
        # half of them back.
        held = sc.wait_for(lambda: (lambda d, w, e: e >= 10 and 2 * len(w) <= e)(
            *warnings_and_errors()), 120, "Kafka errors held back from the log")
        during, warned, errors = warnings_and_errors()
        print("log while down (%d lines):\n  %s" % (len(during), "\n  ".join(during[:12])))
        check(held, "no log flood while down: warning lines <= half the Kafka errors counted",
              len(warned), errors)
        check(len(warned) <= 80, "no log flood while down (warning lines)", len(warned))
        check(svc.proc.poll() is None, "service alive while brokers are down")
        broker.control("up -1")
        healthy = sc.wait_for(lambda: svc.get("/healthz")[0] == 200, 40, "/healthz 200 again")
        check(healthy, "/healthz 200 after the brokers are back", svc.get("/healthz"))
        produce(phases[1], 2)
        caught_up(2)

        # 3: request errors.
        for cmd in ["errors Fetch 5 NOT_LEADER_FOR_PARTITION", "errors OffsetCommit 3 REQUEST_TIMED_OUT",
                    "errors Produce 3 NOT_ENOUGH_REPLICAS", "errors Metadata 2 LEADER_NOT_AVAILABLE",
                    "errors Heartbeat 2 COORDINATOR_NOT_AVAILABLE"]:
            broker.control(cmd)
        produce(phases[2], 3)
        caught_up(3)

        # 4: a slow broker.
        broker.control("rtt 1 300")
        produce(phases[3], 4)
        caught_up(4)
        broker.control("rtt 1 0")

        # 5: one broker down until the service has seen it go (a Kafka error counted).
        errors0 = svc.metric("streamlda_kafka_errors_total")
        broker.control("down 2")
        seen = sc.wait_for(lambda: svc.metric("streamlda_kafka_errors_total") > errors0, 120,
                           "a Kafka error for the broker that went down")
        check(seen, "the service saw broker 2 go", errors0, svc.metric("streamlda_kafka_errors_total"))
        broker.control("up 2")
        produce(phases[4], 5)
        caught_up(5)

        m = svc.metrics()
        check(m.get("streamlda_kafka_errors_total", 0) > 0, "Kafka errors were counted",
              m.get("streamlda_kafka_errors_total"))
        rc = svc.stop()
        check(rc == 0, "SIGTERM -> exit 0", rc)
        log = svc.text()
        print("warnings in the log: %d lines" % sum(1 for l in log.splitlines() if "warning" in l))

        header = sc.newest_header(os.path.join(tmp, "snaps"), "streamlda")
        dead = sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
        check(header["docs"] + dead == produced[0], "final snapshot: every document exactly once",
              header["docs"], dead, produced[0])
        covered = sum(o for _, _, o in header["offsets"])
        check(covered == produced[0], "final offsets cover every message", covered, produced[0])
        outs = sc.reader.fetch_records(broker.addr, "mixtures")
        coords = set()
        for key, value, hdrs in outs:
            h = dict((k, v.decode()) for k, v in hdrs)
            coords.add((h["source.partition"], h["source.offset"]))
        check(len(coords) == header["docs"], "an output record for every document (at least once)",
              len(coords), len(outs), header["docs"])
    finally:
        if svc.proc.poll() is None:
            svc.stop()
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0013-kafka_faults", tmp)


if __name__ == "__main__":
    sys.exit(main())
