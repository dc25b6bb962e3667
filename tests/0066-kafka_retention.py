#!/usr/bin/python3
"""0066-kafka_retention - messages a cluster deleted before the service read them are counted lost.

A Kafka cluster deletes a partition's oldest messages by retention (retention.ms,
retention.bytes) whether or not a consumer has read them. When the service's position (from
its snapshot) falls below the partition's log start, librdkafka resets it to the earliest
offset and says only "offset reset" in its log: the messages between were never trained nor
dead-lettered, and nothing counted them (0053 once stalled 1,647 documents short of its
backlog so, with lag 0 and no error). Here with `streamlda broker` (librdkafka's mock cluster
in its own process: an external cluster to the service, with about 5 MiB of retention per
partition): 3,000 documents trained and snapshotted; the service stopped; 9,489 more (5.7 MB)
into the same partition push the oldest out, the 3,000 read ones and some unread ones; the
restarted service trains what is left and counts the rest in streamlda_lost_messages_total,
with an error naming the offsets: trained + lost = produced, and lost = the partition's log
start - 3,000. Another model's first run (no position) starts at the log start: nothing
counted, and its log says where it starts (0053's backlog once lost documents to the mock's
retention with nothing in the log).

Waits are on conditions (documents trained, trained + lost), not on time.
"""
import os
import sys

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check


def lines(n):
    with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")) as f:
        long = [line.strip() for line in f if len(line.strip()) > 200]  # never all stop words
    return (long * (n // len(long) + 1))[:n]


def service(tmp, broker, name, snapdir):
    return sc.Service(tmp, broker.addr, ["model.name=ret", "input.topics=documents", "topics=20",
                                         "threads=1", "http.port=0", "minibatch.docs=100",
                                         "snapshot.topic=", "snapshot.dir=" + snapdir],
                      name=name)


def run(tmp, broker):
    docs = lines(12489)
    first, second = docs[:3000], docs[3000:]
    sc.produce_lines(broker.addr, tmp, first, "first", extra=["--partition", "0"])
    snapdir = os.path.join(tmp, "snaps")
    svc = service(tmp, broker, "first", snapdir)
    try:
        got = sc.wait_progress(lambda: svc.metric("streamlda_documents_total"), 3000,
                               "the first 3,000 trained")
        check(got == 3000, "the first run trains every document", got)
        sc.check_metric(svc, "streamlda_lost_messages_total", 0,
                        "a model's first run counts nothing lost")
        check(svc.stop() == 0, "SIGTERM -> exit 0")
    finally:
        if svc.proc.poll() is None:
            svc.stop()
    check(sc.newest_header(snapdir, "ret")["docs"] == 3000, "the snapshot holds the 3,000")

    sc.produce_lines(broker.addr, tmp, second, "second", extra=["--partition", "0"])
    kept = len(sc.reader.fetch_records(broker.addr, "documents"))
    start = len(docs) - kept  # the partition's log start: its messages are numbered 0..12,488
    check(start > 3000, "the cluster deleted unread messages (its log starts past 3,000)", start)
    svc = service(tmp, broker, "second", snapdir)
    try:
        trained = lambda: svc.metric("streamlda_documents_total")
        lost = lambda: svc.metric("streamlda_lost_messages_total")
        sc.wait_progress(lambda: trained() + lost(), len(second), "trained + lost = produced")
        print("after the restart: %d trained, %d lost, log start %d" % (trained(), lost(), start))
        check(trained() == kept, "what the cluster kept is trained", trained(), kept)
        check(lost() == start - 3000, "the deleted unread messages are counted lost", lost(),
              start - 3000)
        check("message(s) of documents [0] (offsets 3000..%d) were deleted" % (start - 1)
              in svc.text(), "the log names the lost offsets")
        check(svc.stop() == 0, "SIGTERM -> exit 0")
    finally:
        if svc.proc.poll() is None:
            svc.stop()
    # another model's first run on the same partition: it starts at the log start, says so
    # once, and counts nothing lost
    svc = sc.Service(tmp, broker.addr, ["model.name=fresh", "input.topics=documents",
                                        "topics=20", "threads=1", "http.port=0",
                                        "snapshot.topic=",
                                        "snapshot.dir=" + os.path.join(tmp, "fresh")],
                     name="fresh")
    try:
        got = sc.wait_progress(lambda: svc.metric("streamlda_documents_total"), kept,
                               "a first run over what the cluster kept")
        check(got == kept, "the first run trains what the cluster kept", got, kept)
        sc.check_metric(svc, "streamlda_lost_messages_total", 0,
                        "a model's first run counts nothing lost")
        check("documents [0] starts at offset %d, its log start" % start in svc.text(),
              "the log says where the first run starts")
        check(svc.stop() == 0, "SIGTERM -> exit 0")
    finally:
        if svc.proc.poll() is None:
            svc.stop()


if __name__ == "__main__":
    sys.exit(sc.broker_runs("0066-kafka_retention", "documents", [run]))
