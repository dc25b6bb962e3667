#!/usr/bin/python3
"""0064-track_page_explore - topics to explore on the service (issue 25, item 5): labels, search,
representative documents, on the API and the live page.

The service (on a `streamlda broker` cluster) trains on the three-theme stream of 0060/0061
(football, baking, then a third theme). Then:
 - /api/topics gives each topic an automatic label (3 of its top words) and no user label;
 - /api/examples lists each topic's representative documents: ids of the stream, their event
   times, the start of their own text, mostly words of one theme;
 - POST /api/labels {"topic","label"} with application/json is answered 202 and the label shows
   on /api/topics; other types (415), bad JSON or a bad label (400), an oversized body (413) and
   other methods (405) are refused, and nothing changes;
 - the page in headless Chromium: every card shows its label (the user's, else the automatic
   one in brackets), no console message; with #q=LABELWORD only the labelled topic's card is
   left, and its documents button lists its documents when opened;
 - the refresh (issue 25, item 7): /api/status lists the other documents' versions (they stay
   while nothing trains), /api/chart holds only the topics the chart draws (those of /api/
   prevalence with the most documents, the same shares), and the JSON comes gzip-compressed
   to a client that accepts it;
 - SIGTERM (a final snapshot), a restart from the same directory: the label is back on
   /api/topics, and `streamlda topics` on the newest snapshot prints it.
Skipped in part (said so) without /usr/bin/chromium.
"""
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.dont_write_bytecode = True
import scenario as sc  # noqa: E402

check = sc.check
CHROMIUM = "/usr/bin/chromium"
K = 4
THEME_OF = {w: t for t, ws in sc.THEMES.items() for w in ws}


