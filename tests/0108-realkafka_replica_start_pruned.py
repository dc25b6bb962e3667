#!/usr/bin/env python3
"""0108-realkafka_replica_start_pruned - a replica starts while the writer prunes the log.

Issue 10 item 3 (a killed instance "rejoins and catches up"): the snapshot
writer (a replica holding snapshot.dir's lock) writes a snapshot every 50 ms
and prunes the updates log below the newest one it keeps (snapshot.keep=1,
updates.prune=true) while 6,000 documents stream in over about 20 s. Three
more replicas are started on the same snapshot.dir one after the other, each
while the writer goes on pruning: between restoring the newest snapshot and
reading the log (its consumer and transactional producer start meanwhile) a
starting replica finds the log pruned past the snapshot it restored. It must
restore the newer snapshot and go on (the old code exited 1: "were pruned").
Then:
- every replica is running and says it reached the log's end;
- each holds exactly 6,000 documents, no dead letter;
- SIGTERM: all exit 0 with the same final update index and digest, docs=6,000;
- a replica in an empty snapshot.dir is still refused ("were pruned": no
  snapshot there can help it).
On the old code two or three of the three starts exited 1 (four runs); the
new code restored a newer snapshot 0-2 times a run (each start's log says
"restoring the newer").
"""

import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True
import realkafka as rk  # noqa: E402

check = rk.check
N = 6000


def main():
    rng = rk.replica_rng()
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0108-")
    p, topic, feeder = rk.themed_stream(addr, "s", N, 4, 20, rng)
    model, updates = p + "-m", p + ".updates"

    def props(snapdir):
        return rk.replica_props(p, topic, model, snapdir, "snapshot.every.ms=50",
                                "snapshot.keep=1", "snapshot.history=0",
                                "updates.topic=" + updates,
                                "updates.prune=true")

    snap = os.path.join(tmp, "snap")
    svcs = [rk.service(tmp, addr, props(snap), "w")]
    extra = []
    try:
        if not rk.assigned(svcs[0], timeout=90):
            return rk.done("0108-realkafka_replica_start_pruned", tmp)
        check("replica: snapshot writer (" in svcs[0].text(), "the first replica is the writer")
        feeder.start()
        for k in range(3):
            time.sleep(2 + rng.random() * 2)
            name = "r%d" % k
            svc = rk.service(tmp, addr, props(snap), name)
            svcs.append(svc)
            up = rk.wait_for(lambda: not rk.alive(svc) or "at the end of updates.topic" in svc.text(),
                             90, "replica %s to reach the log's end" % name)
            text = svc.text()
            check(rk.alive(svc) and up, "replica %s started while the log was pruned" % name,
                  None if rk.alive(svc) else svc.proc.returncode, text[-800:])
            print("replica %s: restored %s, reloaded %d time(s), %d documents produced"
                  % (name, "restored " in text, text.count("restoring the newer"),
                     feeder.delivered))
        reloads = sum(s.text().count("restoring the newer") for s in svcs[1:])
        print("reloads in all:", reloads)
        if not all(rk.alive(s) for s in svcs):
            return rk.done("0108-realkafka_replica_start_pruned", tmp)
        rk.replicas_hold_all(svcs, feeder, N, 180)
        lw = rk.low_watermarks(addr, updates)
        check(lw.get(0, 0) > 0, "the writer pruned the updates log", lw)
        rk.replicas_stop_identical(svcs, N)

        rk.fresh_replica_refused(tmp, addr, props, extra)
    finally:
        rk.kill_all(svcs + extra)
    return rk.done("0108-realkafka_replica_start_pruned", tmp)


if __name__ == "__main__":
    sys.exit(main())
