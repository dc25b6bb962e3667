#!/usr/bin/python3
"""0057-kafka_counted - what the service leaves out is counted, and its figures say what they are.

On the embedded cluster, with vocab.capacity=1000 and the tracker on:
  - words with spaces (a JSON "tokens" field can make them) stay whole in /api/topics'
    entered/left lists (they came out split at the spaces: "new york" as "new", "york");
  - a document of 3,000 distinct new words trains at most 1,000 of them: the occurrences the
    full vocabulary refused are counted in streamlda_dropped_tokens_total, with one warning,
    so that trained tokens + dropped tokens = the tokens produced (they vanished uncounted);
  - without held-out documents the perplexity is no figure: null in /api/status (it said 0),
    NaN in /metrics (it said 0);
  - streamlda_model_updates is the model's update count (it stayed 0 beside
    streamlda_updates_total outside replicas): equal to streamlda_updates_total in a fresh run,
    to the restored snapshot's after a restart, where streamlda_updates_total starts again at 0;
  - the restarted embedded cluster is new and empty, its partitions numbered from 0 again:
    500 documents produced to partition 0 as soon as it is up are all trained, none counted
    lost. The restored snapshot's offsets are the old cluster's (partition 0 ended at 441):
    started at them, the service skipped the first 441 of the 500 whenever they were there
    before its first fetch (the consumer joins after the mock's 3 s initial rebalance delay;
    an offset past the end instead is reset to the earliest, so only this order shows it);
A message over the embedded cluster's limit between good ones (kcat with a raised
message.max.bytes): refused at produce, the producer told so, and every good message of its
partition trained (the cluster took it, and dropped the partition's other messages with it:
neither trained nor dead-lettered, no count).
Then, under a file-size limit (RLIMIT_FSIZE, as a full disk) that the snapshots outgrow: no
tracker state is left without its snapshot (a failed snapshot left its `.track.json`), and
one left by an earlier run is removed with the next pruning.
"""
import json
import math
import os
import random
import re
import resource
import signal
import string
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

MODEL = "streamlda"


def embedded(tmp, props, name):
    svc = sc.Service(tmp, "embedded", ["http.port=0", "status.ms=0"] + props, name=name)
    m = sc.wait_for(lambda: re.findall(r"bootstrap: (\S+)", svc.text()), 120, "the bootstrap line")
    return svc, (m[0] if m else "")


def produce_jsonl(tmp, addr, docs, tag):
    path = os.path.join(tmp, tag + ".jsonl")
    sc.write_jsonl(path, docs)
    res = subprocess.run([sc.BIN, "produce", "--brokers", addr, "--topic", "documents",
                          "--format", "jsonl", "--partition", "0", path],
                         capture_output=True, text=True, timeout=300)
    check(res.returncode == 0, "produce %s" % tag, res.returncode, res.stderr.strip()[-200:])


def word(rng, n=7):
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def accounted(svc):
    m = svc.metrics()
    return m.get("streamlda_documents_total", 0) + sum(
        v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))


