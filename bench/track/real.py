#!/usr/bin/env python3
"""real.py - the tracking measurements of issue 25 on real text, printed as tables.

  real.py [--bin build/streamlda] [--data SHARED/data] [--seeds 1,2,3] [--ks 20,50]
          [--parts 1,2,3] [--keep DIR]

1. Reuters-21578 in time order (reuters21578.by-time.tsv.gz, its `topics` column): `train
   --time-field` with week windows (-X track.window=week), snapshots every 1,000 documents. For
   each of the 10 most frequent categories, the topic that matches it best by the documents
   (the largest Pearson r, over the articles, between a topic's share of the article under the
   final model (`infer`) and the article carrying the category), then Pearson r over the weeks
   with articles of that topic's weekly share against the category's (the share of the week's
   articles carrying it), three ways: `train` (shares scored by the model of the moment while
   training: -X track.sample.docs=0), `report` (the same, with each window's sample scored again
   at each snapshot, the default) and `timeline` (every article under the final model).
2. False events on stationary streams: KOS, AP (bags of words written out as text), 20 Newsgroups
   (subject + body) and Reuters, each shuffled and given event times spread uniformly over 2010.
   Every event counts as false: the report's changes in prevalence (rise/fall), its snapshot
   events (change, taken, drift, moved, rise, fall) and the tracker's (birth, change, merge,
   death; the engine's births, deaths, merges).
3. Recall on injected changes: 20 Newsgroups with 15 groups over 2010 and 5 more groups joining
   on 2010-07-02 (uniform over the rest of the year); Reuters with a set of categories (every
   article carrying one) held back and released on 2010-07-02. A new group counts as detected
   when an event of kind birth, taken, change, drift or rise has words that match it (of the
   groups, its normalised P(group | word) averaged over the event's words is the largest and at
   least 0.3) and an event time from the release to 2,000 documents after it; delay = documents
   streamed from the release to the event time.
Runs K=20 and K=50, one pass, seeds --seeds (parts 2 and 3: the first two). Scratch in a mktemp
directory (--keep: DIR). About 15 minutes on 2 busy cores; docs/tracking.md, "Measured on real
text", has the tables.
"""
import argparse
import calendar
import collections
import gzip
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import news20_text  # noqa: E402  (bench/news20_text.py: the archive's messages)

WEEK_MS = 7 * 86400 * 1000
Y2010 = 1262304000  # 2010-01-01T00:00:00Z
YEAR_S = 365 * 86400
JOIN_S = Y2010 + 182 * 86400  # 2010-07-02T00:00:00Z: a day boundary, so no window straddles it
TOKEN = re.compile(r"[a-z]+")
DETECT_KINDS = {"birth", "taken", "change", "drift", "rise", "subject"}


def iso(sec):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sec))


def pearson(x, y):
    n = len(x)
    if n < 3:
        return float("nan")
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return float("nan")
    return sxy / math.sqrt(sxx * syy)


