#!/usr/bin/env python3
"""0100-realkafka_e2e - the Austen paragraphs through a real Apache Kafka broker and back out.

Runs against the broker of the realkafka fixture (scripts/kafka.sh). Its own
topics: the input (4 partitions), the snapshot topic (2), dead letters and
output mixtures. Both novels go in twice: as plain text lines by kcat
(Debian's librdkafka) and as JSON {"id","text"} keyed by id by
confluent-kafka, 3,780 documents. `streamlda run` consumes them; once
/metrics accounts for every message, SIGTERM must give exit 0 and a final
snapshot file whose document count is exactly the documents produced minus
the dead letters (which are on the dead-letter topic, one per dead letter),
whose offsets cover every message and that equals the group's committed
offsets; one output record per trained document; and
examples/read_snapshot.py (with the venv's kafka-python and with Debian's)
rebuilds the final snapshot from the snapshot topic.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import realkafka as rk  # noqa: E402
import scenario as sc  # noqa: E402
from confluent_kafka import Consumer, TopicPartition

check = rk.check


def main():
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0100-")
    p = rk.unique("a")
    docs, snaps, dead, mix = p + ".docs", p + ".snapshots", p + ".deadletter", p + ".mixtures"
    rk.create_topics(addr, {docs: 4, snaps: 2, dead: 1, mix: 4})

    paths = [os.path.join(rk.SRC, "examples", "janeausten", n) for n in ("persuasion.txt", "northangerabbey.txt")]
    n_kcat = 0
    for path in paths:
        res = subprocess.run(["kcat", "-P", "-b", addr, "-t", docs, "-l", path],
                             capture_output=True, text=True, timeout=120)
        check(res.returncode == 0, "kcat -P %s exit 0" % os.path.basename(path), res.returncode, res.stderr[-300:])
        with open(path) as f:
            n_kcat += sum(1 for line in f if line.strip())
    records = []
    for path in paths:
        tag = os.path.basename(path)[:2]
        with open(path) as f:
            for i, line in enumerate(l.strip() for l in f if l.strip()):
                doc_id = "%s-%d" % (tag, i)
                records.append((doc_id.encode(), json.dumps({"id": doc_id, "text": line}).encode(), None, None))
    rk.produce(addr, docs, records)
    total = n_kcat + len(records)
    print("produced %d documents (%d by kcat, %d by confluent-kafka)" % (total, n_kcat, len(records)))

    model = p
    svc = rk.service(tmp, addr, ["topics=8", "http.port=0", "status.ms=1000", "model.name=" + model,
                                 "input.topics=" + docs, "snapshot.topic=" + snaps,
                                 "deadletter.topic=" + dead, "output.topic=" + mix, "output.top=3",
                                 "minibatch.docs=64", "snapshot.every.ms=2000", "snapshot.dir=snaps",
                                 "snapshot.chunk.bytes=65536"], "svc")
    rk.assigned(svc)
    dead_n = lambda m: sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
    accounted = lambda m: m.get("streamlda_documents_total", 0) + dead_n(m)
    rk.wait_for(lambda: accounted(rk.metrics(svc)) >= total or not rk.alive(svc), 120,
                "every document accounted for")
    m = rk.metrics(svc)
    trained, ndead = m.get("streamlda_documents_total", -1), dead_n(m)
    print("trained %d, dead letters %d of %d" % (trained, ndead, total))
    status, body = svc.get("/healthz") if rk.alive(svc) else (0, "service exited")
    check(status == 200 and body.strip() == "ok", "/healthz 200 ok against a real broker", status, body.strip())
    rc = svc.stop()
    check(rc == 0, "SIGTERM -> exit 0", rc)

    files = sc.snapshots(os.path.join(tmp, "snaps"), model)
    check(bool(files), "a snapshot file was written", len(files))
    if not files:
        return rk.done("0100-realkafka_e2e", tmp)
    header = sc.read_file(files[-1])[0]
    check(header["docs"] == total - ndead, "final snapshot counts exactly the documents produced (minus dead letters)",
          header["docs"], total, ndead)
    check(header["docs"] == trained, "final snapshot = /metrics documents", header["docs"], trained)
    offs = {(t, part): o for t, part, o in header["offsets"]}
    check(sum(offs.values()) == total, "snapshot offsets cover every message", sum(offs.values()), total)

    cons = Consumer({"bootstrap.servers": addr, "group.id": "streamlda-" + model})
    committed = cons.committed([TopicPartition(t, part) for t, part in offs], timeout=10)
    cons.close()
    got = {(tp.topic, tp.partition): tp.offset for tp in committed}
    check(got == offs, "group's committed offsets = final snapshot's offsets", sorted(got.items()), sorted(offs.items()))

    dls = rk.consume_all(addr, dead)
    check(len(dls) == ndead, "one dead-letter record per dead letter", len(dls), ndead)
    outs = rk.consume_all(addr, mix)
    ids = {o.key for o in outs}
    check(len(outs) == header["docs"], "one output record per trained document", len(outs), header["docs"])
    check(all(json.loads(o.value)["id"].encode() == o.key for o in outs), "output records keyed by their id")
    json_ids = {r[0] for r in records} - {d.key for d in dls if d.key}
    check(json_ids <= ids, "every JSON document's id is an output key", len(json_ids - ids))
    for py in (sys.executable, "/usr/bin/python3"):
        res = subprocess.run([py, os.path.join(rk.SRC, "examples", "read_snapshot.py"), "--brokers", addr,
                              "--topic", snaps, "--model", model, "-n", "5"],
                             capture_output=True, text=True, timeout=120)
        print(res.stdout[:500])
        want = "model %s: K=8, %d updates, %d documents" % (model, header["t"], header["docs"])
        check(res.returncode == 0 and want in res.stdout and "topic 7:" in res.stdout,
              "examples/read_snapshot.py (%s) rebuilds the final snapshot from the topic" % py,
              res.returncode, want, res.stderr[-300:])
    return rk.done("0100-realkafka_e2e", tmp)


if __name__ == "__main__":
    sys.exit(main())