def post(port, body, ctype="application/json", method="POST"):
    req = urllib.request.Request("http://127.0.0.1:%d/api/labels" % port, data=body,
                                 method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def chromium(tmp, url):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--user-data-dir=" + os.path.join(tmp, "chrome"),
           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
           "--window-size=1280,1000", "--dump-dom", url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return res.stdout, [line for line in res.stderr.splitlines() if "CONSOLE" in line]


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0064-")
    rng = random.Random(64)
    docs = sc.dated_docs(rng, 0, 1500)
    by_id = {d["id"]: d for d in docs}
    snaps = os.path.join(tmp, "snaps")
    broker = sc.Broker(tmp, "documents", partitions=1, brokers=1)
    props = ["topics=%d" % K, "http.port=0", "status.ms=1000", "minibatch.docs=50",
             "minibatch.ms=300", "snapshot.every.ms=800", "snapshot.topic=",
             "input.time.field=date", "track.warmup.docs=300", "seed=3",
             "snapshot.dir=" + snaps]
    try:
        svc = sc.Service(tmp, broker.addr, props)
        port = svc.http_port()
        sc.produce_dated(broker, tmp, docs, "1")
        sc.wait_for(lambda: (svc.api("status") or {}).get("docs", 0) >= 1500, 90, "trained")
        sc.wait_for(lambda: sum(len(x) for x in (svc.api("examples") or {}).get("topics", []))
                    >= K, 20, "examples published")
        topics = (svc.api("topics") or {}).get("topics", [])
        check(len(topics) == K and all(t["label"] is None for t in topics), "no user labels yet",
              [t.get("label") for t in topics])
        check(all(len(t["auto"].split()) == 3 and
                  set(t["auto"].split()) <= {w[0] for w in t["words"]} for t in topics),
              "each topic: an automatic label of 3 of its top words", [t["auto"] for t in topics])
        ex = svc.api("examples") or {"topics": []}
        ok, n = True, 0
        for k, lst in enumerate(ex["topics"]):
            for e in lst:
                src = by_id.get(e["id"])
                words = e["text"].split()
                themes = [THEME_OF.get(w) for w in words]
                top = max(set(themes), key=themes.count) if themes else None
                n += 1
                ok = ok and src is not None and src["text"].startswith(e["text"]) and \
                    themes.count(top) >= 0.6 * len(words) and e["topic"] == k and \
                    e["event_ms"] > 0 and len(lst) <= 5
        check(ok and n >= K, "/api/examples: %d documents of the stream, their own text, one "
              "theme each" % n, ex["topics"][0][:1] if ex["topics"] else None)
        # the page's refresh: the status lists the versions, the chart only the topics drawn,
        # every JSON document gzip-compressed for a client that takes it
        st = svc.api("status") or {}
        v = st.get("versions", {})
        check(set(v) == {"topics", "chart", "events", "examples", "groups", "authors",
                         "prevalence", "supers"} and v["supers"] == 0 and
              v["groups"] == 0 and v["authors"] == 0,
              "/api/status lists the documents' versions (no groups, no authors here)", v)
        full = svc.api("prevalence") or {"windows": []}
        chart = svc.api("chart") or {"topics": [], "windows": []}
        # the topics whose share moved most: the standard deviation of each window's share
        # shrunk toward the mean by 10 documents' weight (ties within the JSON's rounding)
        ws = full["windows"]
        docs = sum(w["docs"] for w in ws) or 1
        mean = [sum(w["share"][k] * w["docs"] for w in ws) / docs for k in range(K)]
        moved = [(sum(w["docs"] * ((w["share"][k] * w["docs"] + 10 * mean[k]) /
                                   (w["docs"] + 10) - mean[k]) ** 2 for w in ws) / docs) ** 0.5
                 for k in range(K)]
        picked = chart["topics"]
        rest = [k for k in range(K) if k not in picked]
        want = sorted(range(K), key=lambda k: (-moved[k], k))[:8]
        check(len(picked) == min(8, K) and
              min(moved[k] for k in picked) >= max([moved[k] for k in rest] or [0]) - 2e-3 and
              len(chart["windows"]) == len(full["windows"]) and
              all(abs(cw["share"][j] - fw["share"][k]) < 1e-3
                  for cw, fw in zip(chart["windows"], full["windows"])
                  for j, k in enumerate(chart["topics"])),
              "/api/chart: the topics that moved most, their shares as /api/prevalence has them",
              chart["topics"], want, moved)
        req = urllib.request.Request("http://127.0.0.1:%d/api/topics" % port,
                                     headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=5) as r:
            enc, raw = r.headers.get("Content-Encoding"), r.read()
        plain = sc.Service.get(svc, "/api/topics")[1]
        check(enc == "gzip" and gzip.decompress(raw).decode() == plain and len(raw) < len(plain),
              "/api/topics gzip-compressed when asked", enc, len(raw), len(plain))
        s1 = svc.api("status") or {}
        s2 = sc.wait_for(lambda: (lambda x: x if x.get("event_lag_s") != s1.get("event_lag_s")
                                  else None)(svc.api("status") or {}), 30, "a new publication")
        check(s2 and s1.get("versions") and s2.get("versions") == s1.get("versions"),
              "nothing trains: a new publication keeps the versions (the page fetches nothing "
              "more)", s1.get("versions"), (s2 or {}).get("versions"))
        # a topic of football: label it
        fk = [t["id"] for t in topics if THEME_OF.get(t["words"][0][0]) == "A"]
        fk = fk[0] if fk else 0
        st, body = post(port, json.dumps({"topic": fk, "label": "Football \u26bd"}).encode())
        check(st == 202 and json.loads(body)["label"] == "Football \u26bd", "POST /api/labels: 202",
              st, body)
        got = sc.wait_for(lambda: [t["label"] for t in (svc.api("topics") or {}).get("topics", [])
                                   if t["id"] == fk] == ["Football \u26bd"], 20, "label shown")
        check(got, "the label is on /api/topics")
        for what, args, want in [
                ("text/plain", (b'{"topic":1,"label":"x"}', "text/plain"), 415),
                ("bad JSON", (b'{"topic":1,', ), 400),
                ("no label", (b'{"topic":1}', ), 400),
                ("an empty object", (b'{}', ), 400),
                ("an array", (b'[1]', ), 400),
                ("a topic out of range", (b'{"topic":%d,"label":"x"}' % K, ), 400),
                ("label too long", (json.dumps({"topic": 1, "label": "x" * 121}).encode(), ), 400),
                ("control character", (b'{"topic":1,"label":"a\\nb"}', ), 400),
                ("body over 1 KB", (b" " * 2000, ), 413),
                ("PUT", (b'{"topic":1,"label":"x"}', "application/json", "PUT"), 405)]:
            st, body = post(port, *args)
            check(st == want, "POST %s: %d" % (what, want), st, body.strip())
        labels = [t["label"] for t in (svc.api("topics") or {}).get("topics", [])]
        check(labels.count(None) == K - 1, "the refused ones changed nothing", labels)
        if os.path.exists(CHROMIUM):
            dom, console = chromium(tmp, "http://127.0.0.1:%d/" % port)
            cards = re.findall(r'class="topic" data-topic="(\d+)"', dom)
            check(len(cards) == K and not console, "page: K cards, no console message",
                  len(cards), console[:3])
            check("Football \u26bd" in dom and len(re.findall(r'class="lbl auto">\[', dom)) == K - 1,
                  "page: the user label, the others' automatic labels in brackets")
            dom, console = chromium(tmp, "http://127.0.0.1:%d/#q=footb" % port)
            cards = re.findall(r'class="topic" data-topic="(\d+)"', dom)
            check(cards == [str(fk)] and "1 of %d match" % K in dom,
                  "page search: only the labelled topic", cards)
        else:
            print("SKIP: Chromium checks (%s missing)" % CHROMIUM)
        check(svc.stop() == 0, "SIGTERM -> exit 0")
        svc = sc.Service(tmp, broker.addr, props, name="svc2")
        sc.wait_for(lambda: svc.api("topics"), 30, "restarted")
        labels = [t["label"] for t in (svc.api("topics") or {}).get("topics", [])]
        check(labels.count("Football \u26bd") == 1 and labels.index("Football \u26bd") == fk,
              "restart: the label is restored with the snapshot", labels)
        check(svc.stop() == 0, "SIGTERM -> exit 0 (2)")
        newest = sc.snapshots(snaps, "streamlda")[-1]
        res = subprocess.run([sc.BIN, "topics", "-n", "3", newest], capture_output=True, text=True)
        check(re.search(r'^topic %d "Football \u26bd": ' % fk, res.stdout, re.M),
              "topics on the newest snapshot prints the label", res.stdout)
    finally:
        broker.stop()
    return sc.done("0064-track_page_explore", tmp)


if __name__ == "__main__":
    raise SystemExit(main())
