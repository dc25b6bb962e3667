#!/usr/bin/python3
"""0054-kafka_threads - the service learns the same model with 1 and 2 threads.

`streamlda run` decodes the messages it polls together on its worker threads
(each tokenised into a bag, the words looked up in message order afterwards)
and pipelines the global step (global.stale=1): neither may change what is
learned. One partition (so the order of the messages is fixed), 3,000
documents of which some are bad (invalid UTF-8, over input.max.bytes, JSON
without text): a service with threads=1 and one with threads=2, each in its
own consumer group, consume everything; after SIGTERM their final snapshots
hold the same topic-word counts bit for bit, the same document count, and
both sent the same dead letters; every minibatch but the last holds
minibatch.docs documents (the service polls and decodes the next minibatch's
messages while one trains: they must not join it).
"""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0054-")
    with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")) as f:
        lines = [line.strip() for line in f if len(line.strip()) > 80]
    lines = (lines * 4)[:3000]
    bad = {}
    for i in range(0, 3000, 97):  # every 97th document is bad, in one of three ways
        kind = (i // 97) % 3
        bad[i] = kind
        if kind == 1:
            lines[i] = "x" * 5000  # over input.max.bytes=4000
        elif kind == 2:
            lines[i] = '{"id": "j%d", "title": "no text field"}' % i
    values = []
    for i, line in enumerate(lines):
        v = line.encode()
        if bad.get(i) == 0:
            v = b"caf\xc3 " + v  # invalid UTF-8
        values.append(v)
    broker = sc.Broker(tmp, "documents,streamlda.deadletter", partitions=1)
    svcs = []
    try:
        sc.produce_python(broker.addr, "documents", values)
        models = {}
        for threads in (1, 2):
            snapdir = os.path.join(tmp, "snaps%d" % threads)
            svc = sc.Service(tmp, broker.addr, [
                "topics=20", "threads=%d" % threads, "http.port=0", "input.format=auto",
                "input.max.bytes=4000", "minibatch.docs=32", "minibatch.ms=3600000",
                "snapshot.every.ms=600000", "snapshot.every.batches=0", "snapshot.topic=",
                "model.name=m%d" % threads,
                "snapshot.dir=" + snapdir], name="svc%d" % threads)
            svcs.append(svc)
            seen = lambda: (svc.metric("streamlda_documents_total") +
                            svc.metric("streamlda_heldout_documents_total") +
                            sum(v for k, v in svc.metrics().items()
                                if k.startswith("streamlda_deadletters_total")))
            # everything handled but the last, partial minibatch (trained at SIGTERM)
            sc.wait_for(lambda: seen() >= 3000 - 32, 120, "threads=%d: the topic consumed" % threads)
            rc = svc.stop()
            check(rc == 0, "threads=%d: SIGTERM -> exit 0" % threads, rc)
            files = sc.snapshots(snapdir, "m%d" % threads)
            check(len(files) >= 1, "threads=%d: a final snapshot" % threads, files)
            if not files:
                continue
            npy = os.path.join(tmp, "m%d.npy" % threads)
            voc = os.path.join(tmp, "m%d.voc" % threads)
            res = subprocess.run([sc.BIN, "export", files[-1], "--npy", npy, "--vocab", voc],
                                 capture_output=True, text=True)
            check(res.returncode == 0, "threads=%d: export" % threads, res.stderr[-200:])
            header = sc.read_file(files[-1])[0]
            with open(npy, "rb") as f, open(voc, "rb") as g:
                models[threads] = (header["docs"], f.read(), g.read())
            # minibatch.ms is an hour: every minibatch holds 32 documents but the last (the
            # next minibatch's messages, polled and decoded while one trains, do not join it)
            check(header["t"] == (header["docs"] + 31) // 32,
                  "threads=%d: minibatches of 32 documents" % threads, header["t"], header["docs"])
            text = svc.text()
            check("dead letter" in text, "threads=%d: dead letters logged" % threads)
        if len(models) == 2:
            check(models[1][0] == models[2][0] and models[1][0] > 2000,
                  "the same number of documents trained", models[1][0], models[2][0])
            check(models[1][2] == models[2][2], "the same vocabulary")
            check(models[1][1] == models[2][1], "the same topic-word counts, bit for bit")
        recs = sc.reader.fetch_records(broker.addr, "streamlda.deadletter")
        nbad = len(bad)
        check(len(recs) == 2 * nbad, "each service sent every dead letter once", len(recs), 2 * nbad)
    finally:
        for svc in svcs:
            if svc.proc.poll() is None:
                svc.stop()
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0054-kafka_threads", tmp)


if __name__ == "__main__":
    sys.exit(main())
