#!/usr/bin/python3
"""0087-kafka_pam - pachinko allocation through the service (docs/models.md, docs/tracking.md).

A service with model.kind=pam (two super-topics over four topics) trains on JSON messages of
two subjects, each written with two vocabularies; /api/supers lists each super-topic with the
topics of the largest shares of its prior (shares in (0, 1], summing to at most 1), /api/status
lists its version so the page fetches it, and the page's script draws it (renderSupers); the
snapshot the service writes is format version 2 and `topics` reads its super-topics. An LDA
service has no /api/supers (503), its version 0.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check

VOCAB = [["goal match team season", "coach player league score"],
         ["stock market bank price", "trader shares bond profit"]]


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0087-")
    broker = sc.Broker(tmp, "documents", partitions=1)
    rng = random.Random(5)
    try:
        values = []
        for i in range(400):
            g = VOCAB[i % 2]
            words = [rng.choice(rng.choice(g).split()) for _ in range(30)]
            values.append(json.dumps({"id": "d%d" % i, "text": " ".join(words)}).encode())
        sc.produce_python(broker.addr, "documents", values, [b"k%d" % i for i in range(400)])
        svc = sc.Service(tmp, broker.addr, ["topics=4", "model.kind=pam", "pam.super=2",
                                            "pam.alpha.warmup=2", "seed=3", "input.format=json",
                                            "snapshot.dir=snaps", "minibatch.docs=20",
                                            "status.ms=1000", "http.port=0"])
        port = svc.http_port()
        check(sc.wait_for(lambda: svc.metrics().get("streamlda_documents_total", 0) >= 400,
                          120, "every message trained"), "every message trained")
        sup = sc.wait_for(lambda: (lambda j: j if j and j.get("S") == 2 else None)(
            svc.api("supers")), 60, "/api/supers with two super-topics")
        check(sup is not None, "/api/supers answers")
        if sup:
            ok = len(sup["supers"]) == 2 and all(
                x["topics"] and all(0 < t[1] <= 1 for t in x["topics"]) and
                sum(t[1] for t in x["topics"]) <= 1.0001 and
                all(0 <= t[0] < 4 for t in x["topics"]) for x in sup["supers"])
            check(ok and sup["K"] == 4, "/api/supers: each super-topic's topics and shares", sup)
        st = svc.api("status") or {}
        check(st.get("versions", {}).get("supers", 0) > 0, "/api/status lists /api/supers' "
              "version", st.get("versions"))
        html = urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=10).read().decode()
        check("renderSupers" in html and "api/supers" not in html.replace("'supers'", ""),
              "the page draws the super-topics from the API")
        check(svc.stop() == 0, "SIGTERM -> exit 0")
        files = sc.snapshots(os.path.join(tmp, "snaps"), "streamlda")
        check(files, "a snapshot")
        if files:
            out = subprocess.run([sc.BIN, "topics", files[-1]], capture_output=True, text=True)
            check(out.returncode == 0 and out.stdout.count("\nsuper ") +
                  out.stdout.startswith("super ") == 2, "topics prints the two super-topics",
                  out.stdout[-400:])
        # an LDA service: no super-topics
        lda = sc.Service(tmp, broker.addr, ["topics=4", "input.format=json", "status.ms=1000",
                                            "snapshot.dir=snaps-lda", "http.port=0",
                                            "model.name=lda"], name="lda")
        lport = lda.http_port()
        check(sc.wait_for(lambda: lda.metrics().get("streamlda_documents_total", 0) >= 400,
                          120, "the LDA service trained"), "the LDA service trained")
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/api/supers" % lport, timeout=10)
            code = 200
        except urllib.error.HTTPError as e:
            code = e.code
        check(code == 503, "LDA: /api/supers is 503", code)
        check((lda.api("status") or {}).get("versions", {}).get("supers") == 0,
              "LDA: the supers' version is 0")
        check(lda.stop() == 0, "the LDA service stops")
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0087-kafka_pam", tmp)


if __name__ == "__main__":
    sys.exit(main())
