#!/usr/bin/env python3
"""0106-realkafka_three_replicas - three replicas, the snapshot writer killed, a pruned log.

Issue 10 items 2 and 3 with three instances and pruning on: three `streamlda
run` with the same model.name and updates.topic share a 6-partition input
topic and one snapshot.dir (snapshot.keep=2, updates.prune=true). 9,000 short
documents stream in over about 25 s; the snapshot writer (the replica whose log
says "replica: snapshot writer") is killed -9 first, then the two others in a
random order, at random moments, each restarted after a random pause. At every kill at most one live
replica is the writer. Once all three report every document:
- each holds exactly 9,000 documents, no dead letter;
- the group's committed input offsets equal the input topic's high
  watermarks (every document's offset committed with its update, none left);
- the writer pruned the updates log (its start offset moved past 0);
- a non-replica instance of the same model (no updates.topic) is refused
  with a message naming the running members, and the replicas go on;
- SIGTERM: all exit 0 with the same final update index and digest and
  docs=9,000;
- a new replica in an empty snapshot.dir is refused: the records it would
  need "were pruned" (exit 1, not a model missing documents);
- a replica whose group holds a non-replica member (another model) is refused
  with "without updates.topic".
On the old code updates.topic is an unknown property and the services exit 2.
SLDA_REPLICA_SEED replays a run's choices.
"""

import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True
import realkafka as rk  # noqa: E402

check = rk.check
N = 9000
PARTS = 6


def is_writer(svc):
    return rk.alive(svc) and "replica: snapshot writer (" in svc.text()


def main():
    rng = rk.replica_rng()
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0106-")
    p, topic, feeder = rk.themed_stream(addr, "t", N, PARTS, 25, rng)
    model, updates = p + "-m", p + ".updates"

    def props(snapdir, mdl=model, replica=True):
        more = ["updates.topic=" + updates, "updates.prune=true"] if replica else []
        return rk.replica_props(p, topic, mdl, snapdir, "snapshot.every.ms=1000",
                                "snapshot.keep=2", "snapshot.history=0", *more)

    snap = os.path.join(tmp, "snap")
    names = "abc"
    svcs = [rk.service(tmp, addr, props(snap), n + "0") for n in names]
    extra = []
    try:
        if not all(rk.assigned(s, timeout=120) for s in svcs):
            return rk.done("0106-realkafka_three_replicas", tmp)
        writers = [i for i, s in enumerate(svcs) if is_writer(s)]
        check(len(writers) == 1, "one replica is the snapshot writer at the start", writers)
        feeder.start()
        order = []
        for k in range(3):
            time.sleep(2 + rng.random() * 4)
            writers = [i for i, s in enumerate(svcs) if is_writer(s)]
            check(len(writers) <= 1, "at most one live snapshot writer before kill %d" % (k + 1), writers)
            # the writer first (another replica must take its lock over), then the two
            # others in a random order: each replica is killed once
            if not order:
                first = writers[0] if writers else rng.randrange(3)
                rest = [i for i in range(3) if i != first]
                rng.shuffle(rest)
                order = [first] + rest
            v = order[k]
            name = "%s%d" % (names[v], k + 1)
            rk.kill_restart(svcs, v, names[v], k + 1, feeder, rng,
                            lambda: rk.service(tmp, addr, props(snap), name),
                            " (the writer)" if v in writers else "")
        rk.replicas_hold_all(svcs, feeder, N, 240)
        writers = [i for i, s in enumerate(svcs) if is_writer(s)]
        check(len(writers) == 1, "one snapshot writer at the end", writers)
        hw = rk.high_watermarks(addr, topic)
        got = rk.committed(addr, "streamlda-" + model, topic)
        check(got == hw, "the committed input offsets are the high watermarks", got, hw)
        lw = rk.low_watermarks(addr, updates)
        print("updates log start:", lw, "end:", rk.high_watermarks(addr, updates))
        check(lw.get(0, 0) > 0, "the snapshot writer pruned the updates log", lw)

        # a non-replica instance of the same model: refused, the replicas unaffected
        lone = rk.service(tmp, addr, props(os.path.join(tmp, "lone"), replica=False), "lone")
        extra.append(lone)
        rc, text = rk.refused(lone, "the non-replica instance")
        check(rc not in (None, 0) and "already has" in text and "streamlda-replica/" in text,
              "a non-replica joining replicas is refused", rc, text[-600:])
        check(all(rk.alive(s) for s in svcs), "the replicas go on")

        rk.replicas_stop_identical(svcs, N)
        restored = rk.restored_any(tmp, [a + str(k) for a in names for k in (1, 2, 3)])
        check(restored >= 1, "restarted replicas restored a snapshot", restored)

        # a new replica with no snapshot cannot replay a pruned log: refused, says why
        rk.fresh_replica_refused(tmp, addr, props, extra)

        # a replica whose group holds a non-replica member (of another model): refused
        other = model + "-x"
        solo = rk.service(tmp, addr, props(os.path.join(tmp, "solo"), other, replica=False), "solo")
        extra.append(solo)
        if rk.assigned(solo, timeout=60):
            rep = rk.service(tmp, addr, props(os.path.join(tmp, "rep"), other), "rep")
            extra.append(rep)
            rc, text = rk.refused(rep, "the replica")
            check(rc not in (None, 0) and "without updates.topic" in text,
                  "a replica joining a non-replica instance is refused", rc, text[-600:])
            check(solo.stop() == 0, "the non-replica instance goes on and stops cleanly")
    finally:
        rk.kill_all(svcs + extra)
    return rk.done("0106-realkafka_three_replicas", tmp)


if __name__ == "__main__":
    sys.exit(main())
