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
Waits are on conditions (documents trained, the log's "stopping" line, the process's exit), with
limits far below the 10 minutes the old code waited.
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
        header = sc.newest_header(snapdir, "hup") or {}
        check(header.get("docs") == 30, "the final snapshot holds the 30 documents",
              header.get("docs"))
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
        svc.proc.send_signal(signal.SIGTERM)
        stopping = sc.wait_for(lambda: "stopping: final minibatch and snapshot" in svc.text(), 60,
                               "the shutdown to begin")
        check(stopping and svc.proc.poll() is None,
              "after SIGTERM the service waits for the dead letter", svc.proc.poll())
        svc.proc.send_signal(signal.SIGTERM)
        rc = exit_code(svc.proc, 60)
        check(rc == 1, "a second SIGTERM ends the wait: exit 1", rc)
        log = svc.text()
        check("a second signal ended the wait" in log, "the log says why",
              log.strip().splitlines()[-1:])
        check(not sc.snapshots(snapdir, "second"), "no final snapshot past the undelivered record",
              sc.snapshots(snapdir, "second"))
    finally:
        if svc.proc.poll() is None:
            svc.proc.kill()
        broker.control("topic-error %s 0" % DL)


if __name__ == "__main__":
    sys.exit(sc.broker_runs("0058-kafka_signals", "hup,second," + DL,
                            [hup_run, second_signal_run]))
