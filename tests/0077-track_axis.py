#!/usr/bin/python3
"""0077-track_axis - time axes people can read: ticks at calendar boundaries, measured in Chromium.

Streams of three spans (bench/track/gen.py: three hours, five months, nine years) are trained
with snapshots and reported (`streamlda report --html`). Each report is loaded in Debian's
headless Chromium at 1280x900 and 390x844 with a script appended that measures every chart's
tick labels (getBoundingClientRect) and writes them into the page, read back with --dump-dom.
Checked for every chart at both sizes:
 - at least three labelled ticks, none overlapping the next, each inside its chart;
 - they cover the span: the first within the first third of the plot, the last within the
   last third;
 - the labels are of the span's calendar unit (clock times for hours, months for months,
   years for years) and name the year (for hours: the day) at least once;
 - no bar or line segment of the data is drawn over a label (the report's scale kept 10%
   headroom, so the highest bars covered the labels at the top).
On the nine years (about three documents a week) the prevalence charts' shares are shrunk toward
each topic's mean: the value axis stays below 75% (raw shares reach 99%).
Screenshots of the whole page at each width are kept: <build>/artifacts/0077-<span>-<size>.png. The old report labelled months
without a year, drew no ticks under two weeks, and crowded month ticks over nine years.
Skipped (exit 0, said so) when /usr/bin/chromium is missing.
"""
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
import axes  # noqa: E402
import scenario as sc  # noqa: E402
check = sc.check
GEN = os.path.join(os.environ["SLDA_SOURCE_DIR"], "bench", "track", "gen.py")


def main():
    tmp, art = axes.setup("0077")
    if not tmp:
        return 0
    for name, days, unit in (("hours", 0.125, "hours"), ("months", 150, "months"),
                             ("nine-years", 3287, "years")):
        stream = os.path.join(tmp, name + ".jsonl")
        subprocess.run([sys.executable, GEN, "--docs", "1500", "--topics", "4", "--span-days",
                        str(days), "--seed", "77", "--out", stream], check=True)
        snaps = os.path.join(tmp, name)
        res = subprocess.run([sc.BIN, "train", "-q", "-k", "4", "-X", "seed=1", "--time-field",
                              "time", "--snapshot-dir", snaps, "--snapshot-every", "500", stream],
                             capture_output=True, text=True, timeout=300)
        check(res.returncode == 0, name + ": train", res.stderr[-300:])
        html = os.path.join(tmp, name + ".html")
        res = subprocess.run([sc.BIN, "report", snaps, "--html", html], capture_output=True,
                             text=True, timeout=300)
        check(res.returncode == 0, name + ": report", res.stderr[-300:])
        if res.returncode:
            continue
        with open(html, encoding="utf-8") as f:
            page = f.read()
        measured = os.path.join(tmp, name + "-measured.html")
        with open(measured, "w", encoding="utf-8") as f:
            f.write(page.replace("</body>", axes.MEASURE + "</body>"))
        for size_name, size in axes.SIZES.items():
            charts = axes.measure(tmp, "file://" + measured, size)
            check(len(charts) >= 4, "%s %s: charts measured" % (name, size_name), len(charts))
            for c in charts:
                axes.check_chart("%s %s" % (name, size_name), unit, c)
                check(not c["covered"], "%s %s chart %d: no bar or line drawn over a tick label"
                      % (name, size_name, c["svg"]), c["covered"][:5])
                if name == "nine-years" and c["cls"] == "prev" and c["ymax"] is not None:
                    # about three documents a week: raw shares reach 99%
                    check(c["ymax"] <= 75, "%s %s chart %d: sparse windows do not spike (top %s%%)"
                          % (name, size_name, c["svg"], c["ymax"]))
            shot = os.path.join(art, "0077-%s-%s.png" % (name, size_name))
            # the whole page at the size's width, so the charts below the fold are seen too
            axes.chromium(tmp, "file://" + html, "--screenshot=" + shot,
                          size=size.split(",")[0] + ",3000")
            check(os.path.exists(shot), "%s %s: screenshot kept" % (name, size_name), shot)
    shutil.rmtree(os.path.join(tmp, "chrome"), ignore_errors=True)
    return sc.done("0077-track_axis", tmp)


if __name__ == "__main__":
    sys.exit(main())