def counted_run(tmp):
    rng = random.Random(57)
    snapdir = os.path.join(tmp, "snaps")
    # a snapshot (and the tracker's comparison) after each 200 documents: after the first
    # phrases and after the second, so the last comparison lists what entered and left
    props = ["topics=4", "vocab.capacity=1000", "minibatch.docs=20", "minibatch.ms=3000",
             "snapshot.every.batches=10", "snapshot.dir=" + snapdir, "track.warmup.docs=10"]
    svc, addr = embedded(tmp, props, "counted")
    try:
        # words with spaces: two sets of phrases, one after the other, so that the topics'
        # top words change between snapshots
        p1 = ["new york", "ice cream", "hot dog", "big apple", "san francisco", "red  sea "]
        p2 = ["los angeles", "fish and chips", "tea time", "rain forest", "north pole", "deep sea"]
        phrases = set(p1 + p2)
        sent = 0
        for tag, ph in (("phrases1", p1), ("phrases2", p2)):
            docs = [{"id": "%s-%d" % (tag, i), "tokens": [rng.choice(ph) for _ in range(20)]}
                    for i in range(200)]
            produce_jsonl(tmp, addr, docs, tag)
            sent += len(docs)
            check(sc.wait_for(lambda: accounted(svc) >= sent, 300, "the %s trained" % tag),
                  "the %s documents trained" % tag, accounted(svc), sent)
        listed_now = lambda: [w for t in (svc.api("topics") or {}).get("topics", [])
                              for w in t["entered"] + t["left"]]
        listed = sc.wait_for(listed_now, 120, "words entered and left in /api/topics") or []
        print("entered/left:", sorted(set(listed)))
        check(listed and set(listed) <= phrases,
              "/api/topics lists whole words in entered/left (spaces kept)",
              sorted(set(listed) - phrases))
        check(any(" " in w for w in listed), "a word with spaces among them", listed[:12])

        # a document of 3,000 distinct new words, then small ones: what the full vocabulary
        # refused is counted, and counts add up
        big = [word(rng) for _ in range(3000)]
        small = [[word(rng, 3) for _ in range(5)] for _ in range(40)]
        docs = [{"id": "big", "text": " ".join(big)}] + [
            {"id": "small-%d" % i, "text": " ".join(s)} for i, s in enumerate(small)]
        tokens_before = svc.metric("streamlda_tokens_total")
        produce_jsonl(tmp, addr, docs, "refused")
        sent += len(docs)
        check(sc.wait_for(lambda: accounted(svc) >= sent, 300, "the refusals' documents"),
              "the documents trained or dead-lettered", accounted(svc), sent)
        m = svc.metrics()
        produced = len(big) + sum(len(s) for s in small)
        trained = m.get("streamlda_tokens_total", -1) - tokens_before
        dropped = m.get("streamlda_dropped_tokens_total", -1)
        print("tokens produced %d, trained %d, dropped %s" % (produced, trained, dropped))
        check(dropped >= len(big) - 1000, "at least 2,000 occurrences counted as dropped", dropped)
        check(trained + dropped == produced, "trained + dropped tokens = tokens produced",
              trained, dropped, produced)
        log = svc.text()
        n_warn = len(re.findall(r"warning: \d+ occurrence\(s\) of new words left out", log))
        check(n_warn == 1, "one warning names the dropped words", n_warn)

        # figures that say what they are
        status = svc.api("status") or {}
        check("perplexity" in status and status["perplexity"] is None,
              "/api/status: perplexity null without held-out documents", status.get("perplexity"))
        pp = m.get("streamlda_perplexity", 0)
        check(isinstance(pp, float) and math.isnan(pp), "/metrics: streamlda_perplexity NaN", pp)
        # the last minibatch's update may be pending (global.stale=1: applied with the next
        # minibatch or the next snapshot)
        lag = m.get("streamlda_updates_total", -2) - m.get("streamlda_model_updates", -1)
        check(m.get("streamlda_updates_total", 0) > 1 and lag in (0, 1),
              "fresh model: streamlda_model_updates = streamlda_updates_total, or 1 behind",
              m.get("streamlda_model_updates"), m.get("streamlda_updates_total"))
        check(m.get("streamlda_model_documents", -1) == m.get("streamlda_documents_total", -2),
              "fresh model: streamlda_model_documents = streamlda_documents_total",
              m.get("streamlda_model_documents"), m.get("streamlda_documents_total"))
    finally:
        rc = svc.stop()
    check(rc == 0, "SIGTERM -> exit 0", rc)
    header = sc.newest_header(snapdir, MODEL)

    # a restart restores the model: its counts, not this process's
    svc, _ = embedded(tmp, props, "restarted")
    try:
        want = (header or {}).get("t", -1)
        got = sc.wait_for(lambda: svc.metric("streamlda_model_updates") == want, 120,
                          "the restored update count")
        m = svc.metrics()
        check(got, "restarted: streamlda_model_updates = the snapshot's update count",
              m.get("streamlda_model_updates"), want)
        check(m.get("streamlda_updates_total", -1) == 0,
              "restarted: streamlda_updates_total counts this process's updates (0)",
              m.get("streamlda_updates_total"))
        check(m.get("streamlda_model_documents", -1) == (header or {}).get("docs"),
              "restarted: streamlda_model_documents = the snapshot's documents",
              m.get("streamlda_model_documents"), (header or {}).get("docs"))
    finally:
        rc = svc.stop()
    check(rc == 0, "restarted: SIGTERM -> exit 0", rc)

    # started again: the new cluster numbers partition 0 from 0, written to at once
    svc, addr = embedded(tmp, props, "again")
    try:
        known = ["new york", "ice cream", "tea time", "deep sea"]  # in the full vocabulary
        docs = [{"id": "again-%d" % i, "tokens": [known[(i + j) % 4] for j in range(8)]}
                for i in range(500)]
        produce_jsonl(tmp, addr, docs, "again")
        got = sc.wait_progress(lambda: accounted(svc), 500, "the 500 documents after the restart",
                               stall=60)
        m = svc.metrics()
        check(got >= 500 and m.get("streamlda_documents_total") == 500,
              "again: the 500 documents of the new cluster's partition 0 trained",
              m.get("streamlda_documents_total"), accounted(svc))
        check(m.get("streamlda_lost_messages_total", -1) == 0, "again: no message lost",
              m.get("streamlda_lost_messages_total"))
    finally:
        rc = svc.stop()
    check(rc == 0, "again: SIGTERM -> exit 0", rc)


def kcat_produce(addr, path, extra=()):
    return subprocess.run(["kcat", "-P", "-b", addr, "-t", "documents", "-p", "0", "-l",
                           "-X", "message.timeout.ms=20000"] + list(extra) + [path],
                          capture_output=True, text=True, timeout=120)


