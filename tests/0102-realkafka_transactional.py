#!/usr/bin/env python3
"""0102-realkafka_transactional - exactly-once output across three kill -9 on a real broker.

The mock cluster gives transactions no semantics (tests/0017 only shows the
mechanics); a real broker does: aborted records are invisible to
read_committed consumers, a new producer with the same transactional.id
fences the old one and aborts its open transaction. 8,000 JSON documents
with ids stream over about 40 s into a 4-partition topic and feed `streamlda
run` with output.topic and kafka.transactional.id (a snapshot, hence a
transaction commit, after every minibatch of 50). While they stream, the
service is killed with SIGKILL three times (each once it has trained 300
documents and written a snapshot of its own, plus a random delay of up to
0.5 s, right after it trains a minibatch: inside the output / commit /
snapshot sequence) and restarted (realkafka.crash_runs), then stopped with SIGTERM once
every document is in its newest snapshot. A read_committed consumer of the
output topic must then see every produced document id exactly once
(docs/service.md, "Guarantees": exactly once for read_committed consumers),
and the final model must hold every document once. A read_uncommitted count
is printed to show what the transactions hid. Set SLDA_CRASH_SEED to replay the random delays.
"""
import collections
import json
import os
import random
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import realkafka as rk  # noqa: E402
import scenario as sc  # noqa: E402

check = rk.check
N = 8000
PARTS = 4
STREAM_S = 40  # the stream's duration: long enough for three kills and restarts (~8 s each)


def corpus():
    rng = random.Random(99)
    cons, vows = "bcdfghklmnprstvz", "aeiou"
    vocab = sorted({"".join(rng.choice(cons) + rng.choice(vows) for _ in range(3)) for _ in range(400)})
    out = []
    for i in range(N):
        theme = rng.randrange(4)
        text = " ".join(vocab[(theme * 90 + rng.randrange(120)) % len(vocab)] for _ in range(rng.randint(20, 40)))
        out.append(("tx-%05d" % i, text))
    return out


def main():
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0102-")
    p = rk.unique("c")
    docs_topic, dead, mix = p + ".docs", p + ".deadletter", p + ".mixtures"
    rk.create_topics(addr, {docs_topic: PARTS, dead: 1, mix: 3})
    docs = corpus()
    ids = [d for d, _ in docs]
    feeder = rk.Feeder(addr, docs_topic, [(d.encode(), json.dumps({"id": d, "text": t}).encode(), None, i % PARTS)
                                          for i, (d, t) in enumerate(docs)], STREAM_S)

    model = p
    snapdir = os.path.join(tmp, "snaps")
    props = ["topics=6", "minibatch.docs=50", "minibatch.ms=200", "snapshot.every.batches=1",
             "snapshot.every.ms=0", "snapshot.keep=3", "snapshot.topic=", "status.ms=2000",
             "input.topics=" + docs_topic, "deadletter.topic=" + dead, "output.topic=" + mix,
             "output.top=2", "model.name=" + model, "snapshot.dir=" + snapdir,
             "kafka.transactional.id=" + p + ".txn", "kafka.max.partition.fetch.bytes=16384", "http.port=0"]
    seed = int(os.environ.get("SLDA_CRASH_SEED", time.time()))
    print("SLDA_CRASH_SEED=%d" % seed)
    rk.crash_runs(tmp, addr, props, snapdir, model, N, feeder, random.Random(seed), 300, 0.5)
    header = sc.newest_header(snapdir, model) or {}
    check(header.get("docs") == N, "the final model holds every document once", header.get("docs"), N)

    committed = rk.consume_all(addr, mix, isolation="read_committed")
    seen = collections.Counter(o.key.decode() for o in committed)
    dup = sorted(k for k, c in seen.items() if c > 1)
    missing = sorted(set(ids) - set(seen))
    extra = sorted(set(seen) - set(ids))
    print("read_committed: %d output records, %d distinct ids" % (len(committed), len(seen)))
    check(not missing, "read_committed: every produced id is in the output", len(missing), missing[:5])
    check(not dup, "read_committed: each id exactly once", len(dup), dup[:5],
          [seen[k] for k in dup[:5]])
    check(not extra, "read_committed: no id that was not produced", extra[:5])
    check(all(json.loads(o.value)["id"] == o.key.decode() for o in committed), "output values name their key")
    everything = rk.consume_all(addr, mix, isolation="read_uncommitted")
    print("read_uncommitted sees %d output records (aborted transactions included)" % len(everything))
    return rk.done("0102-realkafka_transactional", tmp)


if __name__ == "__main__":
    sys.exit(main())
