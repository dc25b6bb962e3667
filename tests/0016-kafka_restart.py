#!/usr/bin/python3
"""0016-kafka_restart - restart from snapshot.dir: corrupt snapshots skipped, unwritable dir survived.

Run 1 trains on a first half of the documents and stops (SIGTERM); the
group's committed offsets must then equal the final snapshot's offsets. A
corrupt file that looks newest, and a stale temp file, are planted in
snapshot.dir. Run 2 must skip the corrupt file with a warning, remove the
temp file, restore run 1's snapshot and continue: after the second half
its final snapshot counts every document exactly once. A service given a
snapshot.dir it cannot create (its parent is a regular file) refuses to
start (exit 1, the path named). Run 3's snapshot.dir is replaced by a
regular file while it runs: /healthz turns 503 "cannot write snapshots"
while the service keeps consuming (documents produced after the rename
too), and SIGTERM then exits 1 (no final snapshot possible).
"""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

PROPS = ["topics=4", "http.port=0", "status.ms=1000", "minibatch.docs=40", "minibatch.ms=300",
         "snapshot.every.ms=1000", "snapshot.topic="]


def produce(broker, tmp, lines, tag):
    path = os.path.join(tmp, "part-%s.txt" % tag)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    res = subprocess.run([sc.BIN, "produce", "--brokers", broker.addr, "--topic", "documents", path],
                         capture_output=True, text=True, timeout=120)
    check(res.returncode == 0, "produce %s" % tag, res.returncode, res.stderr.strip())


def accounted(svc):
    m = svc.metrics()
    return m.get("streamlda_documents_total", 0) + sum(
        v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0016-")
    with open(os.path.join(sc.SRC, "examples", "janeausten", "northangerabbey.txt")) as f:
        lines = [line.strip() for line in f if line.strip()][:600]
    snapdir = os.path.join(tmp, "snaps")
    broker = sc.Broker(tmp, "documents")
    try:
        produce(broker, tmp, lines[:300], "1")
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run1")
        sc.wait_for(lambda: accounted(svc) >= 300, 60, "run 1 caught up")
        dead1 = accounted(svc) - svc.metric("streamlda_documents_total")
        check(svc.stop() == 0, "run 1: SIGTERM -> exit 0")
        h1 = sc.newest_header(snapdir, "streamlda")
        check(h1["docs"] + dead1 == 300, "run 1 snapshot: first half", h1["docs"], dead1)

        from kafka import KafkaConsumer, TopicPartition
        cons = KafkaConsumer(bootstrap_servers=broker.addr, group_id="streamlda-streamlda",
                             enable_auto_commit=False)
        committed = {}
        for t, p, o in h1["offsets"]:
            committed[(t, p)] = cons.committed(TopicPartition(t, p))
        cons.close()
        want = {(t, p): o for t, p, o in h1["offsets"]}
        check(committed == want, "committed offsets = final snapshot offsets", committed, want)

        newest = sc.snapshots(snapdir, "streamlda")[-1]
        corrupt = os.path.join(snapdir, "streamlda-%020d.slda" % 99999)
        with open(newest, "rb") as f:
            data = bytearray(f.read())
        data[len(data) // 2] ^= 0xFF  # one flipped byte: the checksum must catch it
        with open(corrupt, "wb") as f:
            f.write(data)
        stale = newest + ".tmp.12345"
        with open(stale, "wb") as f:
            f.write(b"half a snapshot")

        produce(broker, tmp, lines[300:], "2")
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + snapdir], name="run2")
        sc.wait_for(lambda: accounted(svc) >= 300, 60, "run 2 caught up")
        dead2 = accounted(svc) - svc.metric("streamlda_documents_total")
        check(svc.stop() == 0, "run 2: SIGTERM -> exit 0")
        log = svc.text()
        skipped = [l for l in log.splitlines() if "does not load" in l]
        print("\n".join(skipped))
        check(len(skipped) == 1 and "SLDA_ERR_CORRUPT" in skipped[0], "corrupt newest snapshot skipped")
        check("restored " + newest in log, "run 2 restored run 1's snapshot")
        check(not os.path.exists(stale), "stale temp file removed")
        os.unlink(corrupt)
        h2 = sc.newest_header(snapdir, "streamlda")
        check(h2["docs"] + dead1 + dead2 == 600, "run 2 snapshot: every document exactly once",
              h2["docs"], dead1 + dead2)

        blocker = os.path.join(tmp, "not-a-dir")
        with open(blocker, "w") as f:
            f.write("x")
        res = subprocess.run([sc.BIN, "run", "-X", "kafka.bootstrap.servers=" + broker.addr,
                              "-X", "snapshot.dir=" + os.path.join(blocker, "snaps")],
                             capture_output=True, text=True, timeout=60)
        check(res.returncode == 1 and blocker in res.stderr,
              "snapshot.dir under a regular file: exit 1 at start, path named",
              res.returncode, res.stderr.strip()[-300:])

        dir3 = os.path.join(tmp, "snaps3")
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + dir3, "model.name=other"],
                         name="run3")
        sc.wait_for(lambda: accounted(svc) >= 100, 60, "run 3 started consuming")
        os.rename(dir3, dir3 + ".gone")  # the directory disappears; a file takes its place
        with open(dir3, "w") as f:
            f.write("x")
        # documents that arrive after the directory went: under load run 3 may have read and
        # snapshotted all 600 before the rename, leaving no snapshot to fail (no 503, and a
        # clean final stop)
        produce(broker, tmp, lines[:60], "3")
        bad = sc.wait_for(lambda: svc.get("/healthz")[0] == 503 and "snapshot" in svc.get("/healthz")[1],
                          60, "/healthz 503 for snapshots")
        check(bad, "unwritable snapshot.dir -> /healthz 503", svc.get("/healthz"))
        sc.wait_for(lambda: accounted(svc) >= 660, 60, "run 3 consumed everything")
        check(accounted(svc) >= 660, "run 3 keeps consuming", accounted(svc))
        rc = svc.stop()
        check(rc == 1, "run 3: final snapshot impossible -> exit 1", rc)
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0016-kafka_restart", tmp)


if __name__ == "__main__":
    sys.exit(main())
