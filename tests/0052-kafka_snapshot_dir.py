#!/usr/bin/python3
"""0052-kafka_snapshot_dir - one writer per model; pruning and restore by what loads; settings vs snapshot; replays.

Defects of the old service, each checked here on the mock cluster:
  1. Two `streamlda run` on one snapshot.dir and model.name overwrote and pruned each
     other's snapshots and both exited 0. Now the second exits non-zero at once, naming
     the holder (its pid).
  2. The stale-temp cleanup of model "streamlda" deleted a temp file of model
     "streamlda-en". Now only this model's exact names are cleaned.
  3. With three unloadable higher-numbered files in the directory (corrupt, truncated,
     garbage), pruning kept the highest *numbers*: each new snapshot was deleted right after
     it was written, and the next restart began a fresh model (documents lost). Now the
     unloadable files are left alone, this run's snapshots survive, and a restart restores
     the newest loadable one: the final model counts every document exactly once.
  4. A directory whose snapshots of the model all fail to load: the service refuses to
     start (exit 1, the remedy named); --fresh starts a new model beside them.
  5. Settings that contradict the restored snapshot were silently dropped. Now an explicit
     model-defining one (topics) is an error naming it; tunables (alpha, local) are
     applied and logged; text.* left at their defaults follow the snapshot (an old snapshot
     keeps the old tokenizer), explicit ones apply with a warning.
  6. A restart from a snapshot older than the group's committed offsets (outputs of the
     replayed documents were already delivered) produced their output records again.
     Now they are trained (the model counts them once) without a second output record.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

PROPS = ["topics=4", "http.port=0", "status.ms=1000", "minibatch.docs=40", "minibatch.ms=300",
         "snapshot.every.ms=500", "snapshot.topic=", "snapshot.keep=2",
         "snapshot.history=0"]  # the newest 2 alone: the history (io/snapdir.c) has its own test


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0052-")
    with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")) as f:
        lines = [line.strip() for line in f if len(line.strip()) > 200]  # never all stop words
    broker = sc.Broker(tmp, "documents,mix,streamlda.deadletter")
    produced = [0]

    def produce(docs, tag):
        produced[0] += sc.produce_lines(broker.addr, tmp, docs, tag)

    def run(props, name):
        return sc.Service(tmp, broker.addr, PROPS + props, name=name)

    def settle(svc, n):
        return sc.wait_for(lambda: svc.metric("streamlda_documents_total") >= n and
                           svc.metric("streamlda_consumer_lag") == 0, 60, "%d trained" % n)

    def oneshot(props):
        cmd = [sc.BIN, "run", "-X", "kafka.bootstrap.servers=" + broker.addr]
        for p in sc.FAST_GROUP + PROPS + props:
            cmd += ["-X", p]
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=tmp)
        except subprocess.TimeoutExpired as exc:
            return exc  # still running after 20 s

    d = os.path.join(tmp, "snaps")
    os.makedirs(d)
    other_temp = os.path.join(d, "streamlda-en-%020d.slda.tmp.77" % 5)
    with open(other_temp, "w") as f:
        f.write("another model's writer")
    svc = None
    try:
        produce(lines[0:150], 1)
        svc = run(["snapshot.dir=" + d], "a")
        check(settle(svc, 150), "run a trained part 1")
        check(os.path.exists(other_temp), "another model's temp file is not removed")
        res = oneshot(["snapshot.dir=" + d])
        rc = getattr(res, "returncode", "still running")
        check(rc not in (0, "still running") and "in use" in res.stderr and
              "pid %d" % svc.proc.pid in res.stderr, "a second writer is refused, naming the holder",
              rc, getattr(res, "stderr", "")[-300:])
        check(svc.stop() == 0, "run a: SIGTERM -> exit 0")
        ours = sc.snapshots(d, "streamlda")
        first = ours[-1]
        with open(first, "rb") as f:
            data = bytearray(f.read())
        bad = [os.path.join(d, "streamlda-%020d.slda" % n) for n in (99999997, 99999998, 99999999)]
        flipped = bytearray(data)
        flipped[len(flipped) // 2] ^= 0xFF
        for path, content in zip(bad, [bytes(flipped), bytes(data[:len(data) // 2]), b"not a snapshot"]):
            with open(path, "wb") as f:
                f.write(content)

        produce(lines[150:300], 2)
        svc = run(["snapshot.dir=" + d], "b")
        check(settle(svc, 150), "run b trained part 2")
        ours_now = lambda: [p for p in sc.snapshots(d, "streamlda") if p not in bad]
        # pruned once the second is written (a condition, not a pause: under load it can lag)
        sc.wait_for(lambda: len(ours_now()) == 2 and first not in ours_now(), 120,
                    "run b's two snapshots, run a's pruned")
        mine = ours_now()
        check(len(mine) == 2 and first not in mine, "run b's snapshots survive, pruned to snapshot.keep",
              [os.path.basename(p) for p in mine])
        check(all(os.path.exists(p) for p in bad), "unloadable snapshots are left alone")
        check("restored " + first in svc.text(), "run b restored run a's snapshot")
        check(svc.stop() == 0, "run b: SIGTERM -> exit 0")

        produce(lines[300:400], 3)
        svc = run(["snapshot.dir=" + d], "c")
        check(settle(svc, 100), "run c trained part 3")
        check(svc.stop() == 0, "run c: SIGTERM -> exit 0")
        h = sc.read_file([p for p in sc.snapshots(d, "streamlda") if p not in bad][-1])[0]
        check(h["docs"] == 400, "every document exactly once after restarts beside unloadable files",
              h["docs"])

        # 4: nothing loads
        d2 = os.path.join(tmp, "snaps2")
        os.makedirs(d2)
        with open(os.path.join(d2, "m2-%020d.slda" % 7), "wb") as f:
            f.write(bytes(flipped))
        res = oneshot(["snapshot.dir=" + d2, "model.name=m2"])
        rc = getattr(res, "returncode", "still running")
        check(rc == 1 and "--fresh" in res.stderr and "none loads" in res.stderr,
              "no loadable snapshot: refuses to start, names --fresh", rc, getattr(res, "stderr", "")[-300:])
        svc = sc.Service(tmp, broker.addr, PROPS + ["snapshot.dir=" + d2, "model.name=m2"], name="fresh")
        svc.proc.kill()
        svc.proc.wait()
        cmd = svc.cmd + ["--fresh"]
        fresh = subprocess.Popen(cmd, stdout=open(os.path.join(tmp, "fresh2.log"), "w"),
                                 stderr=subprocess.STDOUT, cwd=tmp)
        sc.PROCS.append(fresh)
        ok = sc.wait_for(lambda: "assigned" in open(os.path.join(tmp, "fresh2.log")).read(), 30,
                         "--fresh started")
        check(ok and fresh.poll() is None, "--fresh starts a new model beside them")
        fresh.send_signal(signal.SIGTERM)
        check(fresh.wait(60) == 0, "--fresh run: SIGTERM -> exit 0")
        check(os.path.exists(os.path.join(d2, "m2-%020d.slda" % 7)), "the unloadable file stays")

        # 5: settings against the restored snapshot (K=4)
        res = oneshot(["snapshot.dir=" + d, "topics=7"])
        rc = getattr(res, "returncode", "still running")
        check(rc == 1 and "topics" in res.stderr, "explicit topics=7 against a K=4 snapshot: error",
              rc, getattr(res, "stderr", "")[-300:])
        svc = run(["snapshot.dir=" + d, "alpha=0.5", "local=cgs"], "tune")
        sc.wait_for(lambda: "assigned" in svc.text(), 30, "tune started")
        log = svc.text()
        check("alpha=0.5 applied" in log and "local=cgs applied" in log, "tunables applied and logged",
              [l for l in log.splitlines() if "restore:" in l])
        check(svc.stop() == 0, "tune: SIGTERM -> exit 0")
        # text.* decide the vocabulary: an old snapshot (no text rules: the old tokenizer)
        # keeps its tokenizer unless a rule is given explicitly
        fx = os.path.join(tmp, "fixture")
        os.makedirs(fx)
        shutil.copy(os.path.join(sc.SRC, "tests", "fixtures", "snapshot-v1-k3.slda"),
                    os.path.join(fx, "fx-%020d.slda" % 1))
        svc = run(["snapshot.dir=" + fx, "model.name=fx", "topics=3", "text.html=decode"], "fx")
        sc.wait_for(lambda: "assigned" in svc.text(), 30, "fx started")
        log = svc.text()
        check("text.urls=keep from the restored snapshot" in log and
              "text.html=decode applied although" in log,
              "text.* defaults follow the snapshot, explicit ones apply with a warning",
              [l for l in log.splitlines() if "text." in l])
        check(svc.stop() == 0, "fx: SIGTERM -> exit 0")

        # 6: replays after a restore from an older snapshot
        r = os.path.join(tmp, "replay")
        rp = ["snapshot.dir=" + r, "model.name=rp", "output.topic=mix"]
        svc = run(rp, "rp1")
        check(settle(svc, 400), "rp1 trained everything so far")
        check(svc.stop() == 0, "rp1: SIGTERM -> exit 0")
        keep = sc.snapshots(r, "rp")[-1]
        shutil.copy(keep, keep + ".saved")
        produce(lines[400:500], 4)
        svc = run(rp, "rp2")
        check(settle(svc, 100), "rp2 trained part 4")
        sc.wait_for(lambda: svc.metric("streamlda_outputs_total") >= 100, 30, "rp2 outputs")
        check(svc.stop() == 0, "rp2: SIGTERM -> exit 0")
        for p in sc.snapshots(r, "rp"):
            os.unlink(p)
        shutil.move(keep + ".saved", keep)
        svc = run(rp, "rp3")
        check(settle(svc, 100), "rp3 replayed part 4")
        check(svc.stop() == 0, "rp3: SIGTERM -> exit 0")
        h = sc.read_file(sc.snapshots(r, "rp")[-1])[0]
        check(h["docs"] == 500, "the replayed documents count once in the model", h["docs"])
        recs = sc.reader.fetch_records(broker.addr, "mix")
        coords = [tuple(v.decode() for k, v in hdrs if k in ("source.partition", "source.offset"))
                  for _, _, hdrs in recs]
        check(len(coords) == 500 and len(set(coords)) == 500,
              "one output record per document, none produced twice", len(coords), len(set(coords)))
        check("replayed" in svc.text(), "the replay is logged")
    finally:
        if svc and svc.proc.poll() is None:
            svc.stop()
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0052-kafka_snapshot_dir", tmp)


if __name__ == "__main__":
    sys.exit(main())
