#!/usr/bin/env python3
"""0110-realkafka_replica_labels - a label posted to one replica is every replica's, through the update log.

Issue 25 (topics you can explore): user labels stored with the model must survive replicas.
A label posted to one replica (POST /api/labels) was set on that replica's model only: the
other replica never showed it, and the snapshot writer's snapshots lost it when the label
went to the other one. Now the label travels in the update log as a record of labels only
(engine/update_labels.c), which every replica applies in log order without moving the model.

Two replicas of one model train 400 documents; then, on the quiet stream, topic 1 is labelled
on replica a and topic 2 on replica b: both replicas show both labels in /api/topics (the
record of labels only is committed within minibatch.ms though no document comes), at the same
update count as before (a label is no update), and end identical (update, digest). The
snapshot writer's final snapshot holds both labels (`streamlda label SNAPSHOT`), and a third
replica that applies the whole log from an empty snapshot.dir shows them too. Waits are on
conditions.
"""

import json
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.dont_write_bytecode = True
import realkafka as rk  # noqa: E402

check = rk.check
N = 400


def post_label(svc, topic, text):
    req = urllib.request.Request("http://127.0.0.1:%d/api/labels" % svc.http_port(),
                                 data=json.dumps({"topic": topic, "label": text}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status


def labels(svc):
    """{topic id: label} of /api/topics (a service that has exited: {})."""
    if not rk.alive(svc):
        return {}
    t = svc.api("topics")
    return {x["id"]: x["label"] for x in (t or {}).get("topics", []) if x.get("label")}


def main():
    rng = rk.replica_rng()
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0110-")
    p, topic, feeder = rk.themed_stream(addr, "l", N, 4, 5, rng)
    model = p + "-m"

    def props(snapdir):
        return rk.replica_props(p, topic, model, snapdir, "updates.topic=" + p + ".updates",
                                "updates.prune=false")

    snap = os.path.join(tmp, "snap")
    svcs = [rk.service(tmp, addr, props(snap), "a"), rk.service(tmp, addr, props(snap), "b")]
    try:
        if not all(rk.assigned(s, timeout=90) for s in svcs):
            return rk.done("0110-realkafka_replica_labels", tmp)
        feeder.start()
        rk.replicas_hold_all(svcs, feeder, N, 180)
        before = [rk.metrics(s).get("streamlda_model_updates", -1) for s in svcs]
        check(post_label(svcs[0], 1, "theme one") == 202, "POST /api/labels to replica a: 202")
        check(post_label(svcs[1], 2, "theme two") == 202, "POST /api/labels to replica b: 202")
        want = {1: "theme one", 2: "theme two"}
        rk.wait_for(lambda: all(labels(s) == want for s in svcs), 120,
                    "both labels on both replicas", step=0.5)
        got = [labels(s) for s in svcs]
        print("labels:", got)
        check(got == [want, want], "each replica shows both labels", got)
        after = [rk.metrics(s).get("streamlda_model_updates", -1) for s in svcs]
        check(after == before, "a label is no update", before, after)
        finals = rk.replicas_stop_identical(svcs, N)
        newest = sorted(f for f in os.listdir(snap) if f.endswith(".slda"))[-1]
        out = subprocess.run([os.environ.get("STREAMLDA", "streamlda"), "label",
                              os.path.join(snap, newest)], capture_output=True, text=True)
        print(out.stdout.strip())
        check("theme one" in out.stdout and "theme two" in out.stdout,
              "the snapshot writer's final snapshot holds both labels", out.stdout, out.stderr)
        # a replica that only applies the log gets them from it
        c = rk.service(tmp, addr, props(os.path.join(tmp, "empty")), "c")
        svcs.append(c)
        want_t = int(finals[0][0]) if finals[0] else -1
        rk.wait_for(lambda: rk.metrics(c).get("streamlda_model_updates", -1) >= want_t and
                    labels(c) == want or not rk.alive(c), 120,
                    "the log-only replica to apply the whole log", step=0.5)
        check(labels(c) == want, "the log-only replica shows both labels", labels(c))
        check(c.stop() == 0, "log-only replica: exit 0")
        fc = rk.replica_final(c.text())
        check(fc is not None and finals[0] is not None and fc[3] == finals[0][3],
              "the log-only replica equals the replicas bit for bit (digest)", fc, finals[0])
    finally:
        rk.kill_all(svcs)
    return rk.done("0110-realkafka_replica_labels", tmp)


if __name__ == "__main__":
    sys.exit(main())