def big_message_run(tmp):
    """Good, too big, good on one partition of the embedded cluster."""
    svc, addr = embedded(tmp, ["topics=4", "minibatch.docs=5", "minibatch.ms=200"], "big")
    try:
        good = os.path.join(tmp, "good.txt")
        with open(good, "w") as f:
            f.writelines("good document %d about cats and dogs running fast\n" % i
                         for i in range(10))
        res = kcat_produce(addr, good)
        check(res.returncode == 0, "kcat: the first good messages", res.returncode, res.stderr[-200:])
        check(sc.wait_for(lambda: accounted(svc) >= 10, 120, "the first good messages"),
              "the first good messages trained", accounted(svc))
        big = os.path.join(tmp, "big.txt")
        rng = random.Random(5)
        with open(big, "w") as f:  # about 6 MiB in one message
            f.write(" ".join(word(rng) for _ in range(650000)) + "\n")
        res = kcat_produce(addr, big, ["-X", "message.max.bytes=10000000"])
        print("kcat, the big message: rc %d: %s" % (res.returncode, res.stderr.strip()[-300:]))
        check(res.returncode != 0, "a message over the cluster's limit is refused at produce",
              res.returncode)
        res = kcat_produce(addr, good)
        check(res.returncode == 0, "kcat: the next good messages", res.returncode, res.stderr[-200:])
        got = sc.wait_for(lambda: accounted(svc) >= 20, 120, "every good message")
        m = svc.metrics()
        check(got and accounted(svc) == 20, "every good message trained or dead-lettered (20)",
              accounted(svc))
        check(m.get("streamlda_documents_total") == 20, "the 20 good messages trained",
              m.get("streamlda_documents_total"))
        check(m.get("streamlda_lost_messages_total", -1) == 0, "no message lost",
              m.get("streamlda_lost_messages_total"))
        check("Invalid request size" in svc.text(), "the service's log names the refused request")
    finally:
        rc = svc.stop()
    check(rc == 0, "big: SIGTERM -> exit 0", rc)


def orphans(snapdir):
    names = set(os.listdir(snapdir)) if os.path.isdir(snapdir) else set()
    return sorted(n for n in names if n.endswith(".slda.track.json") and n[:-11] not in names)


def limit_files(limit):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


def full_disk_run(tmp):
    """Snapshots outgrow a 400 kB file-size limit while the tracker's states stay small."""
    rng = random.Random(7)
    snapdir = os.path.join(tmp, "full")
    os.makedirs(snapdir)
    stale = os.path.join(snapdir, MODEL + "-%020d.slda.track.json" % 3)
    with open(stale, "w") as f:
        f.write("{}")  # an earlier run's state without its snapshot
    cmd = [sc.BIN, "run", "--embedded", "-X", "http.port=0", "-X", "status.ms=0", "-X", "topics=8",
           "-X", "minibatch.docs=25", "-X", "minibatch.ms=200", "-X", "snapshot.every.batches=1",
           "-X", "snapshot.keep=2", "-X", "snapshot.dir=" + snapdir]
    logpath = os.path.join(tmp, "full.log")
    with open(logpath, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=log, cwd=tmp,
                                preexec_fn=limit_files(400 * 1024))
    sc.PROCS.append(proc)
    text = lambda: open(logpath, errors="replace").read()
    m = sc.wait_for(lambda: re.findall(r"bootstrap: (\S+)", text()), 120, "the bootstrap line")
    addr = m[0] if m else ""
    try:
        sent = 0
        for part in range(8):  # 150 new words a document: about 30,000 words in the end
            docs = [{"id": "w%d-%d" % (part, i), "text": " ".join(word(rng) for _ in range(150))}
                    for i in range(25)]
            produce_jsonl(tmp, addr, docs, "full%d" % part)
            sent += len(docs)
        failed = sc.wait_for(lambda: re.search(r"error: snapshot: ", text()), 300,
                             "a snapshot that does not fit")
        check(failed, "a snapshot outgrew the limit", re.findall(r"error: snapshot: .*", text())[:1])
    finally:
        proc.send_signal(signal.SIGTERM)  # its final snapshot does not fit either: exit 1
        try:
            rc = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "hung"
    check(rc == 1, "SIGTERM with snapshots that do not fit -> exit 1", rc)
    check(not os.path.exists(stale), "an earlier run's state without its snapshot is pruned",
          stale)
    left = orphans(snapdir)
    check(not left, "no tracker state without its snapshot", left, sorted(os.listdir(snapdir)))


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0057-")
    counted_run(tmp)
    big_message_run(tmp)
    full_disk_run(tmp)
    return sc.done("0057-kafka_counted", tmp)


if __name__ == "__main__":
    sys.exit(main())
