#!/usr/bin/env python3
"""0109-realkafka_replica_signal - a replica's shutdown waits for the update log, and a second
SIGTERM ends that wait at once.

One replica (updates.topic) trains 40 documents: its update records come back through the log
(read read_committed) and are applied. Then the test opens a transaction of its own on
updates.topic with one record and leaves it open: a read_committed reader stops at an open
transaction (the log's last stable offset), so the replica's later records cannot come back.
60 more documents: the replica publishes their minibatches and commits them, and (with
updates.staleness=1) waits before its next minibatch for its records to come back.
1. SIGTERM: the shutdown must begin (it used to be held off up to 120 s by that wait, which
   did not look at the stop request, and then the replica failed without a snapshot); it then
   waits for its own records (shutdown.timeout.ms, 10 minutes here).
2. A second SIGTERM ends that wait at once: exit 1, "a second signal ended the shutdown's wait
   for the update log", and the replica's snapshot holds what it applied (40 documents).
The test's transaction is aborted at the end. Every wait is on a condition (a metric, a log
line, the process's exit).
"""

import os
import signal
import sys
import tempfile

sys.dont_write_bytecode = True
import realkafka as rk  # noqa: E402
from confluent_kafka import Producer  # noqa: E402

check = rk.check
DOCS = [("whales ships harpoons sailors sea voyage captain %d" % i).encode() for i in range(100)]


def open_transaction(addr, topic):
    """A transactional producer with one record of topic in a transaction left open (its
    timeout, 10 minutes, is the broker's to enforce)."""
    prod = Producer({"bootstrap.servers": addr, "transactional.id": topic + ".blocker",
                     "transaction.timeout.ms": 600000})
    prod.init_transactions(60)
    prod.begin_transaction()
    prod.produce(topic, value=b"not an update record: this transaction is never committed")
    check(prod.flush(60) == 0, "the open transaction's record is delivered")
    return prod


def exit_code(proc, timeout):
    try:
        return proc.wait(timeout=timeout)
    except Exception:
        return "still running after %d s" % timeout


def main():
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0109-")
    p = rk.unique("sig")
    topic, updates, snapdir = p + ".docs", p + ".updates", os.path.join(tmp, "snap")
    rk.create_topics(addr, {topic: 1, p + ".dead": 1})
    props = rk.replica_props(p, topic, p + "-m", snapdir, "updates.topic=" + updates,
                             "shutdown.timeout.ms=600000", "minibatch.ms=600000",
                             "snapshot.every.ms=0", "snapshot.every.batches=0")
    svc = rk.service(tmp, addr, props, "a")
    blocker = None
    try:
        if not rk.assigned(svc, timeout=90):
            return rk.done("0109-realkafka_replica_signal", tmp)
        rk.produce(addr, topic, [(None, v, None, 0) for v in DOCS[:40]])
        applied = rk.wait_for(lambda: rk.metrics(svc).get("streamlda_model_documents", 0) >= 40,
                              120, "40 documents applied")
        check(applied, "the replica applied its 40 documents from the log",
              rk.metrics(svc).get("streamlda_model_documents"))

        blocker = open_transaction(addr, updates)
        rk.produce(addr, topic, [(None, v, None, 0) for v in DOCS[40:]])
        published = rk.wait_for(
            lambda: rk.metrics(svc).get("streamlda_updates_published_total", 0) >= 4, 120,
            "the next minibatches published")
        m = rk.metrics(svc)
        check(published and m.get("streamlda_model_documents") == 40,
              "the replica published more, applied none of it (the log is blocked)",
              m.get("streamlda_updates_published_total"), m.get("streamlda_model_documents"))

        svc.proc.send_signal(signal.SIGTERM)
        stopping = rk.wait_for(lambda: "stopping: final minibatch and snapshot" in svc.text(), 60,
                               "the shutdown to begin")
        check(stopping and rk.alive(svc),
              "SIGTERM begins the shutdown, which waits for the update log", svc.proc.poll())
        svc.proc.send_signal(signal.SIGTERM)
        rc = exit_code(svc.proc, 60)
        check(rc == 1, "a second SIGTERM ends the wait for the update log: exit 1", rc)
        log = svc.text()
        check("a second signal ended the shutdown's wait for the update log" in log,
              "the log says why", log.strip().splitlines()[-2:])
        docs = rk.newest_docs(snapdir, p + "-m")
        check(docs == 40, "the replica's snapshot holds what it applied (40 documents)", docs)
    finally:
        if rk.alive(svc):
            svc.kill9()
        if blocker is not None:
            blocker.abort_transaction(60)
    return rk.done("0109-realkafka_replica_signal", tmp)


if __name__ == "__main__":
    sys.exit(main())
