#!/usr/bin/env python3
"""0104-realkafka_one_instance - a second instance of a model is refused, a killed one is not.

Two `streamlda run` with the same model.name share its consumer group: on the
old code the second joined, took half of the partitions and learned a second,
different model from them (the issue: 30,541 and 30,207 documents counted of
30,000 after kill -9s), and nothing said so. Now (src/kafka/kafka_source.c,
check_alone) a service asks the broker for its group's members before it
joins:
1. A runs (model m, snapshots in a/); B starts with the same model.name and
   another snapshot directory (so the snapshot-directory lock cannot see it):
   B exits 1 within session.timeout.ms + 3 s (+ slack) naming the other
   member, never gets a partition, and A keeps both of its partitions (no
   revocation in its log) and goes on training.
2. A is killed with SIGKILL; C (model m, a/) starts at once: the dead
   member's session is still open, so C waits for it to lapse, then joins,
   gets both partitions, trains the rest, and SIGTERM ends it with exit 0.
"""

import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True
import realkafka as rk  # noqa: E402

check = rk.check


def docs(n, seed):
    words = ["river", "mountain", "valley", "forest", "meadow", "harbor", "island", "desert",
             "market", "banker", "credit", "shares", "profit", "trader", "export", "tariff"]
    out = []
    for i in range(n):
        k = (i * 7 + seed) % 2
        out.append(" ".join(words[k * 8 + (i * j + seed) % 8] for j in range(30)).encode())
    return out


def main():
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0104-")
    p = rk.unique("o")
    topic, model = p + ".docs", p + "-m"
    rk.create_topics(addr, {topic: 2, p + ".dead": 1})
    rk.produce(addr, topic, [(None, v, None, i % 2) for i, v in enumerate(docs(2000, 1))])
    props = lambda snapdir: ["input.topics=" + topic, "deadletter.topic=" + p + ".dead", "topics=4",
                             "model.name=" + model, "http.port=0", "snapshot.topic=",
                             "minibatch.docs=50", "snapshot.every.ms=1000", "snapshot.dir=" + snapdir]
    a = rk.service(tmp, addr, props("a"), "a")
    others = []
    try:
        if not rk.assigned(a):
            return rk.done("0104-realkafka_one_instance", tmp)
        check("assigned 2 partition(s)" in a.text(), "A has both partitions")
        t0 = time.time()
        b = rk.service(tmp, addr, props("b"), "b")
        others.append(b)
        rk.wait_for(lambda: not rk.alive(b), 60, "B to give up")
        took = time.time() - t0
        check(not rk.alive(b) and b.proc.returncode == 1, "B exits 1", b.proc.returncode)
        btext = b.text()
        check("another instance of this model is running" in btext, "B says why",
              btext[-600:])
        check("kafka: assigned" not in btext, "B never got a partition")
        check(took < 6 + 3 + 20, "B gave up within session.timeout.ms + 3 s (+ slack)", round(took, 1))
        check(rk.alive(a) and "revoked" not in a.text(), "A kept its partitions")
        rk.produce(addr, topic, [(None, v, None, i % 2) for i, v in enumerate(docs(1000, 2))])
        rk.wait_for(lambda: rk.metrics(a).get("streamlda_documents_total", 0) >= 2500, 60,
                    "A trains on")
        check(rk.metrics(a).get("streamlda_documents_total", 0) >= 2500, "A trains on",
              rk.metrics(a).get("streamlda_documents_total"))

        a.kill9()
        c = rk.service(tmp, addr, props("a"), "c")
        others.append(c)
        if rk.assigned(c, timeout=60):
            ctext = c.text()
            check("waiting up to" in ctext, "C waited for the killed member's session to lapse",
                  ctext[-600:])
            check("assigned 2 partition(s)" in ctext, "C has both partitions")
            rk.wait_for(lambda: rk.metrics(c).get("streamlda_documents_total", 0) > 0, 60, "C trains")
            check(rk.metrics(c).get("streamlda_documents_total", 0) > 0, "C trains")
        rc = c.stop()
        check(rc == 0, "C: SIGTERM -> exit 0", rc)
    finally:
        for s in [a] + others:
            if rk.alive(s):
                s.stop()
    return rk.done("0104-realkafka_one_instance", tmp)


if __name__ == "__main__":
    sys.exit(main())
