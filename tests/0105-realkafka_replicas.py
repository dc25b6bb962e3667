#!/usr/bin/env python3
"""0105-realkafka_replicas - two replicas of one model, kill -9 at random: one model, each document once.

Issue 10: two `streamlda run` with the same model.name and updates.topic share
a 4-partition input topic and one snapshot.dir (the lock holder writes
snapshots). 8,000 short documents stream in over about 25 s while the
replicas are killed with SIGKILL three times (each at least once, so the
snapshot writer too; the other takes its lock over) (at random moments, restarted
after a random pause: it restores the newest snapshot and replays the update
log from its position). Once both replicas report every document
(streamlda_model_documents), SIGTERM stops them: both exit 0 and their final
lines ("replica: final update=N docs=D tokens=T digest=H") agree on N and H,
with D = 8,000 exactly (no document lost or counted twice) and no dead
letter. Then item 4: a third replica in an empty snapshot.dir (the log is not
pruned here: updates.prune=false) replays the whole log and, stopped, logs the
same update index and digest. On the old code updates.topic is an unknown
property and the services exit 2. SLDA_REPLICA_SEED replays a run's choices.
"""

import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True
import realkafka as rk  # noqa: E402

check = rk.check
N = 8000


def main():
    rng = rk.replica_rng()
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0105-")
    p, topic, feeder = rk.themed_stream(addr, "r", N, 4, 25, rng)
    model = p + "-m"

    def props(snapdir):
        return rk.replica_props(p, topic, model, snapdir, "snapshot.every.ms=1000",
                                "updates.topic=" + p + ".updates", "updates.prune=false")

    snap = os.path.join(tmp, "snap")
    svcs = [rk.service(tmp, addr, props(snap), "a0"), rk.service(tmp, addr, props(snap), "b0")]
    try:
        if not all(rk.assigned(s, timeout=90) for s in svcs):
            return rk.done("0105-realkafka_replicas", tmp)
        feeder.start()
        victims = rng.sample([0, 1], 2) + [rng.randrange(2)]  # the snapshot writer too
        for k, v in enumerate(victims):
            time.sleep(2 + rng.random() * 4)
            name = "%s%d" % ("ab"[v], k + 1)
            rk.kill_restart(svcs, v, "ab"[v], k + 1, feeder, rng,
                            lambda: rk.service(tmp, addr, props(snap), name))
        rk.replicas_hold_all(svcs, feeder, N, 180)
        finals = rk.replicas_stop_identical(svcs, N)
        restored = rk.restored_any(tmp, [a + str(k) for a in "ab" for k in (1, 2, 3)])
        check(restored >= 1, "restarted replicas restored a snapshot", restored)
        # item 4: one replica that only applies the log builds the same model
        c = rk.service(tmp, addr, props(os.path.join(tmp, "empty")), "c")
        svcs.append(c)
        want = int(finals[0][0]) if finals[0] else -1
        rk.wait_for(lambda: rk.metrics(c).get("streamlda_model_updates", -1) >= want or not rk.alive(c),
                    120, "the log-only replica to apply the whole log", step=0.5)
        check(c.stop() == 0, "log-only replica: exit 0")
        fc = rk.replica_final(c.text())
        print("log-only replica:", fc)
        check(fc is not None and finals[0] is not None and fc[0] == finals[0][0] and fc[3] == finals[0][3],
              "the log-only replica equals the replicas bit for bit (digest)", fc, finals[0])
    finally:
        rk.kill_all(svcs)
    return rk.done("0105-realkafka_replicas", tmp)


if __name__ == "__main__":
    sys.exit(main())
