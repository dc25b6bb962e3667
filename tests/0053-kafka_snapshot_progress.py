#!/usr/bin/python3
"""0053-kafka_snapshot_progress - snapshots keep coming while a backlog is trained with outputs on.

A snapshot needs every dead-letter and output record produced so far to be delivered. With
a topic already full when the service starts, outputs are produced without pause; when each
delivery takes longer than the snapshot's wait (here every broker answers 300 ms late), a
service that keeps training while a snapshot waits never sees zero records in flight, and
writes no snapshot until the input runs out (seen on a real broker in transactional mode:
no snapshot for 8,000 documents). With snapshots due every second, the service must hold new minibatches and pause
consumption while a due snapshot waits for deliveries: here the first snapshot file must
appear while most of the backlog is still untrained, and several must be written on the
way. Finally every document is trained exactly once and has its output record.
"""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0053-")
    with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")) as f:
        lines = [line.strip() for line in f if len(line.strip()) > 200]  # never all stop words
    lines = (lines * 34)[:24000]  # 12,000 were trained between two snapshots at times
    broker = sc.Broker(tmp, "documents,mixtures,streamlda.deadletter", control=True)
    svc = None
    try:
        total = sc.produce_lines(broker.addr, tmp, lines, "backlog")
        broker.control("rtt -1 300")
        snapdir = os.path.join(tmp, "snaps")
        svc = sc.Service(tmp, broker.addr, ["topics=200", "threads=1", "http.port=0", "status.ms=1000",
                                            "minibatch.docs=20", "minibatch.ms=1000",
                                            "snapshot.every.ms=1000", "snapshot.every.batches=0",
                                            "snapshot.topic=", "output.topic=mixtures",
                                            "snapshot.keep=1000", "snapshot.dir=" + snapdir])
        first = sc.wait_for(lambda: sc.snapshots(snapdir, "streamlda"), 120, "a first snapshot")
        docs_first = sc.read_file(first[0])[0]["docs"] if first else None
        check(first and docs_first < total / 2, "the first snapshot comes while most of the backlog waits",
              docs_first, total)
        done = sc.wait_for(lambda: svc.metric("streamlda_documents_total") >= total, 180, "backlog trained")
        check(done, "the whole backlog is trained", svc.metric("streamlda_documents_total"))
        on_way = [sc.read_file(p)[0]["docs"] for p in sc.snapshots(snapdir, "streamlda")]
        check(len([n for n in on_way if n < total]) >= 2, "snapshots were written on the way", on_way)
        broker.control("rtt -1 0")
        rc = svc.stop()
        check(rc == 0, "SIGTERM -> exit 0", rc)
        header = sc.newest_header(snapdir, "streamlda")
        check(header["docs"] == total, "every document exactly once", header["docs"], total)
        recs = sc.reader.fetch_records(broker.addr, "mixtures")
        check(len(recs) == total, "one output record per document", len(recs), total)
    finally:
        if svc and svc.proc.poll() is None:
            svc.stop()
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0053-kafka_snapshot_progress", tmp)


if __name__ == "__main__":
    sys.exit(main())
