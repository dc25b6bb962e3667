#!/usr/bin/python3
"""0011-kafka_deadletter - every kind of bad message lands in the dead-letter topic.

Good documents are mixed with bad ones of each kind: undecodable and
truncated MessagePack (SLDA_ERR_PARSE; input.format=auto reads anything
that is not MessagePack and not valid JSON as text), invalid UTF-8 (SLDA_ERR_UTF8), an empty value
and a value of stop words only (SLDA_ERR_EMPTY), and a value over
input.max.bytes (SLDA_ERR_TOO_LARGE), each with a key and a header of its
own. Checked: the service neither crashes nor stops; each bad message is in
deadletter.topic once, with its original key, value and headers plus
"error", "error.code" and source.topic/partition/offset pointing at the
original; /metrics counts each reason; the snapshot's document count equals
the good documents only (the model is untouched by the bad ones) while its
offsets cover every message (dead letters are accounted for).
"""
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

BAD = [  # (key, value, expected error.code, metrics reason)
    (b"cut-msgpack", b"\x82\xa2id\xa1x\xa4text", "SLDA_ERR_PARSE", "parse"),
    (b"bad-msgpack", b"\x82\xa2id\xc1\xc1\xc1", "SLDA_ERR_PARSE", "parse"),
    (b"bad-utf8", b"caf\xc3 au lait \xff\xfe broken bytes", "SLDA_ERR_UTF8", "utf8"),
    (b"empty", b"", "SLDA_ERR_EMPTY", "empty"),
    (b"stopwords", b"the and of to a in is it", "SLDA_ERR_EMPTY", "empty"),
    (b"too-large", b"elephant " * 400, "SLDA_ERR_TOO_LARGE", "too_large"),
]


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0011-")
    broker = sc.Broker(tmp, "documents,deadletters,streamlda.snapshots")
    try:
        with open(os.path.join(sc.SRC, "examples", "janeausten", "persuasion.txt"), "rb") as f:
            good = [line.strip()[:2000] for line in f if line.strip()][:300]
        values, keys, headers = [], [], []
        for i, g in enumerate(good):
            values.append(g)
            keys.append(b"good-%d" % i)
            headers.append([("kind", b"good")])
            if i % 40 == 7 and i // 40 < len(BAD):
                k, v, _, _ = BAD[i // 40]
                values.append(v)
                keys.append(k)
                headers.append([("kind", b"bad"), ("origin", k)])
        sc.produce_python(broker.addr, "documents", values, keys, headers)
        print("produced %d good and %d bad messages" % (len(good), len(BAD)))

        svc = sc.Service(tmp, broker.addr, ["topics=5", "http.port=0", "status.ms=1000",
                                            "input.max.bytes=2500", "deadletter.topic=deadletters",
                                            "snapshot.dir=snaps", "minibatch.docs=50"])
        total = len(values)
        dead_total = lambda m: sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
        sc.wait_for(lambda: (lambda m: m.get("streamlda_documents_total", 0) + dead_total(m))(svc.metrics())
                    >= total, 90, "all messages accounted for")
        m = svc.metrics()
        for reason in ["parse", "utf8", "empty", "too_large"]:
            want = sum(1 for b in BAD if b[3] == reason)
            got = m.get('streamlda_deadletters_total{reason="%s"}' % reason)
            check(got == want, "dead letters counted for reason %s" % reason, got, want)
        check(svc.proc.poll() is None, "service still running after the bad messages")
        rc = svc.stop()
        check(rc == 0, "SIGTERM -> exit 0", rc)

        header = sc.newest_header(os.path.join(tmp, "snaps"), "streamlda")
        check(header["docs"] == len(good), "snapshot counts the good documents only", header["docs"], len(good))
        covered = sum(o for _, _, o in header["offsets"])
        check(covered == total, "snapshot offsets cover good and bad messages", covered, total)

        records = sc.reader.fetch_records(broker.addr, "deadletters")
        check(len(records) == len(BAD), "one dead letter per bad message", len(records), len(BAD))
        from kafka import KafkaConsumer, TopicPartition  # the originals, by coordinates
        cons = KafkaConsumer(bootstrap_servers=broker.addr, enable_auto_commit=False)
        for key, value, hdrs in records:
            h = {}
            for k, v in hdrs:
                h[k] = v.decode("utf-8", "replace")
            want = [b for b in BAD if b[0] == key]
            check(len(want) == 1, "dead letter keeps its key", key)
            if not want:
                continue
            k, v, code, _ = want[0]
            check(value == v or (value is None and v == b""), "dead letter keeps its value", key)
            check(h.get("error.code") == code, "error.code header", key, h.get("error.code"), code)
            check(len(h.get("error", "")) > 5, "error header has the reason", key, h.get("error"))
            check(h.get("origin") == k.decode() and h.get("kind") == "bad", "original headers kept", key, h)
            tp = TopicPartition(h.get("source.topic"), int(h.get("source.partition", -1)))
            cons.assign([tp])
            cons.seek(tp, int(h.get("source.offset", 0)))
            orig = next(iter(cons.poll(timeout_ms=10000, max_records=1).values()), [None])[0]
            check(orig is not None and orig.key == key, "source.* headers point at the original",
                  key, h.get("source.partition"), h.get("source.offset"))
        cons.close()
        print("dead-letter headers example:", records[0][2] if records else None)
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0011-kafka_deadletter", tmp)


if __name__ == "__main__":
    sys.exit(main())
