#!/usr/bin/python3
"""0055-kafka_cooperative_lag - the consumer-lag gauge follows incremental (cooperative) rebalances.

The statistics callback computes streamlda_consumer_lag over the partitions the
instance owns. It may not ask the consumer for its assignment (rd_kafka_assignment
waits for the group's thread, which waits for rd_kafka_consumer_close when that is
what serves the callback: a replica that could not reach its broker never exited),
so kafka_source.c keeps the assignment from the rebalance callback: replaced on an
eager assignment, partitions added and removed one by one on a cooperative one.

Mock cluster, one topic of 4 partitions, kafka.partition.assignment.strategy=
cooperative-sticky. Instance a alone consumes 300 documents: its lag gauge ends at 0
(it is -1 when the kept assignment is empty). Instance b joins the group (the mock has
no DescribeGroups, so the one-instance-per-group check lets it in): a hands some
partitions over incrementally (b's first assignment is empty, the partitions come in a
second, incremental one). 300 more documents: a and b train at least 600 and both gauges
end at 0 (b's is -1 when incremental assignments are not added to the kept list). More
than 600: b starts the partitions handed over at the group's committed offsets, and a
commits only with snapshots, so some documents are trained by both: with independent
models that is why a real broker refuses two instances in a group; not looked at here.
streamlda_assigned_partitions, the kept list's length, shows the hand-over: 4 on a alone,
then a's and b's adding up to 4 with b's above 0 (a partition left in the kept list after
its revocation would make it 5 or more; it would not show in the lag gauge, whose cached high
watermark stops with the fetches).
"""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

PROPS = ["topics=4", "http.port=0", "status.ms=500", "minibatch.docs=10", "minibatch.ms=200",
         "snapshot.every.ms=600000", "snapshot.topic=", "input.format=text",
         "kafka.partition.assignment.strategy=cooperative-sticky", "kafka.statistics.interval.ms=200"]


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0055-")
    with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")) as f:
        lines = [line.strip() for line in f if len(line.strip()) > 120]
    broker = sc.Broker(tmp, "documents,streamlda.deadletter", partitions=4)
    svcs = []
    try:
        sc.produce_lines(broker.addr, tmp, lines[0:300], 1)
        a = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + os.path.join(tmp, "a")],
                       name="a")
        svcs.append(a)
        ok = sc.wait_for(lambda: a.metric("streamlda_documents_total") >= 300 and
                         a.metric("streamlda_consumer_lag") == 0, 60, "a trained 300, lag 0")
        check(ok, "a alone: 300 trained and lag 0", a.metric("streamlda_documents_total"),
              a.metric("streamlda_consumer_lag"))
        b = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + os.path.join(tmp, "b")],
                       name="b")
        svcs.append(b)
        check(a.metric("streamlda_assigned_partitions") == 4, "a alone: 4 partitions assigned",
              a.metric("streamlda_assigned_partitions"))
        ok = sc.wait_for(lambda: b.metric("streamlda_assigned_partitions") > 0 and
                         a.metric("streamlda_assigned_partitions") +
                         b.metric("streamlda_assigned_partitions") == 4, 60,
                         "the 4 partitions split between a and b")
        check(ok, "b joins: an incremental hand-over, a and b own the 4 partitions between them",
              a.metric("streamlda_assigned_partitions"), b.metric("streamlda_assigned_partitions"))
        sc.produce_lines(broker.addr, tmp, lines[300:600], 2)
        total = lambda: (a.metric("streamlda_documents_total") +
                         b.metric("streamlda_documents_total"))
        ok = sc.wait_for(lambda: total() >= 600 and a.metric("streamlda_consumer_lag") == 0 and
                         b.metric("streamlda_consumer_lag") == 0, 90, "600 trained, lags 0")
        check(ok, "a and b: 600 trained, both lag gauges 0",
              a.metric("streamlda_documents_total"), b.metric("streamlda_documents_total"),
              a.metric("streamlda_consumer_lag"), b.metric("streamlda_consumer_lag"))
        check(b.metric("streamlda_documents_total") > 0, "b trained some of the second 300",
              b.metric("streamlda_documents_total"))
        for s in (b, a):
            rc = s.stop()
            check(rc == 0, "SIGTERM -> exit 0", rc)
    finally:
        for s in svcs:
            if s.proc.poll() is None:
                s.stop()
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0055-kafka_cooperative_lag", tmp)


if __name__ == "__main__":
    sys.exit(main())
