#!/usr/bin/python3
"""0010-kafka_e2e - documents through Kafka into `streamlda run` and out again.

A `streamlda broker` process hosts the mock cluster. Persuasion is produced
by kcat (one paragraph a message), Northanger Abbey by kafka-python (JSON
{"id","text"}, keyed by id). `streamlda run` (own process, output.topic on,
held-out docs on, /metrics on an ephemeral port) consumes everything; then
SIGTERM must give exit 0 and a final snapshot whose document count equals
the documents the service trained on = produced - held out - dead letters.
Also checked: /healthz answers 200 "ok", /metrics carries every documented
metric, each trained document has one output record keyed by its id with
source.* headers, the snapshot topic rebuilds (examples/read_snapshot.py)
into the same model as the file, and `streamlda topics` prints K topics.

This file also holds the helpers the other Kafka scenario tests (0011-0015)
load with importlib.
"""
import atexit
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.environ.get("STREAMLDA", "streamlda")
SRC = os.environ.get("SLDA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
FAILURES = [0]
PROCS = []  # every process started here, killed at exit if still running


@atexit.register
def _kill_leftovers():
    for proc in PROCS:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
FAST_GROUP = ["kafka.session.timeout.ms=6000", "kafka.heartbeat.interval.ms=500"]


def load_reader():
    """examples/read_snapshot.py as a module."""
    path = os.path.join(SRC, "examples", "read_snapshot.py")
    spec = importlib.util.spec_from_file_location("read_snapshot", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


reader = load_reader()


def check(cond, what, *values):
    """Count a failed check; always print what was compared."""
    print("%s: %s %s" % ("ok" if cond else "FAILED", what, " ".join(repr(v) for v in values)))
    if not cond:
        FAILURES[0] += 1
    return cond


def done(name, tmp=None):
    """Summary lines and exit code; the temporary directory is removed on success."""
    if tmp and not FAILURES[0]:
        shutil.rmtree(tmp, ignore_errors=True)
    elif tmp:
        print("kept %s for inspection" % tmp)
    print("%s: %d failed" % (name, FAILURES[0]))
    print("%d passed, %d failed" % (0 if FAILURES[0] else 1, 1 if FAILURES[0] else 0))
    return 1 if FAILURES[0] else 0


def wait_for(pred, timeout, what, step=0.2):
    """Poll pred() until true or timeout seconds; returns its last value."""
    end = time.time() + timeout
    while True:
        v = pred()
        if v or time.time() > end:
            if not v:
                print("timed out after %ds waiting for %s" % (timeout, what))
            return v
        time.sleep(step)


class Broker:
    """`streamlda broker` in its own process."""

    def __init__(self, tmp, topics, partitions=4, brokers=3, control=False):
        self.addr_file = os.path.join(tmp, "broker.addr")
        self.fifo = os.path.join(tmp, "broker.ctl") if control else None
        cmd = [BIN, "broker", "--brokers", str(brokers), "--partitions", str(partitions),
               "--topics", topics, "--address-file", self.addr_file]
        if self.fifo:
            cmd += ["--control", self.fifo]
        self.log = open(os.path.join(tmp, "broker.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        PROCS.append(self.proc)
        line = self.proc.stdout.readline().strip()  # the address, once topics exist
        self.addr = line
        if not line:
            raise RuntimeError("broker printed no address (exit %s)" % self.proc.poll())
        with open(self.addr_file) as f:
            check(f.read().strip() == line, "broker --address-file matches stdout", line)
        print("broker at %s" % self.addr)

    def control(self, cmd):
        with open(self.fifo, "w") as f:
            f.write(cmd + "\n")
        time.sleep(0.3)  # the broker reads its FIFO every 200 ms

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=30)
        self.log.close()
        return rc


class Service:
    """`streamlda run` in its own process, stderr in a log file."""

    def __init__(self, tmp, addr, props, name="svc"):
        self.logpath = os.path.join(tmp, name + ".log")
        self.log = open(self.logpath, "a")
        cmd = [BIN, "run", "-X", "kafka.bootstrap.servers=" + addr]
        for p in FAST_GROUP + props:
            cmd += ["-X", p]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, cwd=tmp)
        PROCS.append(self.proc)
        self.port = None

    def text(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def http_port(self):
        if self.port is None:
            m = wait_for(lambda: re.findall(r"http: 127\.0\.0\.1:(\d+)", self.text()), 30,
                         "the http port line")
            self.port = int(m[-1]) if m else 0
        return self.port

    def get(self, path):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.http_port(), path),
                                        timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError as e:
            return 0, str(e)

    def metrics(self):
        """{name or name{labels}: value} without the model label."""
        status, body = self.get("/metrics")
        out = {}
        if status != 200:
            return out
        for line in body.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            key, value = line.rsplit(" ", 1)
            key = re.sub(r'model="[^"]*",?', "", key).replace("{}", "")
            out[key] = float(value)
        return out

    def metric(self, name):
        return self.metrics().get(name, -1)

    def stop(self, timeout=60):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "hung"
        self.log.close()
        return rc

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()


def snapshots(d, model):
    """Snapshot files of model in d, newest last."""
    if not os.path.isdir(d):
        return []
    names = sorted(n for n in os.listdir(d) if re.fullmatch(re.escape(model) + r"-\d{20}\.slda", n))
    return [os.path.join(d, n) for n in names]


def newest_header(d, model):
    files = snapshots(d, model)
    for path in reversed(files):
        try:
            with open(path, "rb") as f:
                return reader.parse_snapshot(f.read())[0]
        except (reader.SnapshotError, OSError):
            continue
    return None


def read_file(path):
    with open(path, "rb") as f:
        return reader.parse_snapshot(f.read())


def produce_kcat(addr, topic, path):
    """One message a line with kcat; returns the number of lines sent."""
    res = subprocess.run(["kcat", "-P", "-b", addr, "-t", topic, "-l", path],
                         capture_output=True, text=True, timeout=120)
    check(res.returncode == 0, "kcat -P exit 0", res.returncode, res.stderr[-300:])
    with open(path) as f:
        return sum(1 for line in f if line.strip())


def produce_lines(addr, tmp, docs, tag, topic="documents", extra=()):
    """docs (one line each) into topic with `streamlda produce`; returns how many were sent."""
    path = os.path.join(tmp, "part-%s.txt" % tag)
    with open(path, "w") as f:
        f.write("\n".join(docs) + "\n")
    res = subprocess.run([BIN, "produce", "--brokers", addr, "--topic", topic] + list(extra) + [path],
                         capture_output=True, text=True, timeout=120)
    check(res.returncode == 0, "produce part %s" % tag, res.returncode, res.stderr.strip()[-200:])
    return len(docs)


def produce_python(addr, topic, values, keys=None, headers=None):
    """values (bytes) with kafka-python, waiting for every acknowledgement."""
    from kafka import KafkaProducer

    prod = KafkaProducer(bootstrap_servers=addr, acks="all", linger_ms=5)
    futures = [prod.send(topic, value=v, key=keys[i] if keys else None,
                         headers=headers[i] if headers else None)
               for i, v in enumerate(values)]
    prod.flush(60)
    ok = sum(1 for f in futures if f.succeeded())
    prod.close()
    check(ok == len(values), "kafka-python delivered every message", ok, len(values))
    return ok


def main():
    tmp = tempfile.mkdtemp(prefix="slda-0010-")
    persuasion = os.path.join(SRC, "examples", "janeausten", "persuasion.txt")
    northanger = os.path.join(SRC, "examples", "janeausten", "northangerabbey.txt")
    broker = Broker(tmp, "documents,streamlda.snapshots:2,streamlda.deadletter,mixtures")
    try:
        n1 = produce_kcat(broker.addr, "documents", persuasion)
        with open(northanger) as f:
            paras = [line.strip() for line in f if line.strip()]
        vals = [json.dumps({"id": "na-%d" % i, "text": p}).encode() for i, p in enumerate(paras)]
        n2 = produce_python(broker.addr, "documents", vals, keys=[b"na-%d" % i for i in range(len(vals))])
        total = n1 + n2
        print("produced %d documents (%d by kcat, %d by kafka-python)" % (total, n1, n2))

        svc = Service(tmp, broker.addr, ["topics=8", "http.port=0", "status.ms=1000",
                                         "heldout.modulo=10", "output.topic=mixtures",
                                         "output.top=3", "minibatch.docs=64",
                                         "snapshot.every.ms=3000", "snapshot.dir=snaps"])
        accounted = lambda: (svc.metric("streamlda_documents_total")
                             + svc.metric("streamlda_heldout_documents_total")
                             + sum(v for k, v in svc.metrics().items()
                                   if k.startswith("streamlda_deadletters_total")))
        wait_for(lambda: accounted() >= total, 100, "every document accounted for")
        m = svc.metrics()
        for name in ["streamlda_documents_total", "streamlda_tokens_total", "streamlda_updates_total",
                     "streamlda_rho", "streamlda_perplexity", "streamlda_vocabulary_words",
                     "streamlda_consumer_lag", "streamlda_snapshots_total",
                     "streamlda_snapshot_seconds", "streamlda_kafka_errors_total",
                     'streamlda_deadletters_total{reason="utf8"}']:
            check(name in m, "/metrics has " + name, m.get(name))
        status, body = svc.get("/healthz")
        check(status == 200 and body.strip() == "ok", "/healthz 200 ok", status, body.strip())
        status, _ = svc.get("/nothing")
        check(status == 404, "unknown path is 404", status)
        trained = m.get("streamlda_documents_total", -1)
        heldout = m.get("streamlda_heldout_documents_total", -1)
        dead = sum(v for k, v in m.items() if k.startswith("streamlda_deadletters_total"))
        print("trained %d, held out %d, dead letters %d of %d" % (trained, heldout, dead, total))
        check(trained + heldout + dead == total, "every document trained, held out or dead-lettered",
              trained, heldout, dead, total)
        check(heldout > 0 and trained > 0.8 * total, "held-out fraction is about 1/10", heldout, trained)
        rc = svc.stop()
        check(rc == 0, "SIGTERM -> exit 0", rc)
        log = svc.text()
        check("stopping: final minibatch and snapshot" in log, "service logged its shutdown")

        header, ids, words, rows = read_file(snapshots(os.path.join(tmp, "snaps"), "streamlda")[-1])
        check(header["docs"] == trained, "final snapshot document count", header["docs"], trained)
        offs = {(t, p): o for t, p, o in header["offsets"]}
        print("snapshot offsets:", sorted(offs.items()))
        check(sum(offs.values()) == total, "snapshot offsets cover every message", sum(offs.values()), total)

        res = subprocess.run([BIN, "topics", "-n", "8", snapshots(os.path.join(tmp, "snaps"), "streamlda")[-1]],
                             capture_output=True, text=True)
        print(res.stdout)
        check(res.returncode == 0 and len(res.stdout.strip().splitlines()) == 8,
              "streamlda topics prints 8 topics", res.returncode)

        outs = reader.fetch_records(broker.addr, "mixtures")
        keys = set()
        good = 0
        for key, value, hdrs in outs:
            rec = json.loads(value)
            h = dict((k, v.decode()) for k, v in hdrs)
            good += (key.decode() == rec["id"] and len(rec["topics"]) == 3 and rec["model"] == "streamlda"
                     and "source.offset" in h and h.get("source.topic") == "documents")
            keys.add((h.get("source.partition"), h.get("source.offset")))
        check(len(outs) == trained, "one output record per trained document", len(outs), trained)
        check(good == len(outs), "output records well formed (key = id, 3 topics, source headers)", good)
        check(len(keys) == len(outs), "output records have distinct source offsets", len(keys))
        print("first output record:", outs[0][1][:200] if outs else None)

        data, man = reader.reassemble(reader.fetch_records(broker.addr, "streamlda.snapshots"), "streamlda")
        check(data is not None, "snapshot topic holds a complete snapshot", man)
        if data is not None:
            h2 = reader.parse_snapshot(data)[0]
            check(h2["t"] == header["t"] and h2["docs"] == header["docs"],
                  "published snapshot = final file", h2["t"], header["t"], h2["docs"])
        res = subprocess.run([sys.executable, os.path.join(SRC, "examples", "read_snapshot.py"),
                              "--brokers", broker.addr, "-n", "5"], capture_output=True, text=True)
        print(res.stdout[:600])
        check(res.returncode == 0 and "topic 7:" in res.stdout, "examples/read_snapshot.py prints topics",
              res.returncode, res.stderr[-300:])
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return done("0010-kafka_e2e", tmp)


if __name__ == "__main__":
    sys.exit(main())
