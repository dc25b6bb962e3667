#!/usr/bin/python3
"""0083-kafka_atm - the author-topic model in the service (model.kind=atm, docs/models.md).

JSON messages name their authors in a field (input.author.field=writer); a message without one
and one whose field holds an object are dead-lettered with the reason, never trained; the
snapshot (format version 2) holds the authors, and `streamlda authors` on it puts each subject's
writers on their own topic, and /api/authors lists the writers and the writers who drive each
topic. A second service takes each message's author from its Kafka key
(input.author.field=@key) on raw-text messages. An instance with updates.topic refuses
model.kind=atm at start, naming why.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

SPORT = "goal match team season coach player league score stadium final".split()
MONEY = "stock market bank price trader shares bond interest profit fund".split()


def authors_json(tmp, snapdir, model):
    files = sc.snapshots(os.path.join(tmp, snapdir), model)
    check(files, "a snapshot of %s" % model)
    if not files:
        return None
    with open(files[-1], "rb") as f:
        check(f.read(12)[8:] == b"\0\0\0\2", "the snapshot is format version 2", files[-1])
    out = subprocess.run([sc.BIN, "authors", "--json", "--top", "0", "--topics", "1", files[-1]],
                         capture_output=True, text=True)
    check(out.returncode == 0, "authors reads the service's snapshot", out.stderr)
    return json.loads(out.stdout) if out.returncode == 0 else None


def by_subject(j):
    """{writer: its largest topic} from authors --json."""
    return {e["author"]: e["topics"][0][0] for e in j["list"]}


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0083-")
    broker = sc.Broker(tmp, "documents,rawtext,deadletters,updates", partitions=1)
    rng = random.Random(3)
    try:
        values, keys = [], []
        for i in range(240):
            s = i % 2 == 0
            who = "%s%d" % ("sam" if s else "max", (i // 2) % 4)
            words = [rng.choice(SPORT if s else MONEY) for _ in range(25)]
            values.append(json.dumps({"id": "d%d" % i, "writer": who,
                                      "text": " ".join(words)}).encode())
            keys.append(b"k%d" % i)
        values.append(json.dumps({"id": "nobody", "text": "goal match team"}).encode())
        keys.append(b"nobody")
        values.append(json.dumps({"id": "odd", "writer": {"x": 1}, "text": "goal"}).encode())
        keys.append(b"odd")
        sc.produce_python(broker.addr, "documents", values, keys)

        svc = sc.Service(tmp, broker.addr, ["topics=2", "model.kind=atm", "seed=2",
                                            "input.author.field=writer", "input.format=json",
                                            "deadletter.topic=deadletters", "snapshot.dir=snaps",
                                            "minibatch.docs=20", "status.ms=1000"])
        dead = lambda m: sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
        sc.wait_for(lambda: (lambda m: m.get("streamlda_documents_total", 0) + dead(m))(
            svc.metrics()) >= len(values), 120, "every message trained or dead-lettered")
        m = svc.metrics()
        check(m.get("streamlda_documents_total") == 240, "240 documents trained",
              m.get("streamlda_documents_total"))
        check(dead(m) == 2, "two dead letters", dead(m))
        api = sc.wait_for(lambda: (lambda j: j if j and j["authors"] == 8 else None)(
            svc.api("authors")), 120, "/api/authors with the eight writers")
        if api:
            names = sorted(e["author"] for e in api["list"])
            check(names == sorted("%s%d" % (p, i) for p in ("max", "sam") for i in range(4)),
                  "/api/authors lists the writers", names)
            drivers = [sorted(x[0][:3] for x in t["authors"][:4]) for t in api["topics"]]
            check(sorted(drivers) == [["max"] * 4, ["sam"] * 4],
                  "/api/authors: each topic driven by one subject's writers", api["topics"])
        # the tracker groups an author-topic model's documents by author (input.group.field
        # defaults to @author): each writer's share of the stream and topic mix on the page
        grp = sc.wait_for(lambda: (lambda j: j if j and j["groups"] == 8 else None)(
            svc.api("groups")), 120, "/api/groups with the eight writers")
        if grp:
            check(grp["source"] == "@author", "/api/groups: grouped by author", grp["source"])
            check(sorted(g["name"] for g in grp["list"]) ==
                  sorted("%s%d" % (p, i) for p in ("max", "sam") for i in range(4)),
                  "/api/groups lists the writers", [g["name"] for g in grp["list"]])
            tops = {g["name"][:3]: set() for g in grp["list"]}
            for g in grp["list"]:
                tops[g["name"][:3]].add(g["topics"][0][0])
            check(len(tops["max"]) == 1 and len(tops["sam"]) == 1 and tops["max"] != tops["sam"],
                  "/api/groups: each subject's writers share their largest topic", tops)
            check(abs(sum(g["docs"] for g in grp["list"]) + grp["other"]["docs"] - grp["docs"])
                  < 1e-6, "/api/groups: the groups' documents add up", grp)
        st = svc.api("status") or {}
        check(st.get("versions", {}).get("authors", 0) > 0 and
              st.get("versions", {}).get("groups", 0) > 0,
              "/api/status lists the authors' and groups' versions (the page fetches them)", st)
        check(svc.stop() == 0, "SIGTERM -> exit 0")
        records = sc.reader.fetch_records(broker.addr, "deadletters")
        why = {k: dict((h, v.decode()) for h, v in hd).get("error", "") for k, _, hd in records}
        check('field "writer": missing' in why.get(b"nobody", ""), "missing author's reason",
              why.get(b"nobody"))
        check('field "writer": must be a string' in why.get(b"odd", ""), "object author's reason",
              why.get(b"odd"))
        j = authors_json(tmp, "snaps", "streamlda")
        if j:
            top = by_subject(j)
            check(len(top) == 8, "eight writers", sorted(top))
            sam = {t for a, t in top.items() if a.startswith("sam")}
            mx = {t for a, t in top.items() if a.startswith("max")}
            check(len(sam) == 1 and len(mx) == 1 and sam != mx,
                  "each subject's writers on their own topic", top)

        # the author from the message key, raw text
        texts, tkeys = [], []
        for i in range(120):
            s = i % 2 == 0
            texts.append(" ".join(rng.choice(SPORT if s else MONEY) for _ in range(25)).encode())
            tkeys.append(b"%s%d" % (b"sam" if s else b"max", (i // 2) % 3))
        sc.produce_python(broker.addr, "rawtext", texts, tkeys)
        svc = sc.Service(tmp, broker.addr, ["topics=2", "model.kind=atm", "seed=2",
                                            "model.name=bykey", "input.topics=rawtext",
                                            "input.author.field=@key", "snapshot.dir=snaps2",
                                            "minibatch.docs=20", "status.ms=1000"], name="svc2")
        sc.wait_for(lambda: svc.metrics().get("streamlda_documents_total", 0) >= 120, 120,
                    "the raw-text messages trained")
        check(svc.stop() == 0, "SIGTERM -> exit 0 (key as author)")
        j = authors_json(tmp, "snaps2", "bykey")
        if j:
            top = by_subject(j)
            check(sorted(top) == ["max0", "max1", "max2", "sam0", "sam1", "sam2"],
                  "the keys are the authors", sorted(top))

        # replicas: refused at start
        out = subprocess.run([sc.BIN, "run", "-X", "kafka.bootstrap.servers=" + broker.addr,
                              "-X", "model.kind=atm", "-X", "updates.topic=updates",
                              "-X", "snapshot.dir=snaps3", "-X", "model.name=rep"],
                             cwd=tmp, capture_output=True, text=True, timeout=120)
        check(out.returncode != 0 and "model.kind=atm is not supported with updates.topic"
              in out.stderr, "updates.topic refuses model.kind=atm", out.returncode,
              out.stderr[-300:])
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0083-kafka_atm", tmp)


if __name__ == "__main__":
    sys.exit(main())
