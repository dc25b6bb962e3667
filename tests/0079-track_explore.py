#!/usr/bin/python3
"""0079-track_explore - topics people can explore (issue 25, item 5), offline: labels, search by
word, representative documents; and the report's topic table at phone width.

A synthetic stream with known topics (bench/track/gen.py: 2,000 documents over 60 days, 5 true
topics whose words are "aword..", "bword.." ...), `train --time-field --snapshot-dir`, then:
 - `label SNAPSHOT` lists an automatic label per topic (its most relevant words, in brackets),
   made of its own top words and naming its family; `label SNAPSHOT K TEXT` stores a user label
   in the snapshot (the file written again in place, everything else bit for bit: removing the
   label gives back the same bytes), shown by `label`, `topics` (quotes), `topics --json`,
   and the report (HTML, JSON); bad labels, topics and usage are refused with exit 1 / 2;
 - `topics --search WORD` lists first the topic holding the word (its share of the word's
   occurrences), finds a topic by its label too, and says when no word of the model matches;
 - `topics --docs` and the report list each topic's representative documents: ids of the
   stream, their event times, the start of their own text, mostly words of the topic's family;
 - the report in headless Chromium at 390x844 and 1280x900: the topics table and the page fit
   the window (the old report at 390 px: the table 24 px off the right edge, the page 742 px
   wide); screenshots kept;
 - the events of a stream whose topics change (steps, a burst, a late topic, a fall) at 390 px:
   every table fits its box and the words column is at least 100 px wide with no word cut (the
   old report gave it 30-40 px beside the snapshot's file name: 4 letters a line, cut inside
   words, the rest off the box's edge); its screenshot kept.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
import scenario as sc  # noqa: E402
import axes  # noqa: E402

check = sc.check
S = sc.BIN
K = 5

# Headless Chromium makes no window narrower than 500 px (--window-size=390,844 gives an
# innerWidth of 500), so the page is measured inside an iframe of the size wanted: its own
# viewport, media queries and all; the report (with FIT appended) posts what it measured.
FIT = """<script>
window.addEventListener('load', function () {
  var t = document.getElementById('topics'), b = t ? t.getBoundingClientRect() : null;
  parent.postMessage(JSON.stringify({w: window.innerWidth,
    scroll: document.documentElement.scrollWidth, right: b ? b.right : -1}), '*');
});
</script>"""
# The events' tables at phone width: each table against its scrolling box, the narrowest words
# cell, and whether any word in them wraps (a word wider than its cell's line is cut).
EVFIT = """<script>
window.addEventListener('load', function () {
  var out = {w: window.innerWidth, tables: 0, over: [], minwd: 1e9, cut: 0, sn: 0};
  document.querySelectorAll('.tw').forEach(function (box) {
    var h = box.previousElementSibling;
    while (h && h.tagName !== 'H2') h = h.previousElementSibling;
    out.tables++;
    if (box.scrollWidth > box.clientWidth + 1)
      out.over.push((h ? h.textContent : '?') + ': ' + box.scrollWidth + ' > ' + box.clientWidth);
  });
  document.querySelectorAll('td.wd').forEach(function (td) {
    out.minwd = Math.min(out.minwd, td.clientWidth);
    var r = document.createRange(), words = td.textContent.split(/\\s+/), text = td.textContent;
    var node = td.firstChild, at = 0;
    words.forEach(function (wd) {
      var i = text.indexOf(wd, at);
      if (!wd || i < 0 || !node || node.nodeType !== 3) return;
      r.setStart(node, i); r.setEnd(node, i + wd.length);
      if (r.getClientRects().length > 1) out.cut++;
      at = i + wd.length;
    });
  });
  document.querySelectorAll('.sn').forEach(function (e) { if (e.offsetWidth > 0) out.sn++; });
  parent.postMessage(JSON.stringify(out), '*');
});
</script>"""
FRAME = """<!DOCTYPE html><html><body style="margin:0">
<iframe src="%s" width="%d" height="%d" style="border:0"></iframe>
<script>window.addEventListener('message', function (e) {
  var pre = document.createElement('pre'); pre.id = 'fit'; pre.textContent = e.data;
  document.body.appendChild(pre); });</script></body></html>"""


def run(*args):
    r = subprocess.run([S] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def family(word):
    """The true topic a generated word belongs to: 'cwordba' -> 'c' (None for common words)."""
    m = re.match(r"^([a-z])word", word)
    return m.group(1) if m else None


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0079-")
    art = os.path.join(os.environ.get("SLDA_BUILD_DIR", tmp), "artifacts")
    os.makedirs(art, exist_ok=True)
    stream = os.path.join(tmp, "s.jsonl")
    subprocess.run([sys.executable, os.path.join(sc.SRC, "bench/track/gen.py"), "--docs", "2000",
                    "--topics", str(K), "--span-days", "60", "--seed", "3", "--out", stream,
                    "--truth", os.path.join(tmp, "truth.json")], check=True)
    docs = {}
    for line in open(stream):
        d = json.loads(line)
        docs[d["id"]] = d
    snaps = os.path.join(tmp, "snaps")
    rc, _, err = run("train", "-q", "-k", str(K), "-X", "seed=1", "--time-field", "time",
                     "--snapshot-dir", snaps, "--snapshot-every", "1000", stream)
    check(rc == 0, "train", rc, err[-300:])
    snap = sorted(f for f in os.listdir(snaps) if f.endswith(".slda"))[-1]
    snap = os.path.join(snaps, snap)

    # automatic labels
    rc, out, err = run("label", snap)
    lines = out.splitlines()
    check(rc == 0 and len(lines) == K, "label lists every topic", rc, out, err)
    rc, out, _ = run("topics", "--json", "-n", "10", snap)
    topics = json.loads(out)["topics"] if rc == 0 else []
    fam = {}
    for t in topics:
        auto = t.get("auto", "").split()
        fams = [family(w) for w in t["words"][:10] if family(w)]
        fam[t["topic"]] = max(set(fams), key=fams.count) if fams else None
        check(len(auto) == 3 and all(w in t["words"] for w in auto),
              "topic %d: automatic label of 3 of its top 10 words" % t["topic"], auto)
        check(family(auto[0]) == fam[t["topic"]] if auto else False,
              "topic %d: automatic label names its family" % t["topic"], auto, fam[t["topic"]])
    check(len(set(fam.values())) == K, "5 topics, 5 families", fam)
    ck = [k for k, f in fam.items() if f == "c"]
    ck = ck[0] if ck else 0

    # user labels: set, shown, stored; removing it gives back the same bytes
    before = open(snap, "rb").read()
    rc, _, err = run("label", snap, str(ck), "Cs & company \u00e9t\u00e9")
    check(rc == 0, "label set", rc, err)
    rc, out, _ = run("label", snap)
    check('topic %d "Cs & company \u00e9t\u00e9"' % ck in out, "label lists it", out)
    rc, out, _ = run("topics", "-n", "3", snap)
    check(re.search(r'^topic %d "Cs & company \u00e9t\u00e9": \w+ \w+ \w+$' % ck, out, re.M),
          "topics prints it in quotes", out)
    check(len(re.findall(r"^topic \d+: ", out, re.M)) == K - 1, "the others unchanged", out)
    rc, out, _ = run("topics", "--json", snap)
    d = json.loads(out)
    check([t["label"] for t in d["topics"] if t["topic"] == ck] == ["Cs & company \u00e9t\u00e9"]
          and sum(t["label"] is None for t in d["topics"]) == K - 1, "topics --json label",
          [t["label"] for t in d["topics"]])
    rc, out, _ = run("topics", "--labels", "-n", "2", snap)
    check(len(re.findall(r"^topic \d+ \[\w+ \w+ \w+\]: ", out, re.M)) == K - 1,
          "topics --labels: automatic labels in brackets", out)
    rc, _, err = run("label", snap, str(K), "x")
    check(rc == 1 and "not a topic" in err, "topic out of range: exit 1", rc, err)
    rc, _, err = run("label", snap, "1", "x" * 121)
    check(rc == 1 and "at most 120" in err, "a label too long: exit 1", rc, err)
    rc, _, err = run("label", snap, "1", "a\tb")
    check(rc == 1 and "control character" in err, "a control character: exit 1", rc, err)
    rc, _, _ = run("label", snap, "1")
    check(rc == 2, "label SNAPSHOT TOPIC without TEXT: usage, exit 2", rc)
    rc, _, err = run("label", os.path.join(tmp, "missing.slda"))
    check(rc == 1 and "missing.slda" in err, "a missing snapshot: exit 1 naming it", rc, err)
    lab = open(snap, "rb").read()
    run("label", snap, str(ck), "")
    check(open(snap, "rb").read() == before, "label removed: the snapshot is what it was, byte "
          "for byte", len(before))
    open(snap, "wb").write(lab)
    rc, out, _ = run("topics", "--json", os.path.join(sc.SRC, "tests/fixtures/snapshot-v1-k3.slda"))
    check(rc == 0 and all(t["label"] is None for t in json.loads(out)["topics"]),
          "an old snapshot loads, without labels", rc)

    # search by word and by label
    rc, out, err = run("topics", "--search", "cwordaa", "-n", "3", snap)
    first = re.match(r"^topic (\d+) ([0-9.]+)", out)
    check(rc == 0 and first and int(first.group(1)) == ck and float(first.group(2)) > 0.5,
          "search cwordaa: the c topic first, holding most of the word", out, err)
    rc, out, _ = run("topics", "--search", "company", snap)
    check(rc == 0 and re.match(r"^topic %d " % ck, out) and len(out.splitlines()) == 1,
          "search finds a topic by its label", out)
    rc, out, err = run("topics", "--search", "nosuchword", snap)
    check(rc == 0 and out == "" and "no word of the model" in err, "search: an unknown word "
          "says so", out, err)
    rc, out, _ = run("topics", "--json", "--search", "bwordaa cwordaa", snap)
    d = json.loads(out)
    shares = sorted((t["share"] for t in d["topics"]), reverse=True)
    check(d["held"] == 2 and len(shares) >= 2 and shares[0] + shares[1] > 0.8,
          "search of two words: both topics, the words' occurrences mostly theirs", d["held"],
          shares)

    # representative documents
    rc, out, err = run("topics", "--docs", "--json", snap)
    d = json.loads(out) if rc == 0 else {"topics": []}
    for t in d["topics"]:
        ex = t.get("examples", [])
        ok = 1 <= len(ex) <= 5
        for e in ex:
            src = docs.get(e["id"])
            want = " ".join(src["text"].split()) if src else ""
            words = e["text"].split()
            own = sum(family(w) == fam[t["topic"]] for w in words)
            ok = ok and src is not None and e["time"] == src["time"] and \
                want.startswith(e["text"]) and 0 < len(e["text"]) <= 200 and \
                own >= 0.5 * len(words) and e["score"] >= 0.25
        check(ok, "topic %d: %d representative documents of the stream, its own, with their "
              "time and text" % (t["topic"], len(ex)), [(e["id"], e["score"]) for e in ex])
    # the documents move with the model: scored again under the snapshot's model (the state
    # says at which update), their shares are what `infer` gives under that snapshot
    state = json.load(open(snap + ".track.json"))
    updates = json.loads(run("topics", "--json", snap)[1])["updates"]
    again = [e for e in state["examples"] if e["update"] == updates]
    src = os.path.join(tmp, "examples.jsonl")
    with open(src, "w") as f:
        for e in again:
            f.write(json.dumps({"id": e["id"], "text": docs[e["id"]]["text"]}) + "\n")
    rc, out, err = run("infer", "-t", str(K), "-f", "jsonl", snap, src)
    inferred = {}
    for line in out.splitlines():
        d = json.loads(line)
        inferred[d["id"]] = dict((k, w) for k, w in d["topics"])
    diffs = [abs(inferred.get(e["id"], {}).get(e["topic"], 0) - e["score"]) for e in again]
    check(len(again) >= K and diffs and max(diffs) < 0.1,
          "representative documents scored again under the snapshot's model: %d of %d, their "
          "shares within 0.1 of infer's" % (len(again), len(state["examples"])),
          max(diffs) if diffs else None)
    rc, out, err = run("topics", "--docs", os.path.join(sc.SRC, "tests/fixtures/snapshot-v1-k3.slda"))
    check(rc == 1 and "snapshot-v1-k3.slda.track.json" in err and out.count("topic ") == 3,
          "topics --docs without a tracking state: the topics, then exit 1 naming it", rc, err)
    rc, out, _ = run("topics", "--docs", "-n", "3", snap)
    check(len(re.findall(r"^  0\.\d\d \d{4}-\d\d-\d\dT[0-9:]+Z d\d+: \S", out, re.M)) >= K,
          "topics --docs text: indented documents", out[:300])

    # the report
    html, js = os.path.join(tmp, "r.html"), os.path.join(tmp, "r.json")
    rc, _, err = run("report", snaps, "--html", html, "--json", js)
    check(rc == 0, "report", rc, err[-300:])
    rj = json.load(open(js))
    check([t["label"] for t in rj["topics"] if t["topic"] == ck] == ["Cs & company \u00e9t\u00e9"]
          and all(len(t["auto"].split()) == 3 for t in rj["topics"]),
          "report JSON: labels", [(t["label"], t["auto"]) for t in rj["topics"]])
    check(all(1 <= len(t["examples"]) <= 5 for t in rj["topics"]),
          "report JSON: representative documents", [len(t["examples"]) for t in rj["topics"]])
    page = open(html).read()
    check("Cs &amp; company \u00e9t\u00e9" in page and page.count('<li class="doc">') >= K,
          "report HTML: the label and the documents")

    # the topic table at phone width, in Chromium
    if os.path.exists(axes.CHROMIUM):
        open(os.path.join(tmp, "fit.html"), "w").write(page.replace("</body>", FIT + "</body>"))
        for name, size in axes.SIZES.items():
            w, h = (int(x) for x in size.split(","))
            frame = os.path.join(tmp, "frame-%s.html" % name)
            open(frame, "w").write(FRAME % ("fit.html", w, h))
            dom = axes.chromium(tmp, "file://" + frame, "--dump-dom",
                                size="%d,%d" % (max(w, 500), h))
            m = re.search(r'<pre id="fit">(.*?)</pre>', dom, re.S)
            fit = json.loads(m.group(1).replace("&quot;", '"')) if m else {}
            check(fit and fit["w"] == w and fit["right"] <= w and fit["scroll"] <= w,
                  "report at %s: the topics table and the page fit the window" % name, fit)
            shot = os.path.join(art, "0079-report-%s.png" % name)
            open(os.path.join(tmp, "shot.html"), "w").write(FRAME % ("r.html", w, h))
            axes.chromium(tmp, "file://" + os.path.join(tmp, "shot.html"), "--screenshot=" + shot,
                          size="%d,%d" % (max(w, 500), h))
            check(os.path.exists(shot), "screenshot kept", shot)
        events_at_phone_width(tmp, art)
    else:
        print("SKIP: the Chromium checks (%s missing)" % axes.CHROMIUM)
    return sc.done("0079-track_explore", tmp)


def events_at_phone_width(tmp, art):
    stream = os.path.join(tmp, "ev.jsonl")
    subprocess.run([sys.executable, os.path.join(sc.SRC, "bench/track/gen.py"), "--docs", "6000",
                    "--topics", "8", "--span-days", "120", "--shape", "step,burst,late,fall",
                    "--seed", "1", "--out", stream], check=True, stdout=subprocess.DEVNULL)
    snaps = os.path.join(tmp, "evsnaps")
    rc, _, err = run("train", "-q", "-k", "8", "-X", "seed=1",
                     "--time-field", "time", "--snapshot-dir", snaps, "--snapshot-every", "300",
                     stream)
    check(rc == 0, "train (events)", rc, err[-300:])
    html = os.path.join(tmp, "ev.html")
    rc, _, err = run("report", snaps, "--html", html)
    check(rc == 0 and "<h2>Events (0)</h2>" not in open(html).read(),
          "report (events): a stream whose topics change has events", rc, err[-300:])
    open(os.path.join(tmp, "evfit.html"), "w").write(
        open(html).read().replace("</body>", EVFIT + "</body>"))
    frame = os.path.join(tmp, "frame-ev.html")
    open(frame, "w").write(FRAME % ("evfit.html", 390, 844))
    dom = axes.chromium(tmp, "file://" + frame, "--dump-dom", size="500,844")
    m = re.search(r'<pre id="fit">(.*?)</pre>', dom, re.S)
    fit = json.loads(m.group(1).replace("&quot;", '"')) if m else {}
    print("events at 390 px:", fit)
    check(fit and fit["w"] == 390 and fit["tables"] >= 1 and fit["over"] == [],
          "report at 390 px: every table fits its box", fit)
    check(fit and 100 <= fit["minwd"] < 1e9 and fit["cut"] == 0 and fit["sn"] == 0,
          "report at 390 px: the events' words column 100 px or wider, no word cut, no file "
          "name column", fit)
    shot = os.path.join(art, "0079-events-phone.png")
    # the whole page (the events are below the topics): a frame as tall as a long page
    open(os.path.join(tmp, "shot-ev.html"), "w").write(FRAME % ("ev.html", 390, 5000))
    axes.chromium(tmp, "file://" + os.path.join(tmp, "shot-ev.html"), "--screenshot=" + shot,
                  size="500,5000")


if __name__ == "__main__":
    raise SystemExit(main())
