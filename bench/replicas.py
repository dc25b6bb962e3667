#!/usr/bin/env python3
"""replicas.py - documents/s of `streamlda run`: one instance, one replica, two replicas (issue 10).

    REALKAFKA_BOOTSTRAP=HOST:PORT STREAMLDA=build/streamlda CORPUS=FILE (one document per line) \
        N=21577 EXTRA="minibatch.docs=256 updates.values=float32" RUNS="single:1:0 rep1:1:1 rep2:2:1" \
        build-cache/venv/bin/python bench/replicas.py

Start a broker with `bash scripts/kafka.sh start DIR` (address in DIR/address). Produces the
first N lines of CORPUS into a 4-partition topic, then for each run NAME:INSTANCES:REPLICA
starts the instances (K=100, track=false) and times from the first document in any model to
every model holding all N documents (/metrics: streamlda_model_documents for replicas,
streamlda_documents_total otherwise). REPEAT (default 3) rounds run the configurations
interleaved (so a noisy moment of the shared machine hits all of them); the closing lines give
each configuration's median docs/s and its ratio to the first one. Prints figures only; run on a
quiet machine. Each run's scratch directory (snapshots, logs) is removed after it (KEEP=1 keeps
them).
"""
import os, shutil, statistics, sys, time, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
sys.dont_write_bytecode = True
import realkafka as rk
addr = rk.bootstrap()
lines = [l.rstrip(b"\n") for l in open(os.environ.get("CORPUS", "reuters.txt"), "rb") if l.strip()]
N = int(os.environ.get("N", "10000"))
lines = lines[:N]; N = len(lines)
p = rk.unique("tp")
topic = p + ".docs"
rk.create_topics(addr, {topic: 4, p + ".dead": 1})
rk.produce(addr, topic, [(None, v, None, i % 4) for i, v in enumerate(lines)])
extra = os.environ.get("EXTRA", "").split()
def run(name, inst, replica, rnd):
    tmp = tempfile.mkdtemp(prefix="slda-replicas-")
    name = "%s-%d" % (name, rnd)
    model = p + "-" + name
    props = ["input.topics=" + topic, "deadletter.topic=" + p + ".dead", "topics=100", "model.name=" + model,
             "http.port=0", "snapshot.topic=", "snapshot.every.ms=60000", "snapshot.dir=" + os.path.join(tmp, "snap"),
             "kafka.session.timeout.ms=6000", "kafka.heartbeat.interval.ms=500", "status.ms=0", "track=false"] + extra
    if replica:
        props += ["updates.topic=" + p + "." + name + ".updates", "kafka.transaction.timeout.ms=10000"]
    svcs = [rk.service(tmp, addr, props, "i%d" % i) for i in range(inst)]
    key = "streamlda_model_documents" if replica else "streamlda_documents_total"
    t0 = time.time(); tstart = None
    while time.time() - t0 < 600:
        ds = [rk.metrics(s).get(key, -1) for s in svcs]
        if tstart is None and max(ds) > 0:
            tstart = time.time()
        if min(ds) >= N and len(set(ds)) == 1:  # (documents that are dead letters: none in Reuters)
            break
        time.sleep(0.2)
    t1 = time.time()
    for s in svcs: s.stop()
    if os.environ.get("KEEP") != "1":
        shutil.rmtree(tmp, ignore_errors=True)  # its snapshots and logs (KEEP=1 keeps them)
    rate = ds[0] / (t1 - tstart)
    print(name, "inst", inst, "replica", replica, "docs", ds, "seconds from first doc", round(t1 - tstart, 2), "docs/s", round(rate), flush=True)
    return rate
specs = [spec.split(":") for spec in os.environ.get("RUNS", "single:1:0 rep1:1:1 rep2:2:1").split()]
rates = {name: [] for name, _, _ in specs}
for rnd in range(int(os.environ.get("REPEAT", "3"))):
    for name, inst, rep in specs:
        rates[name].append(run(name, int(inst), int(rep), rnd))
base = statistics.median(rates[specs[0][0]])
for name, _, _ in specs:
    med = statistics.median(rates[name])
    print("median %-8s %7.0f docs/s  (%s)  %.2fx %s" % (name, med, " ".join("%.0f" % r for r in rates[name]),
                                                    med / base, specs[0][0]), flush=True)
