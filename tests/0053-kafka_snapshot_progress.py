#!/usr/bin/python3
"""0053-kafka_snapshot_progress - snapshots come while a backlog is trained with outputs on, and
training goes on between them when deliveries are slow.

A snapshot needs every dead-letter and output record produced so far to be delivered. With
a topic already full when the service starts, outputs are produced without pause; when each
delivery takes longer than the snapshot's wait (here every broker answers 300 ms late), a
service that keeps training while a snapshot waits never sees zero records in flight, and
writes no snapshot until the input runs out (seen on a real broker in transactional mode:
no snapshot for 8,000 documents). With snapshots due every second, the service must hold new
minibatches while a due snapshot waits for deliveries: here the first snapshot file must
appear while most of the backlog is still untrained. Finally every document is trained
exactly once and has its output record.

Then deliveries as slow as the snapshot interval (every broker 1 s late, snapshots every
second): a hold must not cost the service its progress. It used to pause its partitions for
each hold, so after each snapshot the consumer fetched again from scratch (a round trip of
1 s), a snapshot was due again by the time the first minibatch was trained, and the service
went from hold to hold a minibatch or two at a time (20 documents/s; 0053 ran out of time
under load). Now it reads nothing during a hold but lets the consumer fetch ahead, and a
time-driven snapshot comes no sooner than the last hold lasted: it trains at least 5
minibatches per snapshot written (the old code: one or two; the test stops early there).

Waits are on conditions (a snapshot file, the documents trained, the snapshots written): a
slow machine gets there; no figure depends on the machine's speed.
"""
import os
import sys
import time

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

MINIBATCH = 20


def backlog_lines(n):
    with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")) as f:
        lines = [line.strip() for line in f if len(line.strip()) > 200]  # never all stop words
    return (lines * (n // len(lines) + 1))[:n]


def produce_even(broker, tmp, lines, tag, topic):
    """lines over the topic's 4 partitions, a quarter each (24,000 lines of ~600 bytes: 3.6 MB a
    partition). Left to the partitioner, a busy machine once put 9,489 in one partition: 5.7 MB,
    past the ~5 MiB the mock keeps, which deleted 1,647 of them before they were read."""
    for p in range(4):
        sc.produce_lines(broker.addr, tmp, lines[p::4], "%s%d" % (tag, p), topic=topic,
                         extra=["--partition", str(p)])
    return len(lines)


def settled(svc, total, what):
    """Waits until every document is trained or counted lost; returns the documents trained."""
    trained = lambda: svc.metric("streamlda_documents_total")
    sc.wait_progress(lambda: trained() + max(svc.metric("streamlda_lost_messages_total"), 0),
                     total, what)
    lost = svc.metric("streamlda_lost_messages_total")
    check(lost == 0, "no message deleted before it was read", lost)
    return trained()


def docs_of(snapdir, model):
    return [sc.read_file(p)[0]["docs"] for p in sc.snapshots(snapdir, model)]


def service(tmp, broker, model, topic, output, snapdir):
    return sc.Service(tmp, broker.addr, ["model.name=" + model, "input.topics=" + topic,
                                         "topics=200", "threads=1", "http.port=0",
                                         "status.ms=1000", "minibatch.docs=%d" % MINIBATCH,
                                         "minibatch.ms=1000", "snapshot.every.ms=1000",
                                         "snapshot.every.batches=0", "snapshot.topic=",
                                         "output.topic=" + output, "snapshot.keep=1000",
                                         "snapshot.dir=" + snapdir], name=model)


def backlog_run(tmp, broker):
    """rtt 300 ms: the first snapshot early, everything exactly once."""
    # 24,000 documents of about 600 bytes, a quarter per partition: within the ~5 MiB a
    # partition of the mock keeps, their outputs too
    total = produce_even(broker, tmp, backlog_lines(24000), "backlog", "documents")
    broker.control("rtt -1 300")
    snapdir = os.path.join(tmp, "snaps")
    svc = service(tmp, broker, "streamlda", "documents", "mixtures", snapdir)
    try:
        first = sc.wait_for(lambda: sc.snapshots(snapdir, "streamlda"), 300, "a first snapshot")
        docs_first = sc.read_file(first[0])[0]["docs"] if first else None
        check(first and docs_first < total / 2,
              "the first snapshot comes while most of the backlog waits", docs_first, total)
        done = settled(svc, total, "the backlog trained")
        check(done >= total, "the whole backlog is trained", done, total)
        print("snapshots on the way (documents):", docs_of(snapdir, "streamlda"))
        broker.control("rtt -1 0")
        rc = svc.stop()
        check(rc == 0, "SIGTERM -> exit 0", rc)
        header = sc.newest_header(snapdir, "streamlda")
        check(header["docs"] == total, "every document exactly once", header["docs"], total)
        recs = sc.reader.fetch_records(broker.addr, "mixtures")
        check(len(recs) == total, "one output record per document", len(recs), total)
    finally:
        if svc.proc.poll() is None:
            svc.stop()


def slow_run(tmp, broker):
    """rtt 1000 ms, snapshots every second: many minibatches per hold."""
    total = produce_even(broker, tmp, backlog_lines(20000), "slow", "documents2")
    broker.control("rtt -1 1000")
    snapdir = os.path.join(tmp, "slow")
    svc = service(tmp, broker, "slow", "documents2", "mixtures2", snapdir)
    t0 = time.time()
    try:
        # until the backlog is trained, or 10 snapshots (the old code wrote them a minibatch or
        # two apart: 10 come soon, and the backlog took half an hour)
        trained = lambda: svc.metric("streamlda_documents_total")
        written = lambda: svc.metric("streamlda_snapshots_total")
        sc.wait_progress(lambda: trained() + (total if written() >= 10 else 0), total,
                         "the slow backlog trained or 10 snapshots")
        docs, snaps = trained(), written()
        held = svc.metric("streamlda_snapshot_wait_seconds_total")
        print("%d of %d documents trained in %.1f s with %d snapshot(s) (documents %s); held "
              "%.1f s for deliveries" % (docs, total, time.time() - t0, snaps,
                                         docs_of(snapdir, "slow"), held))
        check(snaps >= 1, "snapshots are written while the backlog is trained", snaps)
        per = docs / max(snaps, 1)
        if not check(per >= 5 * MINIBATCH, "at least 5 minibatches trained per snapshot",
                     per, MINIBATCH):
            return  # thrashing: the rest of the backlog would take too long
        done = settled(svc, total, "the slow backlog trained")
        check(done >= total, "the whole backlog is trained", done, total)
        check(held > 0, "streamlda_snapshot_wait_seconds_total counts the holds", held)
        broker.control("rtt -1 0")
        rc = svc.stop()
        check(rc == 0, "SIGTERM -> exit 0", rc)
        header = sc.newest_header(snapdir, "slow")
        check(header["docs"] == total, "every document exactly once", header["docs"], total)
    finally:
        broker.control("rtt -1 0")
        if svc.proc.poll() is None:
            svc.stop()


if __name__ == "__main__":
    sys.exit(sc.broker_runs("0053-kafka_snapshot_progress",
                            "documents,mixtures,documents2,mixtures2,streamlda.deadletter",
                            [backlog_run, slow_run]))
