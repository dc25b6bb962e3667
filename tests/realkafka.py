"""realkafka.py - helpers of the real-broker tests (tests/01NN-realkafka_*.py).

Those tests run against one Apache Kafka broker for the whole ctest run (the
fixture tests realkafka_start/realkafka_stop call scripts/kafka.sh; its
address is in the file $REALKAFKA_ADDRESS_FILE, or given directly as
$REALKAFKA_BOOTSTRAP when a test is run by hand). They use confluent-kafka
(from the venv scripts/kafka.sh fetch creates under build-cache/) as the
independent client: the Admin API to create each test's own uniquely named
topics (the service never creates topics; the broker has auto-creation off),
a producer that waits for every delivery report, and consumers that read a
topic to its end (read_committed by default). The service itself is driven
with the helpers of tests/scenario.py (Service, check, wait_for, snapshot
readers), as the mock-cluster tests do; `rk.sc` is that module.
"""
import collections
import os
import random
import re
import threading
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import scenario as sc

check, wait_for, done = sc.check, sc.wait_for, sc.done
BIN, SRC = sc.BIN, sc.SRC

Msg = collections.namedtuple("Msg", "partition offset key value headers")


def bootstrap():
    """The broker's address: $REALKAFKA_BOOTSTRAP, else the fixture's address file."""
    addr = os.environ.get("REALKAFKA_BOOTSTRAP")
    if addr:
        return addr
    path = os.environ.get("REALKAFKA_ADDRESS_FILE")
    if not path:
        raise SystemExit("neither REALKAFKA_BOOTSTRAP nor REALKAFKA_ADDRESS_FILE is set "
                         "(run with `ctest -L realkafka`, or start a broker with scripts/kafka.sh)")
    with open(path) as f:
        return f.read().strip()


def unique(test):
    """A prefix no earlier run on this broker has used (the broker may outlive a run)."""
    return "rk%s-%d-%d-%04x" % (test, os.getpid(), int(time.time()), random.getrandbits(16))


def create_topics(addr, spec, config=None):
    """Create topics {name: partitions} (replication factor 1, optional topic config) and
    wait until every partition has a leader."""
    admin = AdminClient({"bootstrap.servers": addr})
    futures = admin.create_topics([NewTopic(t, num_partitions=p, replication_factor=1,
                                            config=dict((config or {}).get(t, {})))
                                   for t, p in spec.items()], operation_timeout=30)
    for topic, fut in futures.items():
        fut.result(timeout=60)  # raises on failure: the test cannot go on without its topics

    def ready():
        md = admin.list_topics(timeout=10)
        return all(t in md.topics and len(md.topics[t].partitions) == p
                   and all(pm.leader >= 0 for pm in md.topics[t].partitions.values())
                   for t, p in spec.items())
    if not wait_for(ready, 60, "leaders for %s" % sorted(spec)):
        raise RuntimeError("topics %s have no leaders" % sorted(spec))
    print("created topics %s" % ", ".join("%s:%d" % tp for tp in sorted(spec.items())))


def produce(addr, topic, records, conf=None):
    """records: (key, value, headers, partition or None). Waits for every delivery report;
    returns [(partition, offset)] in the order of records (None for a failed one)."""
    settings = {"bootstrap.servers": addr, "acks": "all", "linger.ms": 5,
                "enable.idempotence": True}
    settings.update(conf or {})
    prod = Producer(settings)
    result = [None] * len(records)
    errors = []

    def report(i):
        def cb(err, msg):
            if err is None:
                result[i] = (msg.partition(), msg.offset())
            else:
                errors.append(str(err))
        return cb
    for i, (key, value, headers, part) in enumerate(records):
        kw = {"key": key, "value": value, "headers": headers, "on_delivery": report(i)}
        if part is not None:
            kw["partition"] = part
        while True:
            try:
                prod.produce(topic, **kw)
                break
            except BufferError:  # local queue full: let deliveries drain
                prod.poll(0.1)
        prod.poll(0)
    left = prod.flush(120)
    ok = sum(1 for r in result if r is not None)
    check(ok == len(records) and left == 0, "confluent-kafka delivered every message to " + topic,
          ok, len(records), errors[:3])
    return result


