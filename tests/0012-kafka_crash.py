#!/usr/bin/python3
"""0012-kafka_crash - kill -9 three times, restart each time: nothing lost, nothing twice.

20,000 short documents go into a one-partition topic (about 1 MB, well under
the mock broker's ~5 MiB per partition). Run A consumes them without
interruption; run B is killed with SIGKILL at three random points (after a
random number of snapshots, plus a random delay) and restarted each time.
Both end with SIGTERM once their newest snapshot holds every document.
Snapshots are taken after every minibatch, so the kills land between and
during snapshot writes; each restart must first move past the restored state.

Deterministic minibatches: one input partition (Kafka keeps its order),
minibatch.docs=100 with minibatch.ms at its maximum and snapshot.every.ms=0,
so a minibatch closes only on its 100th document and snapshots fall on
minibatch boundaries; 20,000 is a multiple of 100, so the shutdown closes no
partial minibatch. Both runs therefore train on the same 200 minibatches
with the same seed, and run B's final model must equal run A's: same
document, token and update counts, same vocabulary, and the same topic
totals and raw counts within float tolerance (they are in fact expected to
be bit-identical, since a restored snapshot continues bit for bit).
"""
import os
import random
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

N = 20000
PROPS = ["topics=5", "minibatch.docs=100", "minibatch.ms=3600000", "snapshot.every.batches=1",
         "snapshot.every.ms=0", "snapshot.keep=3", "snapshot.topic=", "status.ms=2000",
         "input.topics=docs", "seed=7", "vocab.capacity=4096",
         "kafka.max.partition.fetch.bytes=2048"]


def corpus(path):
    """N short documents over a 300-word synthetic vocabulary (letters only,
    5-8 characters, so no stop word and no short token is dropped)."""
    rng = random.Random(12345)
    cons, vows = "bcdfghklmnprstvz", "aeiou"
    vocab = set()
    while len(vocab) < 300:
        w = "".join(rng.choice(cons) + rng.choice(vows) for _ in range(rng.randint(3, 4)))
        vocab.add(w[: rng.randint(5, 8)])
    vocab = sorted(vocab)
    with open(path, "w") as f:
        for i in range(N):
            theme = rng.randrange(5)
            words = [vocab[(theme * 60 + rng.randrange(80)) % 300] for _ in range(rng.randint(4, 9))]
            f.write(" ".join(words) + "\n")


def started(svc):
    """Wait until the service has its partitions (its signal handlers are in place)."""
    return sc.wait_for(lambda: "kafka: assigned" in svc.text(), 60, "partition assignment")


def run_to_end(svc, snapdir, model, timeout=300):
    started(svc)
    ok = sc.wait_for(lambda: (sc.newest_header(snapdir, model) or {}).get("docs", 0) >= N,
                     timeout, "%s: a snapshot with all %d documents" % (model, N), step=0.3)
    rc = svc.stop()
    check(rc == 0, "%s: SIGTERM -> exit 0" % model, rc)
    return ok


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0012-")
    docs = os.path.join(tmp, "docs.txt")
    corpus(docs)
    print("corpus: %d documents, %d bytes" % (N, os.path.getsize(docs)))
    broker = sc.Broker(tmp, "docs:1,streamlda.deadletter:1", brokers=1, control=True)
    try:
        # Small record batches + small fetches + a 25 ms broker round trip make a
        # run last seconds instead of a fraction of one, so the kills land mid-stream.
        res = subprocess.run([sc.BIN, "produce", "--brokers", broker.addr, "--topic", "docs",
                              "-X", "batch.num.messages=40", docs],
                             capture_output=True, text=True, timeout=120)
        check(res.returncode == 0, "streamlda produce exit 0", res.returncode, res.stderr.strip())

        broker.control("rtt 1 25")
        # Run A: uninterrupted.
        dir_a = os.path.join(tmp, "a")
        svc = sc.Service(tmp, broker.addr, PROPS + ["model.name=a", "snapshot.dir=" + dir_a], name="a")
        run_to_end(svc, dir_a, "a")

        # Run B: three kill -9 at random points, restart each time.
        dir_b = os.path.join(tmp, "b")
        rng = random.Random(int(os.environ.get("SLDA_CRASH_SEED", time.time())))
        targets = sorted(rng.randrange(1000, N - 1000) for _ in range(3))
        print("kill points (documents in the newest snapshot):", targets)
        for i, target in enumerate(targets):
            before = (sc.newest_header(dir_b, "b") or {}).get("docs", 0)
            svc = sc.Service(tmp, broker.addr, PROPS + ["model.name=b", "snapshot.dir=" + dir_b], name="b")
            # at the target, and past the restored state (so every start restores and moves on)
            goal = max(target, before + 100)
            sc.wait_for(lambda: (sc.newest_header(dir_b, "b") or {}).get("docs", 0) >= goal,
                        300, "run B reaching %d documents" % goal, step=0.02)
            time.sleep(rng.random() * 0.3)
            svc.kill9()
            h = sc.newest_header(dir_b, "b") or {}
            print("kill %d: SIGKILL with %s documents in the newest snapshot" % (i + 1, h.get("docs")))
        svc = sc.Service(tmp, broker.addr, PROPS + ["model.name=b", "snapshot.dir=" + dir_b], name="b")
        run_to_end(svc, dir_b, "b")
        restored = svc.text().count("restored ")
        check(restored == 3, "run B restored a snapshot at each of its 3 restarts", restored)

        ha, ida, wa, ra = sc.read_file(sc.snapshots(dir_a, "a")[-1])
        hb, idb, wb, rb = sc.read_file(sc.snapshots(dir_b, "b")[-1])
        for key in ["docs", "tokens", "t"]:
            check(ha[key] == hb[key], "%s equal: uninterrupted vs killed 3 times" % key, ha[key], hb[key])
        check(ha["docs"] == N, "every document counted exactly once", ha["docs"], hb["docs"], N)
        # every minibatch cut at its 100th document, none by a snapshot: the documents are all
        # in the topic before either run starts, so a snapshot that trained the documents read
        # ahead during the previous minibatch's training cut one at random (t 323-333)
        check(ha["t"] == N // 100 and hb["t"] == N // 100, "one update per 100 documents",
              ha["t"], hb["t"], N // 100)
        check(ida == idb and wa == wb, "same vocabulary", len(wa), len(wb))
        check(abs(ha["sigma"] - hb["sigma"]) <= 1e-9 * abs(ha["sigma"]), "same sigma", ha["sigma"], hb["sigma"])
        nz = max(abs(x - y) / max(1.0, abs(x)) for x, y in zip(ha["NZ"], hb["NZ"]))
        check(nz <= 1e-5, "topic totals NZ equal (max relative difference)", nz)
        if ida == idb:
            diff = max(abs(x - y) / max(1e-3, abs(x)) for r1, r2 in zip(ra, rb) for x, y in zip(r1, r2))
            check(diff <= 1e-4, "topic-word counts equal (max relative difference)", diff)
        check(ha["offsets"] == hb["offsets"], "same final offsets", ha["offsets"], hb["offsets"])
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0012-kafka_crash", tmp)


if __name__ == "__main__":
    sys.exit(main())
