#!/usr/bin/env python3
"""0103-realkafka_deadletter - every bad record reaches the dead-letter topic of a real broker.

Good Persuasion paragraphs are mixed with one bad record of each kind
(SLDA_ERR_PARSE undecodable and truncated MessagePack, SLDA_ERR_UTF8,
SLDA_ERR_EMPTY empty and stop words only), an invalid-UTF-8 value of
999,901 bytes (it passes input.max.bytes, but with the service's headers
its dead letter is over librdkafka's default message.max.bytes of
1,000,000) and a 2,000,000-byte value (SLDA_ERR_TOO_LARGE: over
input.max.bytes, and its dead letter cannot hold it). Only the input topic
allows large records (max.message.bytes); the service and the dead-letter
topic run with default settings. Each record has a key and a header of its
own; they are spread over the input topic's 3 partitions.

Checked, with confluent-kafka reading the dead-letter topic: every bad
record is there exactly once, keyed as the original, with the headers
`error` (reason text), `error.code`, `source.topic`, `source.partition`,
`source.offset` (which point at the original), the original headers kept;
a value that fits is kept whole, one that does not is cut to a prefix with
an `original.size` header giving the original length and the record fits
under 1,000,000 bytes; the service does not stop, the snapshot counts the
good documents only and its offsets cover every message.
"""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import realkafka as rk  # noqa: E402
import scenario as sc  # noqa: E402

check = rk.check
DEFAULT_MAX = 1000000  # librdkafka's default message.max.bytes

BAD = [  # (key, value, error.code)
    (b"cut-msgpack", b"\x82\xa2id\xa1x\xa4text", "SLDA_ERR_PARSE"),
    (b"bad-msgpack", b"\x82\xa2id\xc1\xc1\xc1", "SLDA_ERR_PARSE"),
    (b"bad-utf8", b"caf\xc3 au lait \xff\xfe broken bytes", "SLDA_ERR_UTF8"),
    (b"empty", b"", "SLDA_ERR_EMPTY"),
    (b"stopwords", b"the and of to a in is it", "SLDA_ERR_EMPTY"),
    (b"near-limit-utf8", b"\xff" + b"quixotic " * 111100, "SLDA_ERR_UTF8"),
    (b"huge", b"elephant " * 222222 + b"xx", "SLDA_ERR_TOO_LARGE"),
]


def main():
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0103-")
    p = rk.unique("d")
    docs_topic, dead = p + ".docs", p + ".deadletter"
    rk.create_topics(addr, {docs_topic: 3, dead: 1}, config={docs_topic: {"max.message.bytes": "4000000"}})
    with open(os.path.join(rk.SRC, "examples", "janeausten", "persuasion.txt"), "rb") as f:
        good = [line.strip() for line in f if line.strip()][:300]
    good = [g for g in good if len(g.split()) > 12]  # surely not all stop words
    records = []
    bad_at = {}
    for i, g in enumerate(good):
        records.append((b"good-%d" % i, g, [("kind", b"good")], i % 3))
        if i % 30 == 5 and i // 30 < len(BAD):
            k, v, _ = BAD[i // 30]
            bad_at[k] = len(records)
            records.append((k, v, [("kind", b"bad"), ("origin", k)], (i // 30) % 3))
    check(len(bad_at) == len(BAD), "every bad record is in the input", len(bad_at))
    placed = rk.produce(addr, docs_topic, records, conf={"message.max.bytes": 4100000})
    where = {k: placed[j] for k, j in bad_at.items()}
    total = len(records)
    print("produced %d good and %d bad records: %s" % (total - len(BAD), len(BAD),
          ", ".join("%s %d B" % (k.decode(), len(v)) for k, v, _ in BAD)))

    model = p
    svc = rk.service(tmp, addr, ["topics=5", "http.port=0", "status.ms=1000", "model.name=" + model,
                                 "input.topics=" + docs_topic, "deadletter.topic=" + dead,
                                 "snapshot.topic=", "snapshot.dir=snaps", "minibatch.docs=50"], "svc")
    rk.assigned(svc)
    dead_n = lambda m: sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
    rk.wait_for(lambda: (lambda m: m.get("streamlda_documents_total", 0) + dead_n(m))(rk.metrics(svc)) >= total
                or not rk.alive(svc), 120, "all records accounted for")
    m = rk.metrics(svc)
    check(svc.proc.poll() is None, "service still running after the bad records", svc.proc.poll())
    print("metrics: documents %s, dead letters %s" % (m.get("streamlda_documents_total"), dead_n(m)))
    rc = svc.stop(timeout=90)
    check(rc == 0, "SIGTERM -> exit 0", rc)
    if rc != 0:
        print("\n".join(line for line in svc.text().splitlines() if "status:" not in line)[-3000:])
    header = sc.newest_header(os.path.join(tmp, "snaps"), model) or {}
    check(header.get("docs") == total - len(BAD), "snapshot counts the good documents only",
          header.get("docs"), total - len(BAD))
    covered = sum(o for t, _, o in header.get("offsets", []) if t == docs_topic)
    check(covered == total, "snapshot offsets cover good and bad records", covered, total)

    dls = rk.consume_all(addr, dead)  # a consumer with default settings
    by_key = {}
    for d in dls:
        by_key.setdefault(d.key, []).append(d)
    check(len(dls) == len(BAD), "one dead letter per bad record", len(dls), len(BAD),
          sorted(k.decode() for k in by_key if k))
    for key, value, code in BAD:
        got = by_key.get(key, [])
        name = key.decode()
        if not check(len(got) == 1, "%s: on the dead-letter topic exactly once" % name, len(got)):
            continue
        d = got[0]
        h = rk.headers_dict(d.headers)
        got_value = d.value or b""
        size = len(got_value) + len(key) + sum(len(k) + len(v or b"") for k, v in d.headers)
        check(h.get("error.code") == code, "%s: error.code" % name, h.get("error.code"), code)
        check(len(h.get("error") or "") > 5, "%s: error header gives the reason" % name, (h.get("error") or "")[:120])
        part, off = where[key]
        check((h.get("source.topic"), h.get("source.partition"), h.get("source.offset"))
              == (docs_topic, str(part), str(off)), "%s: source.topic/partition/offset" % name,
              h.get("source.topic"), h.get("source.partition"), h.get("source.offset"), part, off)
        check(h.get("origin") == name and h.get("kind") == "bad", "%s: original headers kept" % name,
              h.get("origin"), h.get("kind"))
        check(size < DEFAULT_MAX, "%s: the dead letter fits under message.max.bytes" % name, size)
        if len(value) + 2048 < DEFAULT_MAX:
            check(got_value == value, "%s: value kept whole" % name, len(got_value), len(value))
        else:
            check(0 < len(got_value) < len(value) and value.startswith(got_value),
                  "%s: value cut to a prefix of the original" % name, len(got_value), len(value))
            check(h.get("original.size") == str(len(value)), "%s: original.size header" % name,
                  h.get("original.size"), len(value))
        orig = rk.fetch_at(addr, docs_topic, int(h.get("source.partition") or -1), int(h.get("source.offset") or 0))
        check(orig is not None and orig.key == key, "%s: source.* headers point at the original" % name,
              orig.key if orig else None)
    example = by_key.get(b"huge", [None])[0]
    if example:
        print("dead letter of the 2,000,000-byte record: value %d bytes, headers %s"
              % (len(example.value or b""), rk.headers_dict(example.headers)))
    return rk.done("0103-realkafka_deadletter", tmp)


if __name__ == "__main__":
    sys.exit(main())