def consume_all(addr, topic, isolation="read_committed", idle_s=5.0, timeout_s=120, conf=None):
    """Every record of topic a consumer with `isolation` sees, from the beginning of each
    partition until its position reaches the high watermark as of the call (control records
    and aborted records take offsets too) or nothing arrives for idle_s seconds."""
    settings = {"bootstrap.servers": addr, "group.id": unique("-reader"),
                "enable.auto.commit": False, "isolation.level": isolation,
                "enable.partition.eof": False}
    settings.update(conf or {})
    cons = Consumer(settings)
    md = cons.list_topics(topic, timeout=10)
    parts = sorted(md.topics[topic].partitions)
    end = {p: cons.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    cons.assign([TopicPartition(topic, p, 0) for p in parts])
    out = []
    last = time.time()
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        msgs = cons.consume(500, timeout=0.5)
        for m in msgs:
            if m.error():
                if m.error().code() != KafkaError._PARTITION_EOF:
                    print("consumer error on %s: %s" % (topic, m.error()))
                continue
            out.append(Msg(m.partition(), m.offset(), m.key(), m.value(), m.headers() or []))
        if msgs:
            last = time.time()
        pos = {tp.partition: tp.offset for tp in cons.position([TopicPartition(topic, p) for p in parts])}
        if all(end[p] == 0 or pos.get(p, -1) >= end[p] for p in parts):
            break
        if time.time() - last > idle_s:
            print("consume_all %s: idle for %.0fs at positions %s, end %s" % (topic, idle_s, pos, end))
            break
    cons.close()
    return out


def _watermarks(addr, topic, which):
    """{partition: low (which=0) or high (1) watermark} of topic."""
    cons = Consumer({"bootstrap.servers": addr, "group.id": unique("-wm"), "enable.auto.commit": False})
    parts = sorted(cons.list_topics(topic, timeout=10).topics[topic].partitions)
    wm = {p: cons.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[which] for p in parts}
    cons.close()
    return wm


def high_watermarks(addr, topic):
    """{partition: high watermark} of topic."""
    return _watermarks(addr, topic, 1)


def low_watermarks(addr, topic):
    """{partition: log start offset} of topic (moved by retention or DeleteRecords)."""
    return _watermarks(addr, topic, 0)


def committed(addr, group, topic):
    """{partition: offset} consumer group `group` has committed on topic (-1001: none)."""
    cons = Consumer({"bootstrap.servers": addr, "group.id": group, "enable.auto.commit": False})
    parts = sorted(cons.list_topics(topic, timeout=10).topics[topic].partitions)
    got = cons.committed([TopicPartition(topic, p) for p in parts], timeout=10)
    cons.close()
    return {tp.partition: tp.offset for tp in got}


def group_of(svc):
    """The consumer group a service joins: kafka.group.id, else streamlda-<model.name>."""
    props = dict(a.split("=", 1) for a in svc.cmd if "=" in a and not a.startswith("-"))
    return props.get("kafka.group.id") or "streamlda-" + props.get("model.name", "streamlda")


def all_committed(addr, svc, topic):
    """True once svc's consumer group has committed every record of topic (its offsets at the
    high watermarks: the feeders are not transactional, so the watermark is the last record's
    offset + 1). Nothing of the topic is left to read or to train again: counts read after
    this are final, and a record counted twice shows in them."""
    hw = high_watermarks(addr, topic)
    got = committed(addr, group_of(svc), topic)
    return all(got.get(p, -1) >= h for p, h in hw.items())


def replica_final(text):
    """(update, docs, tokens, digest) of a replica's last "replica: final" line, or None."""
    m = re.findall(r"replica: final update=(\d+) docs=(\d+) tokens=(\d+) digest=([0-9a-f]{16})", text)
    return m[-1] if m else None


def kill_restart(svcs, v, name, k, feeder, rng, restart, note=""):
    """Kill -9 replica svcs[v] (kill number k), wait a random pause of up to 3 s, put
    restart() in its place."""
    check(alive(svcs[v]), "replica %s alive before kill %d" % (name, k))
    svcs[v].kill9()
    print("kill %d: replica %s%s, %d documents produced" % (k, name, note, feeder.delivered))
    time.sleep(rng.random() * 3)
    svcs[v] = restart()


def replicas_hold_all(svcs, feeder, n, timeout):
    """The feeder delivered its n documents; every replica comes to hold exactly n
    (streamlda_model_documents) within timeout s and no dead letter was written."""
    feeder.join(200)
    check(feeder.delivered == n and not feeder.errors, "the feeder delivered every document",
          feeder.delivered)
    wait_for(lambda: all(metrics(s).get("streamlda_model_documents", -1) >= n for s in svcs),
             timeout, "every replica to hold every document", step=0.5)
    # every document's minibatch committed (its update record in the log) and every replica
    # at the same update: nothing is left to apply, so a record counted twice shows now
    wait_for(lambda: all_committed(feeder.addr, svcs[0], feeder.topic) and
             len(set(metrics(s).get("streamlda_model_updates", -1) for s in svcs)) == 1,
             timeout, "every document committed and every replica at the same update", step=0.5)
    counts = [metrics(s).get("streamlda_model_documents", -1) for s in svcs]
    dead = sum(metrics(s).get("streamlda_deadletters_total", 0) for s in svcs)
    check(counts == [n] * len(svcs), "each replica holds exactly every document", counts)
    check(dead == 0, "no dead letter", dead)


def replicas_stop_identical(svcs, n):
    """SIGTERM every replica: each exits 0 and logs the same final line (update index,
    digest) with docs = n. Returns the final lines."""
    rcs = [s.stop() for s in svcs]
    check(rcs == [0] * len(svcs), "SIGTERM: every replica exits 0", rcs)
    finals = [replica_final(s.text()) for s in svcs]
    print("final lines:", finals)
    check(all(finals) and len(set(finals)) == 1, "the replicas end identical (update, digest)",
          finals)
    check(finals[0] and int(finals[0][1]) == n, "the final model counts each document once",
          finals[0])
    return finals


def restored_any(tmp, names):
    """Whether any of the services' logs tmp/NAME.log says it restored a snapshot."""
    return sum("restored " in open(os.path.join(tmp, n + ".log"), errors="replace").read()
               for n in names if os.path.exists(os.path.join(tmp, n + ".log")))


def refused(svc, what, timeout=60):
    """Wait for a service that must refuse to start; (exit code or None, its log)."""
    wait_for(lambda: not alive(svc), timeout, what + " to be refused")
    return (None if alive(svc) else svc.proc.returncode), svc.text()


def headers_dict(headers):
    return {k: (v.decode("utf-8", "replace") if v is not None else None) for k, v in headers}


def fetch_at(addr, topic, partition, offset):
    """The record at (topic, partition, offset), or None."""
    cons = Consumer({"bootstrap.servers": addr, "group.id": unique("-fetch"),
                     "enable.auto.commit": False})
    cons.assign([TopicPartition(topic, partition, offset)])
    found = None
    end = time.time() + 20
    while found is None and time.time() < end:
        m = cons.poll(0.5)
        if m is not None and not m.error():
            found = Msg(m.partition(), m.offset(), m.key(), m.value(), m.headers() or [])
    cons.close()
    return found


def service(tmp, addr, props, name):
    """`streamlda run` against the real broker (tests/0010's Service: own process, log file)."""
    return sc.Service(tmp, addr, props, name=name)


def alive(svc):
    return svc.proc.poll() is None


def metrics(svc):
    """/metrics of a running service; {} at once if it has exited (tests/0010's Service would
    wait 30 s for an http line that never comes)."""
    return svc.metrics() if alive(svc) else {}


def assigned(svc, timeout=60):
    """Wait until the service has its partitions (signal handlers installed, group joined);
    False at once if it exits first (its log is printed)."""
    ok = wait_for(lambda: "kafka: assigned" in svc.text() or not alive(svc), timeout, "partition assignment")
    if not alive(svc):
        check(False, "service running after start", svc.proc.returncode)
        print(svc.text()[-3000:])
        return False
    return ok


def newest_docs(snapdir, model):
    return (sc.newest_header(snapdir, model) or {}).get("docs", 0)


class Feeder(threading.Thread):
    """Produces records (key, value, headers, partition) at a steady pace over `seconds` in
    its own thread, so a test can kill the service at random moments *during* the stream
    (the service trains faster than Kafka delivers a pre-filled topic). Waits for every
    delivery report; `delivered` counts them, `errors` keeps the failures."""

    def __init__(self, addr, topic, records, seconds, conf=None):
        super().__init__(daemon=True)
        self.addr, self.topic, self.records, self.seconds = addr, topic, records, seconds
        self.conf = conf or {}
        self.delivered, self.errors = 0, []

    def _report(self, err, msg):
        if err is None:
            self.delivered += 1
        else:
            self.errors.append(str(err))

    def run(self):
        settings = {"bootstrap.servers": self.addr, "acks": "all", "linger.ms": 5,
                    "enable.idempotence": True}
        settings.update(self.conf)
        prod = Producer(settings)
        t0, n = time.time(), len(self.records)
        for i, (key, value, headers, part) in enumerate(self.records):
            lag = t0 + self.seconds * i / n - time.time()
            if lag > 0:
                prod.poll(lag)
            kw = {"key": key, "value": value, "headers": headers, "on_delivery": self._report}
            if part is not None:
                kw["partition"] = part
            while True:
                try:
                    prod.produce(self.topic, **kw)
                    break
                except BufferError:
                    prod.poll(0.05)
        prod.flush(120)


def crash_runs(tmp, addr, props, snapdir, model, total, feeder, rng, min_step, max_delay):
    """Kill the service with SIGKILL three times while `feeder` (started here) streams the
    documents in, restarting it each time; each run has its own log (run1.log, ...). A run is
    killed once it has trained min_step documents and written a snapshot of its own, after a
    further random delay of up to max_delay seconds, right after it next trains a minibatch
    (so the kill falls into the outputs / commit / snapshot sequence that follows one). Then a
    last run (final.log) until the newest snapshot holds `total` documents, stopped with
    SIGTERM. Checks that every kill
    landed while the stream was still flowing, that every restart restored a snapshot, that
    the feeder delivered everything, and the last run's exit 0. Returns the last Service, with
    its final /metrics in .last_metrics."""
    feeder.start()
    kills = 3
    for i in range(kills):
        before = newest_docs(snapdir, model)
        svc = service(tmp, addr, props, "run%d" % (i + 1))
        assigned(svc)
        trained = lambda: metrics(svc).get("streamlda_documents_total", 0)
        wait_for(lambda: (trained() >= min_step and newest_docs(snapdir, model) > before) or not alive(svc),
                 120, "run %d: %d documents and a snapshot" % (i + 1, min_step), step=0.05)
        time.sleep(rng.random() * max_delay)
        # ... and at the moment a minibatch has just been trained, so that the kill falls
        # into the work that follows it (outputs, transaction commit, snapshot write).
        last, busy_end = trained(), time.time() + 5
        while time.time() < busy_end and alive(svc):
            time.sleep(0.005)
            cur = trained()
            if cur > last:
                break
            last = cur
        now = before + trained()
        check(alive(svc) and feeder.is_alive() and now < total,
              "kill %d lands mid-stream (documents: restored, trained at the kill, produced, total)" % (i + 1),
              before, now, feeder.delivered, total)
        svc.kill9()
        print("kill %d: SIGKILL at %d documents trained, %d in the newest snapshot, %d produced"
              % (i + 1, now, newest_docs(snapdir, model), feeder.delivered))
    svc = service(tmp, addr, props, "final")
    assigned(svc, timeout=90)
    feeder.join(150)
    check(feeder.delivered == total and not feeder.errors, "the feeder delivered every document",
          feeder.delivered, total, feeder.errors[:3])
    wait_for(lambda: newest_docs(snapdir, model) >= total or not alive(svc), 150,
             "a snapshot with all %d documents" % total, step=0.3)
    # every document committed: nothing is left to train, so one counted twice shows now
    wait_for(lambda: all_committed(addr, svc, feeder.topic) or not alive(svc), 60,
             "every document committed", step=0.3)
    svc.last_metrics = metrics(svc)
    rc = svc.stop()
    check(rc == 0, "last run: SIGTERM -> exit 0", rc)
    if rc != 0:
        print("\n".join(line for line in svc.text().splitlines() if "status:" not in line)[-3000:])
    restored = sum(1 for n in ["run%d" % (i + 1) for i in range(1, kills)] + ["final"]
                   if "restored " in open(os.path.join(tmp, n + ".log"), errors="replace").read())
    check(restored == kills, "a snapshot was restored at each of the %d restarts" % kills, restored)
    return svc


THEME_WORDS = ["river", "mountain", "valley", "forest", "meadow", "harbor", "island", "desert",
               "market", "banker", "credit", "shares", "profit", "trader", "export", "tariff"]


def themed_stream(addr, test, n, parts, seconds, rng):
    """The replica tests' input: a fresh prefix p, the topic p.docs of `parts` partitions and
    p.dead, and a Feeder of n documents of 30 words, alternately of two themes with disjoint
    8-word vocabularies (a themed model predicts a word among 8, not 16), drawn with rng, spread
    round-robin over the partitions over `seconds`. Returns (p, topic, feeder)."""
    p = unique(test)
    topic = p + ".docs"
    create_topics(addr, {topic: parts, p + ".dead": 1})
    docs = [" ".join(THEME_WORDS[(i % 2) * 8 + rng.randrange(8)] for _ in range(30)).encode()
            for i in range(n)]
    return p, topic, Feeder(addr, topic, [(None, v, None, i % parts) for i, v in enumerate(docs)],
                            seconds)


def replica_rng():
    """The replica tests' random choices: seeded by SLDA_REPLICA_SEED (replays a run), else by
    the clock; the seed is printed."""
    seed = int(os.environ.get("SLDA_REPLICA_SEED", str(int(time.time()) % 100000)))
    print("SLDA_REPLICA_SEED=%d" % seed)
    return random.Random(seed)


def fresh_replica_refused(tmp, addr, props, extra):
    """A new replica in an empty snapshot.dir (tmp/empty) over a pruned log: refused, exit 1,
    "were pruned" (no model missing documents). props(snapdir) gives its properties; the
    service is appended to extra (killed by the caller's cleanup)."""
    fresh = service(tmp, addr, props(os.path.join(tmp, "empty")), "fresh")
    extra.append(fresh)
    rc, text = refused(fresh, "the fresh replica")
    check(rc == 1 and "were pruned" in text,
          "a replica without a snapshot over a pruned log is refused", rc, text[-600:])


def kill_all(svcs):
    """kill -9 every service still running (a test's cleanup)."""
    for s in svcs:
        if alive(s):
            s.kill9()


def replica_props(p, topic, model, snapdir, *more):
    """Properties of `streamlda run` in the replica tests: input topic, dead letters in p.dead,
    K=4, 20-document minibatches, no snapshot topic, a 6 s session (joins are quick) and a 5 s
    transaction timeout (a killed instance's transaction is aborted soon); `more` are added."""
    return ["input.topics=" + topic, "deadletter.topic=" + p + ".dead", "topics=4",
            "model.name=" + model, "http.port=0", "snapshot.topic=", "minibatch.docs=20",
            "snapshot.dir=" + snapdir, "kafka.session.timeout.ms=6000",
            "kafka.heartbeat.interval.ms=500", "kafka.transaction.timeout.ms=5000"] + list(more)
