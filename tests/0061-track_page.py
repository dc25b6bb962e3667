#!/usr/bin/python3
"""0061-track_page - the live page at / in Debian's headless Chromium, while documents flow.

The service (on a `streamlda broker` cluster) trains on the synthetic stream of
0060 (scenario.dated_docs; timestamps from the "date" field). Chromium loads
http://127.0.0.1:PORT/, runs its scripts (--virtual-time-budget) and dumps the DOM:
 - no console message at all (the page logs nothing: any CONSOLE line is an
   error, a failed request or an exception; a page that does log one proves
   the detector works on this Chromium);
 - K topic cards, each with its top words;
 - the prevalence chart: SVG polylines with one point per window of event time;
 - after more documents flow, the page shows more documents and more windows.
A screenshot is kept in the build tree: <build>/artifacts/0061-track_page.png.
Skipped (exit 0, said so) when /usr/bin/chromium is missing (scripts/setup.sh
installs it).
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing the helper leaves no tests/__pycache__ behind
import scenario as sc  # noqa: E402
check = sc.check
CHROMIUM = "/usr/bin/chromium"
K = 4


def chromium(tmp, url, *args, size="1280,1000"):
    """Run headless Chromium on url; (stdout, the console lines of stderr)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--user-data-dir=" + os.path.join(tmp, "chrome"),
           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
           "--window-size=" + size, "--hide-scrollbars"] + list(args) + [url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    console = [line for line in res.stderr.splitlines() if "CONSOLE" in line]
    return res.stdout, console


def page_facts(dom):
    cards = re.findall(r'<div class="topic" data-topic="(\d+)">(.*?)</div></div>', dom)
    words = re.findall(r'<div class="words">([^<]*)</div>', dom)
    lines = re.findall(r'<polyline points="([^"]*)"', dom)
    docs = re.search(r"<b>documents: </b>(\d+)", dom)
    return {"cards": len(re.findall(r'class="topic"', dom)),
            "words": [w for w in words if len(w.split()) >= 5],
            "points": [len(p.split()) for p in lines],
            "docs": int(docs.group(1)) if docs else -1,
            "waiting": bool(re.search(r'id="status">waiting for the service', dom))}


def main():
    if not os.path.exists(CHROMIUM):
        print("SKIP: %s not installed (scripts/setup.sh installs chromium)" % CHROMIUM)
        return 0
    tmp = tempfile.mkdtemp(prefix="slda-0061-")
    art = os.path.join(os.environ.get("SLDA_BUILD_DIR", tmp), "artifacts")
    os.makedirs(art, exist_ok=True)
    # the detector: a page that logs an error is seen
    bad = os.path.join(tmp, "bad.html")
    with open(bad, "w") as f:
        f.write("<html><body><script>console.error('seen'); nosuch();</script></body></html>")
    _, console = chromium(tmp, "file://" + bad, "--dump-dom")
    check(len(console) >= 2, "console messages of a page are detected", console)

    rng = random.Random(61)
    docs = sc.dated_docs(rng, 0, 2000)
    broker = sc.Broker(tmp, "documents", partitions=1, brokers=1)
    props = ["topics=%d" % K, "http.port=0", "status.ms=1000", "minibatch.docs=50",
             "minibatch.ms=300", "snapshot.every.ms=800", "snapshot.topic=",
             "input.time.field=date", "track.warmup.docs=300",
             "snapshot.dir=" + os.path.join(tmp, "snaps")]
    try:
        svc = sc.Service(tmp, broker.addr, props)
        port = svc.http_port()
        url = "http://127.0.0.1:%d/" % port
        sc.produce_dated(broker, tmp, docs[:900], "1")
        sc.wait_for(lambda: svc.metric("streamlda_documents_total") >= 900, 60, "part 1 trained")
        sc.wait_for(lambda: (svc.api("status") or {}).get("docs", 0) >= 900, 10, "page")
        dom1, console = chromium(tmp, url, "--dump-dom")
        f1 = page_facts(dom1)
        print("page 1:", {k: v for k, v in f1.items() if k != "words"}, f1["words"][:2])
        check(not console, "page 1: no console messages (errors, failed requests)", console[:5])
        check(not f1["waiting"], "page 1: the JSON endpoints answered")
        check(f1["cards"] == K, "page 1: K topic cards", f1["cards"])
        check(len(f1["words"]) == K, "page 1: each topic shows its top words", f1["words"])
        check(f1["points"] and min(f1["points"]) >= 9,
              "page 1: chart lines with a point per hour of event time", f1["points"])
        check(f1["docs"] >= 900, "page 1: documents shown", f1["docs"])
        # more documents flow: the page follows
        sc.produce_dated(broker, tmp, docs[900:], "2")
        sc.wait_for(lambda: svc.metric("streamlda_documents_total") >= 2000, 60, "part 2 trained")
        sc.wait_for(lambda: (svc.api("status") or {}).get("docs", 0) >= 2000, 10, "page")
        dom2, console = chromium(tmp, url, "--dump-dom")
        f2 = page_facts(dom2)
        print("page 2:", {k: v for k, v in f2.items() if k != "words"}, f2["words"][:2])
        check(not console, "page 2: no console messages", console[:5])
        check(f2["docs"] > f1["docs"], "page 2: more documents", f1["docs"], f2["docs"])
        check(f2["points"] and max(f2["points"]) > max(f1["points"] or [0]),
              "page 2: more windows in the chart", max(f1["points"] or [0]), max(f2["points"] or [0]))
        check(f2["cards"] == K and len(f2["words"]) == K, "page 2: K topics with words")
        check(re.search(r"<b>late documents: </b>0 \(0\.0%\)", dom2),
              "page 2: the late documents shown (none: one partition, in order)")
        shot = os.path.join(art, "0061-track_page.png")
        if os.path.exists(shot):
            os.unlink(shot)
        _, console = chromium(tmp, url, "--screenshot=" + shot)
        size = os.path.getsize(shot) if os.path.exists(shot) else 0
        check(size > 20000, "screenshot kept", shot, size)
        # narrow screen (a phone): the same page, one column
        mobile = os.path.join(art, "0061-track_page-phone.png")
        chromium(tmp, url, "--screenshot=" + mobile, size="390,1400")
        check(os.path.exists(mobile), "phone-width screenshot kept", mobile)
        check(svc.stop() == 0, "SIGTERM -> exit 0")
    finally:
        broker.stop()
    shutil.rmtree(os.path.join(tmp, "chrome"), ignore_errors=True)
    return sc.done("0061-track_page", tmp)


if __name__ == "__main__":
    raise SystemExit(main())
