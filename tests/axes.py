"""axes - what the Chromium tests of time axes share (tests/0077 the report, tests/0063 the page).

MEASURE, a script appended to a page: once its charts are drawn (it waits for them, up to
three seconds of the page's time), every SVG's tick labels (text.tick) are measured with
getBoundingClientRect and written into <pre id="measured"> as JSON; measure() loads a page in
headless Chromium (--dump-dom) and returns them; check_chart() checks one chart: at least three
labelled ticks, none overlapping the next, inside the chart, covering the span, of the span's
calendar unit, the year (the day, for hours) named.
"""
import json
import os
import re
import subprocess
import tempfile

import scenario as sc

check = sc.check
CHROMIUM = "/usr/bin/chromium"
SIZES = {"laptop": "1280,900", "phone": "390,844"}

MEASURE = """<script>
function slda_measure() {
  var out = [];
  document.querySelectorAll('svg').forEach(function (s, i) {
    // the old report's tick labels had no class: its 7-unit texts
    var ticks = s.querySelectorAll('text.tick, text[font-size="7"]');
    if (!ticks.length && !s.querySelector('line')) return;
    var sb = s.getBoundingClientRect(), plot = s.querySelector('rect');
    var pb = plot ? plot.getBoundingClientRect() : sb;
    var t = [];
    ticks.forEach(function (e) {
      var b = e.getBoundingClientRect();
      t.push({text: e.textContent, l: b.left, r: b.right, h: b.height});
    });
    // data drawn over a label (a bar, a line segment painted after it, boxes crossing)
    var covered = [];
    ticks.forEach(function (e) {
      var b = e.getBoundingClientRect();
      s.querySelectorAll('rect, line').forEach(function (m) {
        if (m === plot || m.getAttribute('stroke') === '#e3e6ea' ||
            !(e.compareDocumentPosition(m) & Node.DOCUMENT_POSITION_FOLLOWING)) return;
        var mb = m.getBoundingClientRect();
        if (mb.left < b.right - 0.5 && mb.right > b.left + 0.5 && mb.top < b.bottom - 0.5 &&
            mb.bottom > b.top + 0.5) covered.push(e.textContent);
      });
    });
    var y = [];  // the value axis' labels ("40%")
    s.querySelectorAll('text').forEach(function (e) {
      if (/^[0-9.]+%$/.test(e.textContent)) y.push(parseFloat(e.textContent));
    });
    out.push({svg: i, cls: s.getAttribute('class') || '', l: sb.left, r: sb.right,
              pl: pb.left, pr: pb.right, ticks: t, covered: covered,
              ymax: y.length ? Math.max.apply(null, y) : null});
  });
  var pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
var slda_tries = 0;
(function slda_wait() {  // the live page draws after its fetches answer
  if (document.querySelector('svg text.tick') || ++slda_tries > 30) slda_measure();
  else setTimeout(slda_wait, 100);
})();
</script>"""


def setup(test):
    """(scratch directory, artifacts directory) of test "NNNN", or (None, None) after saying
    SKIP when Chromium is missing."""
    if not os.path.exists(CHROMIUM):
        print("SKIP: %s not installed (scripts/setup.sh installs chromium)" % CHROMIUM)
        return None, None
    tmp = tempfile.mkdtemp(prefix="slda-%s-" % test)
    art = os.path.join(os.environ.get("SLDA_BUILD_DIR", tmp), "artifacts")
    os.makedirs(art, exist_ok=True)
    return tmp, art


def chromium(tmp, url, *args, size):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--user-data-dir=" + os.path.join(tmp, "chrome"),
           "--virtual-time-budget=3000", "--window-size=" + size, "--hide-scrollbars"]
    res = subprocess.run(cmd + list(args) + [url], capture_output=True, text=True, timeout=180)
    return res.stdout


def measure(tmp, url, size, *args):
    """The measured charts of the page at url (MEASURE appended), legends left out."""
    dom = chromium(tmp, url, "--dump-dom", *args, size=size)
    m = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    charts = json.loads(m.group(1).replace("&quot;", '"')) if m else []
    return [c for c in charts if c["cls"] != "legend"]


UNIT = {"hours": re.compile(r"^(\d+ \w{3} (\d{4} )?)?\d\d:\d\d$"),
        "months": re.compile(r"^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)( \d{4})?$"),
        "years": re.compile(r"^\d{4}$")}
CONTEXT = {"hours": re.compile(r"^\d+ \w{3} \d{4} \d\d:\d\d$"), "months": re.compile(r"\d{4}$"),
           "years": re.compile(r"^\d{4}$")}


def check_chart(name, unit, c):
    t = sorted(c["ticks"], key=lambda x: x["l"])
    where = "%s chart %d (%s)" % (name, c["svg"], c["cls"])
    if len(t) < 3:
        check(False, where + ": at least 3 labelled ticks", [x["text"] for x in t])
        return
    overlaps = [(a["text"], b["text"]) for a, b in zip(t, t[1:]) if a["r"] > b["l"]]
    outside = [x["text"] for x in t if x["l"] < c["l"] - 0.5 or x["r"] > c["r"] + 0.5]
    width = c["pr"] - c["pl"]
    covers = t[0]["l"] - c["pl"] <= width / 3 and c["pr"] - t[-1]["l"] <= width / 3
    wrong = [x["text"] for x in t if not UNIT[unit].match(x["text"])]
    context = any(CONTEXT[unit].search(x["text"]) for x in t)
    ok = not overlaps and not outside and covers and not wrong and context
    if not ok:
        print(where, [(x["text"], round(x["l"]), round(x["r"])) for x in t], c["pl"], c["pr"])
    check(not overlaps, where + ": tick labels do not overlap", overlaps)
    check(not outside, where + ": tick labels inside the chart", outside)
    check(covers, where + ": ticks cover the span", t[0]["l"], t[-1]["l"], c["pl"], c["pr"])
    check(not wrong, where + ": labels of the span's unit (%s)" % unit, wrong)
    check(context, where + ": the year (or day) named", [x["text"] for x in t])


