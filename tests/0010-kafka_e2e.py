#!/usr/bin/python3
"""0010-kafka_e2e - documents through Kafka into `streamlda run` and out again.

A `streamlda broker` process hosts the mock cluster. Persuasion is produced
by kcat (one paragraph a message), Northanger Abbey by kafka-python (JSON
{"id","text"}, keyed by id). `streamlda run` (own process, output.topic on,
held-out docs on, /metrics on an ephemeral port) consumes everything; then
SIGTERM must give exit 0 and a final snapshot whose document count equals
the documents the service trained on = produced - held out - dead letters.
Also checked: /healthz answers 200 "ok", /metrics carries every documented
metric, each trained document has one output record keyed by its id with
source.* headers and its language (German and Chinese identified, a record's
"lang" over its text; the Austen paragraphs mostly English), the snapshot topic rebuilds (examples/read_snapshot.py)
into the same model as the file, and `streamlda topics` prints K topics.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402

check = sc.check


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0010-")
    persuasion = os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt")
    northanger = os.path.join(sc.SRC, "examples", "janeausten", "northangerabbey.txt")
    broker = sc.Broker(tmp, "documents,streamlda.snapshots:2,streamlda.deadletter,mixtures")
    try:
        n1 = sc.produce_kcat(broker.addr, "documents", persuasion)
        with open(northanger) as f:
            paras = [line.strip() for line in f if line.strip()]
        vals = [json.dumps({"id": "na-%d" % i, "text": p}).encode() for i, p in enumerate(paras)]
        ids = ["na-%d" % i for i in range(len(vals))]
        german = "Die Katze sitzt auf der Matte und schläft, weil es im Haus warm ist"
        multi = {"de": {"text": german}, "zh": {"text": "我们的机器学习研究需要更多的数据和计算"},
                 "fr": {"lang": "fr", "text": german}}  # given: over the German text
        for lang, rec in multi.items():
            for j in range(3):
                ids.append("ml-%s-%d" % (lang, j))
                vals.append(json.dumps(dict(rec, id=ids[-1]), ensure_ascii=False).encode())
        n2 = sc.produce_python(broker.addr, "documents", vals, keys=[i.encode() for i in ids])
        total = n1 + n2
        print("produced %d documents (%d by kcat, %d by kafka-python)" % (total, n1, n2))

        svc = sc.Service(tmp, broker.addr, ["topics=8", "http.port=0", "status.ms=1000",
                                            "heldout.modulo=10", "output.topic=mixtures",
                                            "output.top=3", "minibatch.docs=64",
                                            "snapshot.every.ms=3000", "snapshot.dir=snaps"])
        accounted = lambda: (svc.metric("streamlda_documents_total")
                             + svc.metric("streamlda_heldout_documents_total")
                             + sum(v for k, v in svc.metrics().items()
                                   if k.startswith("streamlda_deadletters_total")))
        sc.wait_for(lambda: accounted() >= total, 100, "every document accounted for")
        m = svc.metrics()
        for name in ["streamlda_documents_total", "streamlda_tokens_total", "streamlda_updates_total",
                     "streamlda_rho", "streamlda_perplexity", "streamlda_vocabulary_words",
                     "streamlda_consumer_lag", "streamlda_snapshots_total",
                     "streamlda_snapshot_seconds", "streamlda_kafka_errors_total",
                     "streamlda_tokens_capped_total",
                     'streamlda_deadletters_total{reason="utf8"}']:
            check(name in m, "/metrics has " + name, m.get(name))
        status, body = svc.get("/healthz")
        check(status == 200 and body.strip() == "ok", "/healthz 200 ok", status, body.strip())
        status, _ = svc.get("/nothing")
        check(status == 404, "unknown path is 404", status)
        trained = m.get("streamlda_documents_total", -1)
        heldout = m.get("streamlda_heldout_documents_total", -1)
        dead = sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
        print("trained %d, held out %d, dead letters %d of %d" % (trained, heldout, dead, total))
        check(trained + heldout + dead == total, "every document trained, held out or dead-lettered",
              trained, heldout, dead, total)
        check(heldout > 0 and trained > 0.8 * total, "held-out fraction is about 1/10", heldout, trained)
        rc = svc.stop()
        check(rc == 0, "SIGTERM -> exit 0", rc)
        log = svc.text()
        check("stopping: final minibatch and snapshot" in log, "service logged its shutdown")

        header, ids, words, rows = sc.read_file(sc.snapshots(os.path.join(tmp, "snaps"), "streamlda")[-1])
        check(header["docs"] == trained, "final snapshot document count", header["docs"], trained)
        offs = {(t, p): o for t, p, o in header["offsets"]}
        print("snapshot offsets:", sorted(offs.items()))
        check(sum(offs.values()) == total, "snapshot offsets cover every message", sum(offs.values()), total)

        newest = sc.snapshots(os.path.join(tmp, "snaps"), "streamlda")[-1]
        res = subprocess.run([sc.BIN, "topics", "-n", "8", newest], capture_output=True, text=True)
        print(res.stdout)
        check(res.returncode == 0 and len(res.stdout.strip().splitlines()) == 8,
              "streamlda topics prints 8 topics", res.returncode)

        outs = sc.reader.fetch_records(broker.addr, "mixtures")
        keys = set()
        good = 0
        langs = {}
        for key, value, hdrs in outs:
            rec = json.loads(value)
            langs[rec["id"]] = rec.get("lang")
            h = dict((k, v.decode()) for k, v in hdrs)
            good += (key.decode() == rec["id"] and len(rec["topics"]) == 3 and rec["model"] == "streamlda"
                     and "source.offset" in h and h.get("source.topic") == "documents")
            keys.add((h.get("source.partition"), h.get("source.offset")))
        check(len(outs) == trained, "one output record per trained document", len(outs), trained)
        check(good == len(outs), "output records well formed (key = id, 3 topics, source headers)", good)
        check(len(keys) == len(outs), "output records have distinct source offsets", len(keys))
        print("first output record:", outs[0][1][:200] if outs else None)
        ml = {i: l for i, l in langs.items() if i.startswith("ml-")}
        check(len(ml) >= 5 and all(l == i.split("-")[1] for i, l in ml.items()),
              "multilingual records: their language in the output (held out: none)", ml)
        na = [l for i, l in langs.items() if i.startswith("na-")]
        check(na.count("en") >= 0.9 * len(na), "Austen's paragraphs: English", na.count("en"), len(na))

        data, man = sc.reader.reassemble(sc.reader.fetch_records(broker.addr, "streamlda.snapshots"),
                                         "streamlda")
        check(data is not None, "snapshot topic holds a complete snapshot", man)
        if data is not None:
            h2 = sc.reader.parse_snapshot(data)[0]
            check(h2["t"] == header["t"] and h2["docs"] == header["docs"],
                  "published snapshot = final file", h2["t"], header["t"], h2["docs"])
        res = subprocess.run([sys.executable, os.path.join(sc.SRC, "examples", "read_snapshot.py"),
                              "--brokers", broker.addr, "-n", "5"], capture_output=True, text=True)
        print(res.stdout[:600])
        check(res.returncode == 0 and "topic 7:" in res.stdout, "examples/read_snapshot.py prints topics",
              res.returncode, res.stderr[-300:])
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0010-kafka_e2e", tmp)


if __name__ == "__main__":
    sys.exit(main())
