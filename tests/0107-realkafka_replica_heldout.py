#!/usr/bin/env python3
"""0107-realkafka_replica_heldout - held-out perplexity in replicas (heldout.modulo with updates.topic).

Two replicas of one model share a 4-partition input topic with heldout.modulo=5:
each holds out the documents of its partitions whose XXH3(id) % 5 == 0 (by
word key: a replica's vocabulary changes only through the update log) and
reports their perplexity under its replica of the model. 4,000 documents of
two themes with disjoint 8-word vocabularies (30 words each) stream in over
10 s; a third replica joins after 3 s, so the group rebalances while
minibatches and transactions are open: they are dropped and read again from
the committed offsets, and a held-out document among them must not be counted
twice (a replica stages its held-out documents until their offsets commit).
A model that learned the themes predicts a held-out word among its theme's 8
(perplexity near 8), one that did not among all 16. Checks: the replicas hold
out documents, every document is either trained (the same count in every
replica) or held out, exactly once (trained + held out by all = 4,000); the
perplexity gauges fall below 12 once training is done; SIGTERM gives
identical final lines. On the old code heldout.modulo with updates.topic was
refused at start ("not supported with updates.topic yet").
"""

import math
import os
import random
import sys
import tempfile

sys.dont_write_bytecode = True
import realkafka as rk  # noqa: E402

check = rk.check
N = 4000


def main():
    rng = random.Random(7)
    addr = rk.bootstrap()
    tmp = tempfile.mkdtemp(prefix="slda-0107-")
    p, topic, feeder = rk.themed_stream(addr, "h", N, 4, 10, rng)
    props = rk.replica_props(p, topic, p + "-m", os.path.join(tmp, "snap"),
                             "updates.topic=" + p + ".updates", "heldout.modulo=5", "status.ms=300")
    svcs = [rk.service(tmp, addr, props, "a"), rk.service(tmp, addr, props, "b")]
    try:
        if not all(rk.assigned(s, timeout=90) for s in svcs):
            return rk.done("0107-realkafka_replica_heldout", tmp)
        feeder.start()
        # the third joins while documents flow: once the first two have trained some
        rk.wait_for(lambda: sum(rk.metrics(s).get("streamlda_documents_total", 0) for s in svcs)
                    >= 200 or not feeder.is_alive(), 120, "the first documents trained", step=0.05)
        print("third replica starts with %d of %d documents delivered" % (feeder.delivered, N))
        svcs.append(rk.service(tmp, addr, props, "c"))  # a rebalance while documents flow
        check(rk.assigned(svcs[2], timeout=90), "the third replica joined")
        feeder.join(120)
        check(feeder.delivered == N and not feeder.errors, "the feeder delivered every document",
              feeder.delivered)

        def accounted():
            m = [rk.metrics(s) for s in svcs]
            trained = [x.get("streamlda_model_documents", -1) for x in m]
            held = [x.get("streamlda_heldout_documents_total", 0) for x in m]
            return trained, held

        rk.wait_for(lambda: (lambda t, h: len(set(t)) == 1 and t[0] + sum(h) >= N)(*accounted()),
                    120, "every document trained or held out", step=0.5)
        rk.wait_for(lambda: rk.all_committed(addr, svcs[0], topic) and
                    len(set(rk.metrics(s).get("streamlda_model_updates", -1) for s in svcs)) == 1,
                    120, "every document committed and every replica at the same update", step=0.5)
        trained, held = accounted()
        print("trained by each replica:", trained, "held out by each:", held)
        check(sum(h > 0 for h in held) >= 2, "the replicas hold documents out", held)
        check(len(set(trained)) == 1 and trained[0] + sum(held) == N,
              "each document trained or held out, exactly once", trained, held)
        # expected share: about a fifth held out (XXH3 of the Kafka coordinates)
        check(0.12 * N < sum(held) < 0.28 * N, "about a fifth held out", sum(held))

        def perplexities():
            return [rk.metrics(s).get("streamlda_perplexity", 0) for s in svcs]

        rk.wait_for(lambda: all(x == 0 or x < 12 for x in perplexities()) and
                    sum(0 < x for x in perplexities()) >= 2, 30, "the perplexity gauges below 12",
                    step=0.3)
        pp = perplexities()
        print("held-out perplexity of each replica:", pp)
        check(all(x == 0 or (math.isfinite(x) and 1 < x < 12) for x in pp) and sum(x > 0 for x in pp) >= 2,
              "the replicas score their held-out documents (a themed model: < 12 of 16 words)", pp)
        rk.replicas_stop_identical(svcs, trained[0])
        dead = rk.consume_all(addr, p + ".dead", idle_s=2, timeout_s=30)
        check(len(dead) == 0, "no dead letter", len(dead))
    finally:
        for s in svcs:
            if rk.alive(s):
                s.stop()
    return rk.done("0107-realkafka_replica_heldout", tmp)


if __name__ == "__main__":
    sys.exit(main())
