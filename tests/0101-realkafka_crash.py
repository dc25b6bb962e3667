#!/usr/bin/env python3
"""0101-realkafka_crash - kill -9 three times on a real broker: every document counted exactly once.

20,000 documents of about 1,200 bytes (a 300-word synthetic vocabulary)
stream into a 4-partition topic over about 40 s, 5,000 to each partition:
about 6 MB in every partition, more than the ~5 MiB a partition of
librdkafka's mock cluster keeps (it silently drops older records; tests/0012
stays under it with short documents and one partition). While they stream,
`streamlda run` (a snapshot after every minibatch of 100) is killed with
SIGKILL three times, each time once it has trained 1,000 documents and
written a snapshot of its own, plus a random delay of up to 2 s, right
after it trains a minibatch, and restarted; every kill must land while the stream flows and every restart
must restore a snapshot (realkafka.crash_runs). The last run ends with
SIGTERM once its newest snapshot holds every document. The final model must
hold exactly 20,000 documents (read from the snapshot, as 0012 does), its
offsets must be exactly the 5,000 of each partition, and nothing may have
been dead-lettered. Set SLDA_CRASH_SEED to replay a run's random delays.
"""

import os
import random
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import realkafka as rk  # noqa: E402
import scenario as sc  # noqa: E402

check = rk.check
N = 20000
PARTS = 4
MIB5 = 5 * 1024 * 1024
STREAM_S = 40  # the stream's duration: long enough for three kills and restarts (~8 s each)


def corpus():
    """N documents of 150-170 words of 5-8 letters (no stop word, none too short)."""
    rng = random.Random(4242)
    cons, vows = "bcdfghklmnprstvz", "aeiou"
    vocab = set()
    while len(vocab) < 300:
        w = "".join(rng.choice(cons) + rng.choice(vows) for _ in range(4))
        vocab.add(w[: rng.randint(5, 8)])
    vocab = sorted(vocab)
    docs = []
    for _ in range(N):
        theme = rng.randrange(5)
        words = [vocab[(theme * 60 + rng.randrange(80)) % 300] for _ in range(rng.randint(150, 170))]
        docs.append(" ".join(words).encode())
    return docs


def main():
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0101-")
    p = rk.unique("b")
    docs_topic, dead = p + ".docs", p + ".deadletter"
    rk.create_topics(addr, {docs_topic: PARTS, dead: 1})
    docs = corpus()
    per_part = [0] * PARTS
    for i, d in enumerate(docs):
        per_part[i % PARTS] += len(d)
    print("streaming %d documents over %d s, bytes per partition %s" % (N, STREAM_S, per_part))
    check(max(per_part) > MIB5, "more than 5 MiB in one partition (the mock cluster keeps ~5 MiB)",
          max(per_part), MIB5)
    feeder = rk.Feeder(addr, docs_topic, [(None, d, None, i % PARTS) for i, d in enumerate(docs)], STREAM_S)

    model = p
    snapdir = os.path.join(tmp, "snaps")
    props = ["topics=5", "minibatch.docs=100", "snapshot.every.batches=1", "snapshot.every.ms=0",
             "snapshot.keep=3", "snapshot.topic=", "status.ms=2000", "input.topics=" + docs_topic,
             "deadletter.topic=" + dead, "model.name=" + model, "snapshot.dir=" + snapdir,
             "seed=7", "vocab.capacity=4096", "http.port=0", "kafka.max.partition.fetch.bytes=65536"]
    seed = int(os.environ.get("SLDA_CRASH_SEED", time.time()))
    print("SLDA_CRASH_SEED=%d" % seed)
    svc = rk.crash_runs(tmp, addr, props, snapdir, model, N, feeder, random.Random(seed), 1000, 2.0)
    m = svc.last_metrics
    hw = rk.high_watermarks(addr, docs_topic)
    check(hw == {q: N // PARTS for q in range(PARTS)}, "the topic holds every document (high watermarks)", hw)

    files = sc.snapshots(snapdir, model)
    header = sc.read_file(files[-1])[0] if files else {}
    print("final snapshot %s: docs %s tokens %s updates %s" % (files[-1] if files else None, header.get("docs"),
                                                             header.get("tokens"), header.get("t")))
    check(header.get("docs") == N, "the final model holds exactly the documents produced", header.get("docs"), N)
    offs = sorted((part, o) for t, part, o in header.get("offsets", []) if t == docs_topic)
    check(offs == [(q, N // PARTS) for q in range(PARTS)], "final offsets = every message of every partition", offs)
    check(m.get("streamlda_documents_total", -1) >= 0, "/metrics answered", len(m))
    dl = sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
    dlt = rk.consume_all(addr, dead)
    check(dl == 0 and not dlt, "no document was dead-lettered", dl, len(dlt))
    return rk.done("0101-realkafka_crash", tmp)


if __name__ == "__main__":
    sys.exit(main())
