"""scenario.py - what the Python scenario tests share (tests/00NN-*.py, and through
tests/realkafka.py the real-broker tier): a check counter and the closing lines, polling for a
condition or for progress, `streamlda broker` and `streamlda run` in their own processes (killed at exit if
still running), the snapshot readers of examples/read_snapshot.py, producers (kcat,
`streamlda produce`, kafka-python), and the dated three-theme stream of the tracking tests
(0060, 0061).

Import it as the tests do (Python puts the script's directory first on sys.path):
    sys.dont_write_bytecode = True  # no tests/__pycache__ left behind
    import scenario as sc  # noqa: E402
"""
import atexit
import datetime
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

BIN = os.environ.get("STREAMLDA", "streamlda")
SRC = os.environ.get("SLDA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
FAILURES = [0]
PASSES = [0]
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
    """Count a check; always print what was compared."""
    print("%s: %s %s" % ("ok" if cond else "FAILED", what, " ".join(repr(v) for v in values)))
    if cond:
        PASSES[0] += 1
    else:
        FAILURES[0] += 1
    return cond


def done(name, tmp=None):
    """Summary lines and exit code; the temporary directory is removed on success."""
    if tmp and not FAILURES[0]:
        shutil.rmtree(tmp, ignore_errors=True)
    elif tmp:
        print("kept %s for inspection" % tmp)
    print("%s: %d failed" % (name, FAILURES[0]))
    print("%d passed, %d failed" % (PASSES[0], FAILURES[0]))
    return 1 if FAILURES[0] else 0


def check_metric(svc, name, want, what):
    """check that svc's /metrics has name = want."""
    got = svc.metric(name)
    check(got == want, what, got)


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


def wait_progress(value, target, what, stall=120, step=0.5):
    """Poll value() until it reaches target; give up only when it has not grown for stall
    seconds (a machine that is slow, not stuck, still gets there). Returns its last value."""
    last, since = value(), time.time()
    while last < target:
        time.sleep(step)
        v = value()
        if v > last:
            last, since = v, time.time()
        elif time.time() - since > stall:
            print("no progress for %ds waiting for %s: %s of %s" % (stall, what, last, target))
            break
    return last


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
        """Send cmd and wait until the broker has answered it in its log: "control: cmd" once
        applied, "control \"cmd\": why" if refused (raised). It reads the FIFO every 200 ms,
        but a loaded machine can take longer: a fixed pause let the next step race the fault
        it needs."""
        def answers():
            with open(self.log.name) as f:
                return [l for l in f.read().splitlines()
                        if l.startswith("streamlda broker: control")]
        before = len(answers())
        with open(self.fifo, "w") as f:
            f.write(cmd + "\n")
        wait_for(lambda: len(answers()) > before or self.proc.poll() is not None, 120,
                 "the broker to apply \"%s\"" % cmd, step=0.05)
        got = answers()[before:]
        if got[:1] != ["streamlda broker: control: " + cmd]:
            raise RuntimeError("broker did not apply \"%s\": %s (exit %s)"
                               % (cmd, got[:1], self.proc.poll()))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=30)
        self.log.close()
        return rc


def broker_runs(name, topics, runs):
    """Each of runs(tmp, broker) in turn on one `streamlda broker --control` of topics, in a
    temporary directory; the broker stopped; the closing lines. Returns the exit code."""
    tmp = tempfile.mkdtemp(prefix="slda-%s-" % name[:4])
    broker = Broker(tmp, topics, control=True)
    try:
        for run in runs:
            run(tmp, broker)
    finally:
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return done(name, tmp)


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

    def api(self, what):
        """The JSON of /api/<what>, or None when it does not answer 200."""
        status, body = self.get("/api/" + what)
        if status != 200:
            return None
        return json.loads(body)

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


# ---- the dated stream of the tracking tests (0060, 0061) ----
# 100 documents per hour of event time from 2020-03-01 on ("date": epoch seconds or ISO 8601 on
# alternate documents), 25 words each from word themes: A and B before CHANGE, mostly C after.

T0 = 1583020800  # 2020-03-01T00:00:00Z
CHANGE = T0 + 10 * 3600 + 1800  # in window 10
THEMES = {
    "A": "football match goal striker league referee penalty stadium coach season keeper "
         "midfield tackle corner fans derby trophy cup winger defender".split(),
    "B": "recipe oven flour butter sugar dough bake bread cake pastry yeast whisk cream "
         "vanilla chocolate cookie crust icing batter cinnamon".split(),
    "C": "volcano eruption lava ash magma crater evacuation seismic tremor plume summit "
         "geologist caldera vent ashfall pyroclastic dome fissure quake island".split(),
}


def dated_docs(rng, first, n):
    """Documents first .. first + n - 1 of the stream, drawn with rng."""
    docs = []
    for i in range(first, first + n):
        t = T0 + i * 36
        mix = [("A", 0.6), ("B", 0.4)] if t < CHANGE else [("C", 0.7), ("A", 0.15), ("B", 0.15)]
        theme = rng.choices([m[0] for m in mix], [m[1] for m in mix])[0]
        words = [rng.choice(THEMES[theme]) for _ in range(25)]
        iso = "%sZ" % datetime.datetime.utcfromtimestamp(t).isoformat()
        docs.append({"id": "d%d" % i, "date": iso if i % 2 else t, "text": " ".join(words)})
    return docs


def write_jsonl(path, docs):
    with open(path, "w") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")


def produce_dated(broker, tmp, docs, tag):
    """docs into "documents" with `streamlda produce --time-field date`, in order (partition 0)."""
    path = os.path.join(tmp, "part-%s.jsonl" % tag)
    write_jsonl(path, docs)
    res = subprocess.run([BIN, "produce", "--brokers", broker.addr, "--topic", "documents",
                          "--time-field", "date", "--key-field", "id", "--partition", "0", path],
                         capture_output=True, text=True, timeout=120)
    check(res.returncode == 0, "produce %s --time-field date --partition 0" % tag,
          res.returncode, res.stderr.strip()[-300:])
    return res
