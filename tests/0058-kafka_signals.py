#!/usr/bin/python3
"""0058-kafka_signals - SIGHUP stops the service as SIGTERM does, and a second signal ends the
shutdown's wait at once.

1. SIGHUP: 30 documents trained in 3 minibatches, no snapshot due (snapshot.every.* off). SIGHUP
   must write the final snapshot with all 30 and exit 0, as SIGTERM does. It used to kill the
   process at once (SIGHUP's default action): no snapshot, the training since the last one lost.
2. A second SIGTERM: a dead letter cannot be delivered (its topic looks missing) and
   shutdown.timeout.ms is 10 minutes, so after SIGTERM the service waits for it. A second
   SIGTERM must end that wait at once: exit 1, no final snapshot (the dead letter's offset is
   never committed: nothing past what is safe). It used to be ignored: the wait went on.
3. A second SIGTERM with every broker down: the final snapshot is written, then its offset
   commit waits for the group coordinator, and the consumer's close after it (each up to the
   session timeout, 5 minutes here). A second SIGTERM must end both at once: exit 1, the log
   saying the offsets may not be committed, the final snapshot holding every document. It used
   to be ignored: the commit and the close waited out the session.
Waits are on conditions (documents trained, the log's "stopping" line, the process's exit), with
limits far below the 10 minutes (5 in run 3) the old code waited.
"""
import os
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

DL = "streamlda.deadletter"


def props(model, topic, snapdir, extra=()):
    return ["model.name=" + model, "input.topics=" + topic, "topics=5", "http.port=0",
            "status.ms=0", "minibatch.docs=10", "minibatch.ms=600000",
            "snapshot.every.ms=0", "snapshot.every.batches=0", "snapshot.topic=",
            "snapshot.dir=" + snapdir] + list(extra)


def good_lines(n, tag):
    return ["%s document %d about whales ships harpoons sailors and the sea" % (tag, i)
            for i in range(n)]


def exit_code(proc, timeout):
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return "still running after %d s" % timeout


def final_holds(snapdir, model, docs):
    header = sc.newest_header(snapdir, model) or {}
    check(header.get("docs") == docs, "the final snapshot holds the %d documents" % docs,
          header.get("docs"))


def two_sigterms(svc, waiting_for, ends):
    """SIGTERM, the shutdown begun and waiting for waiting_for, a second SIGTERM: exit 1 at
    once. Returns the log."""
    svc.proc.send_signal(signal.SIGTERM)
    stopping = sc.wait_for(lambda: "stopping: final minibatch and snapshot" in svc.text(), 60,
                           "the shutdown to begin")
    check(stopping and svc.proc.poll() is None,
          "after SIGTERM the service waits for " + waiting_for, svc.proc.poll())
    svc.proc.send_signal(signal.SIGTERM)
    rc = exit_code(svc.proc, 60)
    check(rc == 1, "a second SIGTERM ends %s: exit 1" % ends, rc)
    return svc.text()


def hup_run(tmp, broker):
    snapdir = os.path.join(tmp, "hup")
    sc.produce_lines(broker.addr, tmp, good_lines(30, "hup"), "hup", topic="hup")
    svc = sc.Service(tmp, broker.addr, props("hup", "hup", snapdir), name="hup")
    try:
        got = sc.wait_for(lambda: svc.metric("streamlda_documents_total") >= 30, 120,
                          "30 documents trained")
        check(got, "30 documents trained", svc.metric("streamlda_documents_total"))
        check(not sc.snapshots(snapdir, "hup"), "no snapshot before the signal",
              sc.snapshots(snapdir, "hup"))
        svc.proc.send_signal(signal.SIGHUP)
        rc = exit_code(svc.proc, 120)
        check(rc == 0, "SIGHUP -> final minibatch and snapshot, exit 0", rc)
        final_holds(snapdir, "hup", 30)
    finally:
        if svc.proc.poll() is None:
            svc.proc.kill()


def second_signal_run(tmp, broker):
    snapdir = os.path.join(tmp, "second")
    broker.control("topic-error %s UNKNOWN_TOPIC_OR_PART" % DL)
    path = os.path.join(tmp, "second.txt")
    with open(path, "wb") as f:  # 20 good documents and one that is not UTF-8: a dead letter
        f.write("\n".join(good_lines(20, "second")).encode() + b"\ncaf\xc3 broken \xff\xfe\n")
    res = subprocess.run([sc.BIN, "produce", "--brokers", broker.addr, "--topic", "second",
                          path], capture_output=True, text=True, timeout=120)
    check(res.returncode == 0, "produce", res.returncode, res.stderr.strip()[-200:])
    svc = sc.Service(tmp, broker.addr,
                     props("second", "second", snapdir,
                           ["shutdown.timeout.ms=600000",
                            "kafka.topic.metadata.propagation.max.ms=1500"]), name="second")
    try:
        got = sc.wait_for(lambda: svc.metric("streamlda_documents_total") >= 20 and
                          svc.metric("streamlda_undelivered_records") >= 1, 120,
                          "20 documents trained and the dead letter waiting")
        check(got, "20 documents trained, the dead letter undelivered",
              svc.metric("streamlda_documents_total"), svc.metric("streamlda_undelivered_records"))
        log = two_sigterms(svc, "the dead letter", "the wait")
        check("a second signal ended the wait" in log, "the log says why",
              log.strip().splitlines()[-1:])
        check(not sc.snapshots(snapdir, "second"), "no final snapshot past the undelivered record",
              sc.snapshots(snapdir, "second"))
    finally:
        if svc.proc.poll() is None:
            svc.proc.kill()
        broker.control("topic-error %s 0" % DL)


def brokers_down_run(tmp, broker):
    snapdir = os.path.join(tmp, "down")
    sc.produce_lines(broker.addr, tmp, good_lines(30, "down"), "down", topic="down")
    svc = sc.Service(tmp, broker.addr,
                     props("down", "down", snapdir,
                           ["kafka.session.timeout.ms=300000", "kafka.heartbeat.interval.ms=3000"]),
                     name="down")
    try:
        got = sc.wait_for(lambda: svc.metric("streamlda_documents_total") >= 30, 120,
                          "30 documents trained")
        check(got, "30 documents trained", svc.metric("streamlda_documents_total"))
        broker.control("down -1")
        down = sc.wait_for(lambda: "brokers are down" in svc.text(), 120,
                           "the service to see every broker down")
        check(down, "the service sees every broker down")
        log = two_sigterms(svc, "the group coordinator", "the commit's and the close's waits")
        check("its offsets may not be committed" in log, "the log says what was left undone",
              log.strip().splitlines()[-3:])
        final_holds(snapdir, "down", 30)
    finally:
        if svc.proc.poll() is None:
            svc.proc.kill()
        broker.control("up -1")


if __name__ == "__main__":
    sys.exit(sc.broker_runs("0058-kafka_signals", "hup,second,down," + DL,
                            [hup_run, second_signal_run, brokers_down_run]))
