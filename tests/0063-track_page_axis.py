#!/usr/bin/python3
"""0063-track_page_axis - the live page's time axis people can read, measured in Chromium.

For each of three spans (three hours, five months, nine years) a service (on a `streamlda
broker` cluster) trains on 600 dated documents spread evenly over the span (scenario's themes;
`produce --time-field date --partition 0`). Its page is loaded in headless Chromium at 1280x900
and 390x844 with tests/axes.py's measuring script (the page saved with it appended and a
<base> pointing at the service, so its fetches reach the live JSON), and the prevalence chart's
tick labels are checked as the report's are (tests/0077): at least three, none overlapping,
inside the chart, covering the span, of the span's unit, the year (the day) named.
On the nine years (about a document a week) the shares are shrunk toward each topic's mean, so
the value axis stays below 75% (raw, single-document windows reach 100%).
Screenshots: <build>/artifacts/0063-<span>-<size>.png. The old page labelled three points
with ISO date-times, whatever the span.
Skipped (exit 0, said so) when /usr/bin/chromium is missing.
"""
import os
import random
import shutil
import sys
import urllib.request

sys.dont_write_bytecode = True
import axes  # noqa: E402
import scenario as sc  # noqa: E402
check = sc.check


def main():
    tmp, art = axes.setup("0063")
    if not tmp:
        return 0
    n = 600
    for name, span_s, unit in (("hours", 3 * 3600, "hours"), ("months", 150 * 86400, "months"),
                               ("nine-years", 3287 * 86400, "years")):
        docs = sc.dated_docs(random.Random(63), 0, n)
        for i, d in enumerate(docs):
            d["date"] = sc.T0 + i * span_s // n
        sub = os.path.join(tmp, name)
        os.makedirs(sub)
        broker = sc.Broker(sub, "documents", partitions=1, brokers=1)
        try:
            svc = sc.Service(sub, broker.addr, [
                "topics=4", "http.port=0", "minibatch.docs=50", "minibatch.ms=300",
                "snapshot.every.ms=800", "snapshot.topic=", "input.time.field=date",
                "snapshot.dir=" + os.path.join(sub, "snaps")])
            port = svc.http_port()
            sc.produce_dated(broker, sub, docs, name)
            check(sc.wait_for(lambda: (svc.api("status") or {}).get("docs", 0) >= n, 90,
                              name + " trained"), name + ": the page counts every document")
            base = "http://127.0.0.1:%d/" % port
            html = urllib.request.urlopen(base, timeout=10).read().decode("utf-8")
            page = os.path.join(sub, "page.html")
            with open(page, "w", encoding="utf-8") as f:
                f.write(html.replace("<head>", '<head><base href="%s">' % base, 1)
                        .replace("</body>", axes.MEASURE + "</body>"))
            for size_name, size in axes.SIZES.items():
                charts = axes.measure(sub, "file://" + page, size, "--disable-web-security")
                check(len(charts) == 1, "%s %s: the prevalence chart measured" % (name, size_name),
                      len(charts))
                for c in charts:
                    axes.check_chart("page %s %s" % (name, size_name), unit, c)
                    if name == "nine-years":  # about one document a week: raw shares hit 100%
                        check(c["ymax"] is not None and c["ymax"] <= 75,
                              "page %s %s: sparse windows do not spike (value axis top %s%%)"
                              % (name, size_name, c["ymax"]))
                shot = os.path.join(art, "0063-%s-%s.png" % (name, size_name))
                axes.chromium(sub, base, "--screenshot=" + shot, size=size)
                check(os.path.exists(shot), "%s %s: screenshot kept" % (name, size_name), shot)
            check(svc.stop() == 0, name + ": SIGTERM -> exit 0")
        finally:
            broker.stop()
        shutil.rmtree(os.path.join(sub, "chrome"), ignore_errors=True)
    return sc.done("0063-track_page_axis", tmp)


if __name__ == "__main__":
    sys.exit(main())