class Run:
    def __init__(self, binary, scratch):
        self.bin = binary
        self.scratch = scratch

    def sh(self, args, out=None):
        r = subprocess.run([self.bin] + args, stdout=subprocess.PIPE if out is None else out,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit("real.py: %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr[-2000:]))
        return r.stdout

    def train(self, stream, name, K, seed, every, extra=()):
        d = os.path.join(self.scratch, name)
        shutil.rmtree(d, ignore_errors=True)
        model = d + ".slda"
        self.sh(["train", "-q", "-k", str(K), "-X", "seed=%d" % seed, "--time-field", "time",
                 "--snapshot-dir", d, "--snapshot-every", str(every), "-o", model] + list(extra)
                + [stream])
        return d, model

    def report(self, d):
        out = d + ".report.json"
        self.sh(["report", d, "--json", out])
        return json.load(open(out))

    def timeline(self, model, stream, window):
        out = model + ".timeline.json"
        self.sh(["timeline", "--time-field", "time", "--window", window, model, stream,
                 "--json", out])
        return json.load(open(out))

    def infer(self, model, stream, K):
        out = self.sh(["infer", "-t", str(K), model, stream])
        theta = {}
        for line in out.splitlines():
            r = json.loads(line)
            v = [0.0] * K
            for k, w in r["topics"]:
                v[k] = w
            theta[r["id"]] = v
        return theta


def write_stream(path, docs):
    """docs: (id, time_s, text, labels) in any order; written in time order."""
    docs = sorted(docs, key=lambda d: (d[1], d[0]))
    with open(path, "w") as f:
        for i, t, text, labels in docs:
            f.write(json.dumps({"id": i, "time": iso(t), "text": text, "labels": labels}) + "\n")
    return docs


def spread(rng, docs, lo, hi):
    """Give each (id, text, labels) a uniform random time in [lo, hi) seconds."""
    return [(i, lo + rng.random() * (hi - lo), text, labels) for i, text, labels in docs]


# ---- corpora -------------------------------------------------------------------------------

def load_reuters(data):
    out = []
    with gzip.open(os.path.join(data, "reuters21578/reuters21578.by-time.tsv.gz"), "rt",
                   encoding="utf-8") as f:
        next(f)
        for line in f:
            p = line.rstrip("\n").split("\t")
            if not (p[4] or p[5]):
                continue
            out.append((p[0], p[1] + "Z", (p[4] + ". " + p[5]).strip(),
                        [t for t in p[3].split(",") if t]))
    return out


def load_bow_uci(data):
    vocab = open(os.path.join(data, "kos/vocab.kos.txt")).read().split("\n")
    docs = collections.defaultdict(list)
    with open(os.path.join(data, "kos/docword.kos.txt")) as f:
        for _ in range(3):
            next(f)
        for line in f:
            d, w, c = line.split()
            docs[d] += [vocab[int(w) - 1]] * int(c)
    return docs


def load_bow_ldac(data):
    vocab = open(os.path.join(data, "ap/vocab.txt")).read().split("\n")
    docs = {}
    for n, line in enumerate(open(os.path.join(data, "ap/ap.dat"))):
        words = []
        for pair in line.split()[1:]:
            w, c = pair.split(":")
            words += [vocab[int(w)]] * int(c)
        docs[str(n + 1)] = words
    return docs


def bow_docs(bags, rng):
    out = []
    for i, words in bags.items():
        words = list(words)
        rng.shuffle(words)
        out.append((i, " ".join(words), []))
    return out


def load_20news(data):
    out = []
    for _, group, name, subj, body in news20_text.messages(
            os.path.join(data, "20news-bydate/20news-bydate.tar.gz")):
        text = (subj + ". " + body).strip()
        if len(TOKEN.findall(text.lower())) >= 5:
            out.append(("%s/%s" % (group, name), text, [group]))
    out.sort()
    return out


# ---- part 1: Reuters categories against topics ------------------------------------------

def week_shares(prev_or_tl):
    """{window start_ms: [K shares]} of a report's prevalence or a timeline."""
    return {w["start_ms"]: w["share"] for w in prev_or_tl["windows"] if w["docs"]}


def part1(run, reuters, Ks, seeds):
    stream = os.path.join(run.scratch, "reuters-time.jsonl")
    with open(stream, "w") as f:
        for i, t, text, labels in reuters:
            f.write(json.dumps({"id": i, "time": t, "text": text}) + "\n")
    times = {}
    for i, t, _, _ in reuters:
        times[i] = calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ")) * 1000
    cats = collections.Counter(c for r in reuters for c in r[3])
    top = [c for c, _ in cats.most_common(10)]
    # the categories' weekly shares: the share of each week's articles carrying the category
    per_week = collections.defaultdict(lambda: collections.Counter())
    for i, t, _, labels in reuters:
        w = times[i] // WEEK_MS * WEEK_MS
        per_week[w]["_docs"] += 1
        for c in labels:
            per_week[w][c] += 1
    gap = collections.defaultdict(list)  # (K, 0 train / 1 report) -> mean |share - timeline|
    rows = collections.defaultdict(list)  # (K, cat) -> [(r_train, r_report, r_timeline, r_doc, words)]
    for K in Ks:
        for seed in seeds:
            extra = ["-X", "track.window=week"]
            d0, _ = run.train(stream, "rt-raw-%d-%d" % (K, seed), K, seed, 1000,
                              extra + ["-X", "track.sample.docs=0"])
            d1, model = run.train(stream, "rt-%d-%d" % (K, seed), K, seed, 1000, extra)
            rep0 = run.report(d0)["prevalence"]
            rep1 = run.report(d1)
            tl = run.timeline(model, stream, "week")
            assert rep1["prevalence"]["window_ms"] == WEEK_MS and tl["window_ms"] == WEEK_MS
            words = {t["topic"]: t["words"] for t in tl["topics"]}
            theta = run.infer(model, stream, K)
            ids = [i for i, _, _, _ in reuters if i in theta]
            s_train, s_rep, s_tl = week_shares(rep0), week_shares(rep1["prevalence"]), \
                week_shares(tl)
            weeks = sorted(w for w in per_week if w in s_tl)
            for j, s in enumerate((s_train, s_rep)):
                e = [abs(s[w][k] - s_tl[w][k]) for w in weeks if w in s for k in range(K)]
                gap[(K, j)].append(sum(e) / len(e))
            for c in top:
                ind = [1.0 if c in lab else 0.0 for i, _, _, lab in reuters if i in theta]
                best, rdoc = -1, -2.0
                for k in range(K):
                    r = pearson([theta[i][k] for i in ids], ind)
                    if r > rdoc:
                        best, rdoc = k, r
                rs = []
                for s in (s_train, s_rep, s_tl):
                    ws = [w for w in weeks if w in s]
                    rs.append(pearson([s[w][best] for w in ws],
                                      [per_week[w][c] / per_week[w]["_docs"] for w in ws]))
                rows[(K, c)].append(tuple(rs) + (rdoc, " ".join(words.get(best, [])[:5]),
                                                 len(weeks)))
    print("## 1. Reuters-21578 in time order: Pearson r of the matched topic's weekly share "
          "against its category's")
    print("   (week windows with articles; mean [min..max] over seeds %s; match: the topic whose "
          "share of an article correlates best with the category over the articles)" %
          ",".join(map(str, seeds)))
    print()
    print("| K | category | articles | r train | r report | r timeline | r doc match | "
          "topic (first seed) |")
    print("| ---: | --- | ---: | --- | --- | --- | ---: | --- |")
    for K in Ks:
        for c in top:
            v = rows[(K, c)]

            def agg(j):
                xs = [x[j] for x in v if not math.isnan(x[j])]
                if not xs:
                    return "nan"
                return "%.2f [%.2f..%.2f]" % (sum(xs) / len(xs), min(xs), max(xs))
            print("| %d | %s | %d | %s | %s | %s | %.2f | %s |" % (
                K, c, cats[c], agg(0), agg(1), agg(2), sum(x[3] for x in v) / len(v), v[0][4]))
    print("(weeks with articles: %d)" % rows[(Ks[0], top[0])][0][5])
    print()
    for K in Ks:
        print("K=%d: mean |weekly share - timeline's| over weeks and topics: train %.4f, "
              "report %.4f" % (K, sum(gap[(K, 0)]) / len(gap[(K, 0)]),
                               sum(gap[(K, 1)]) / len(gap[(K, 1)])))
    print()


# ---- events ---------------------------------------------------------------------------------

def all_events(rep):
    """Every event of a report JSON as (source, kind, time_ms, words list)."""
    ev = []
    for c in rep.get("changes", []):
        ev.append(("report-change", c["kind"], c["start_ms"], c["words"].split()))
    for e in rep.get("events", []):
        w = e.get("words", "").split(" (was at ")[0]
        ev.append(("report-event", e["kind"], e["time_ms"], w.split()))
    for e in rep.get("tracker_events", []):
        w = e.get("words", [])
        if isinstance(w, str):
            w = w.split()
        src = "engine" if e.get("engine") else "tracker"
        ev.append((src, e["kind"], e["event_ms"], w))
    return ev


def tracker_states_events(d):
    """The events in the newest tracking state (with engine ones flagged)."""
    states = sorted(f for f in os.listdir(d) if f.endswith(".track.json"))
    if not states:
        return []
    return json.load(open(os.path.join(d, states[-1]))).get("events", [])


def collect_events(run, d):
    rep = run.report(d)
    # the report merges the states' events; take the newest state's too (it also holds the
    # engine's) and de-duplicate
    ev = all_events(rep)
    seen = {(k, t, " ".join(w)) for s, k, t, w in ev if s in ("tracker", "engine")}
    for e in tracker_states_events(d):
        w = e.get("words", [])
        w = w.split() if isinstance(w, str) else w
        key = (e["kind"], e["event_ms"], " ".join(w))
        if key not in seen:
            seen.add(key)
            ev.append(("engine" if e.get("engine") else "tracker", e["kind"], e["event_ms"], w))
    return ev


def part2(run, streams, Ks, seeds):
    print("## 2. False events on stationary real streams (shuffled, times uniform over 2010)")
    print()
    print("| stream | K | runs | documents | report changes | report snapshot events | "
          "tracker events | engine events | all per 10,000 documents |")
    print("| --- | ---: | ---: | ---: | --- | --- | --- | --- | ---: |")
    for name, docs in streams:
        for K in Ks:
            n = 0
            kinds = [collections.Counter() for _ in range(4)]
            for seed in seeds:
                rng = random.Random(seed)
                path = os.path.join(run.scratch, "%s-%d.jsonl" % (name, seed))
                write_stream(path, spread(rng, docs, Y2010, Y2010 + YEAR_S))
                d, _ = run.train(path, "st-%s-%d-%d" % (name, K, seed), K, seed, 500)
                for src, kind, _, _ in collect_events(run, d):
                    j = ["report-change", "report-event", "tracker", "engine"].index(src)
                    kinds[j][kind] += 1
                n += len(docs)

            def fmt(c):
                return ", ".join("%s %d" % kv for kv in sorted(c.items())) or "0"
            total = sum(sum(c.values()) for c in kinds)
            print("| %s | %d | %d | %d | %s | %s | %s | %s | %.1f |" % (
                name, K, len(seeds), n, fmt(kinds[0]), fmt(kinds[1]), fmt(kinds[2]),
                fmt(kinds[3]), total * 1e4 / n))
    print()


# ---- part 3: injected new subjects -------------------------------------------------------

class Matcher:
    """Which group an event's words belong to: P(g|w) with each group's counts normalised by
    its tokens, averaged over the words the corpus holds at least 5 times."""

    def __init__(self, docs):
        self.n = collections.defaultdict(collections.Counter)
        self.tot = collections.Counter()
        for _, text, labels in docs:
            toks = TOKEN.findall(text.lower())
            for g in (labels or ["_none"]):
                self.n[g].update(toks)
                self.tot[g] += len(toks)
        self.wtot = collections.Counter()
        for g in self.n:
            self.wtot.update(self.n[g])

    def match(self, words):
        score = collections.Counter()
        used = 0
        for w in words:
            if self.wtot[w] < 5:
                continue
            rel = {g: self.n[g][w] / self.tot[g] for g in self.n}
            s = sum(rel.values())
            for g, v in rel.items():
                score[g] += v / s
            used += 1
        if not used:
            return None, 0.0
        g, v = score.most_common(1)[0]
        return g, v / used


def injected(run, label, old, new, K, seed):
    """old: docs over the year; new: docs released at JOIN_S. Returns rows per new group."""
    rng = random.Random(seed)
    docs = spread(rng, old, Y2010, Y2010 + YEAR_S) + spread(rng, new, JOIN_S, Y2010 + YEAR_S)
    path = os.path.join(run.scratch, "%s-%d-%d.jsonl" % (label, K, seed))
    docs = write_stream(path, docs)
    times = [t for _, t, _, _ in docs]
    before = sum(1 for t in times if t < JOIN_S)
    d, _ = run.train(path, "inj-%s-%d-%d" % (label, K, seed), K, seed, 500)
    matcher = Matcher(old + new)
    groups = sorted({g for _, _, lab in new for g in lab})
    found = {g: None for g in groups}
    false_before = 0
    for src, kind, ms, words in collect_events(run, d):
        t = ms / 1000.0
        if t < JOIN_S:
            false_before += 1
            continue
        if kind not in DETECT_KINDS:
            continue
        g, score = matcher.match(words[:10])
        if g in found and score >= 0.3:
            delay = sum(1 for x in times if JOIN_S <= x <= t)
            if found[g] is None or delay < found[g][0]:
                found[g] = (delay, "%s %s" % (src, kind), " ".join(words[:6]))
    late = {g: v[0] for g, v in found.items() if v and v[0] > 2000}
    found = {g: (v if v and v[0] <= 2000 else None) for g, v in found.items()}
    return found, late, false_before, before


def part3(run, news, reuters_docs, Ks, seeds):
    print("## 3. New subjects injected mid-stream (released on 2010-07-02; detected within "
          "2,000 documents)")
    print()
    print("| stream | K | seed | new groups detected | delays (documents) | first events | "
          "found later (delay) | events before the release (per 10,000) |")
    print("| --- | ---: | ---: | --- | --- | --- | --- | --- |")
    groups = sorted({lab[0] for _, _, lab in news})
    hits = total = 0
    for K in Ks:
        for seed in seeds:
            rng = random.Random(1000 + seed)
            newg = set(rng.sample(groups, 5))
            cases = [("20news", [x for x in news if x[2][0] not in newg],
                      [x for x in news if x[2][0] in newg])]
            held = [("crude", "grain", "ship"), ("money-fx", "interest", "trade"),
                    ("crude", "interest", "ship")][(seed - 1) % 3]
            hidden = [x for x in reuters_docs if set(x[2]) & set(held)]
            # only the held categories name an article's group (others are old subjects)
            hidden = [(i, text, [c for c in lab if c in held]) for i, text, lab in hidden]
            cases.append(("reuters", [x for x in reuters_docs if not set(x[2]) & set(held)],
                          hidden))
            for label, old, new in cases:
                found, late, fb, nb = injected(run, label, old, new, K, seed)
                ok = [g for g, v in found.items() if v]
                hits += len(ok)
                total += len(found)
                print("| %s | %d | %d | %d/%d (%s) | %s | %s | %s | %d (%.1f) |" % (
                    label, K, seed, len(ok), len(found),
                    ", ".join(g + ("" if found[g] else " MISSED") for g in sorted(found)),
                    ", ".join(str(found[g][0]) for g in sorted(ok)) or "-",
                    "; ".join("%s: %s [%s]" % (g, found[g][1], found[g][2]) for g in sorted(ok))
                    or "-", ", ".join("%s (%d)" % kv for kv in sorted(late.items())) or "-",
                    fb, fb * 1e4 / max(1, nb)))
    print()
    print("recall: %d of %d new subjects (%.0f%%)" % (hits, total, 100.0 * hits / max(1, total)))
    print()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(here, "../../build/streamlda"))
    ap.add_argument("--data", default=os.environ.get("SLDA_SHARED_DIR", "/work/shared") + "/data")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--ks", default="20,50")
    ap.add_argument("--parts", default="1,2,3")
    ap.add_argument("--keep")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    Ks = [int(k) for k in a.ks.split(",")]
    parts = set(a.parts.split(","))
    scratch = a.keep or tempfile.mkdtemp(prefix="slda-real-")
    os.makedirs(scratch, exist_ok=True)
    run = Run(os.path.abspath(a.bin), scratch)
    t0 = time.time()
    try:
        reuters = load_reuters(a.data)
        if "1" in parts:
            part1(run, reuters, Ks, seeds)
        rdocs = [(i, text, lab) for i, _, text, lab in reuters]
        news = load_20news(a.data) if parts & {"2", "3"} else []
        if "2" in parts:
            rng = random.Random(7)
            streams = [("KOS", bow_docs(load_bow_uci(a.data), rng)),
                       ("AP", bow_docs(load_bow_ldac(a.data), rng)),
                       ("20news", news), ("Reuters", rdocs)]
            part2(run, streams, Ks, seeds[:2])
        if "3" in parts:
            part3(run, news, rdocs, Ks, seeds[:2])
    finally:
        if not a.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print("(%.0f s, %s)" % (time.time() - t0, os.path.basename(a.bin)))


if __name__ == "__main__":
    main()
