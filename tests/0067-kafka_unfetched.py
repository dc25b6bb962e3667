#!/usr/bin/python3
"""0067-kafka_unfetched - an assigned partition that is never fetched is named by /healthz and
/metrics; it does not pass for a consumer that has caught up.

Four partitions of 10 documents each; partition 1's leader is taken away (the embedded
cluster's `leader documents 1 -1`) before the service starts, so its consumer is assigned
partition 1 but never gets a fetch response for it. The other 30 documents train; then
/healthz must turn 503 "consumer stalled: 1 of 4 assigned partition(s) not fetched ..."
after five times health.stall.ms, with streamlda_unfetched_partitions 1. It used to stay 200 with
streamlda_consumer_lag 0: librdkafka has no watermarks for a partition never fetched, and the
lag summed over the others (seen once under load in 0058: one partition's 8 messages never
fetched in 120 s, the gauge saying 0). After health.stall.ms the service also assigns it again
from its positions (a kick for a partition stuck inside librdkafka), logged; under the eager
protocol that renews every partition, so the exact count below also shows nothing is read
twice. The leader back: exactly 40 train, /healthz 200, the gauge 0.
Waits are on conditions, with limits far above what they need.
"""
import os
import sys

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check


def lines(n, tag):
    return ["%s document %d about whales ships harpoons sailors and the sea" % (tag, i)
            for i in range(n)]


def run(tmp, broker):
    for p in range(4):
        sc.produce_lines(broker.addr, tmp, lines(10, "p%d" % p), "p%d" % p,
                         extra=["--partition", str(p)])
    broker.control("leader documents 1 -1")
    svc = sc.Service(tmp, broker.addr, ["model.name=unf", "input.topics=documents", "topics=5",
                                        "threads=1", "http.port=0", "minibatch.docs=10",
                                        "health.stall.ms=2000", "snapshot.topic=",
                                        "snapshot.dir=" + os.path.join(tmp, "snaps")])
    try:
        docs = lambda: svc.metric("streamlda_documents_total")
        got = sc.wait_progress(docs, 30, "the three partitions with a leader trained")
        check(got == 30, "the 30 documents of the partitions with a leader train", got)

        def stalled():
            status, body = svc.get("/healthz")
            return status == 503 and "not fetched" in body and body
        body = sc.wait_for(stalled, 120, "/healthz to name the partition never fetched")
        check(body and "1 of 4 assigned partition(s) not fetched" in body,
              "/healthz: 503 naming one partition of four never fetched", body)
        sc.check_metric(svc, "streamlda_unfetched_partitions", 1, "the gauge says 1")
        renewed = sc.wait_for(lambda: "documents [1] had no fetch response" in svc.text(), 120,
                              "the partition's assignment renewed")
        check(renewed and "assigned again from the model's positions" in svc.text(),
              "the unfetched partition is assigned again, logged", svc.text()[-600:])

        broker.control("leader documents 1 1")
        got = sc.wait_progress(docs, 40, "partition 1 trained once it has a leader")
        check(got == 40, "all 40 documents train once partition 1 has a leader", got)
        healthy = sc.wait_for(lambda: svc.get("/healthz")[0] == 200, 120, "/healthz 200 again")
        check(healthy, "/healthz 200 again", svc.get("/healthz"))
        sc.check_metric(svc, "streamlda_unfetched_partitions", 0, "the gauge says 0")
        check(svc.stop() == 0, "SIGTERM -> exit 0")
    finally:
        if svc.proc.poll() is None:
            svc.stop()
    check(sc.newest_header(os.path.join(tmp, "snaps"), "unf")["docs"] == 40,
          "the final snapshot holds the 40")


if __name__ == "__main__":
    sys.exit(sc.broker_runs("0067-kafka_unfetched", "documents", [run]))
