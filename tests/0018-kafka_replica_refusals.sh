#!/bin/bash
# 0018-kafka_replica_refusals - what replicas (updates.topic) refuse before touching a broker.
#
# Replicas publish every minibatch in a Kafka transaction and read the update
# log read_committed (docs/replication.md); librdkafka's mock cluster has no
# transaction semantics, so every guarantee of replicas is tested on the real
# broker (tests/0105-*, 0106-*). Here, with no broker at all, the service must
# refuse at once, exit 1 (2: a bad property) and say why: the embedded cluster with updates.topic,
# a cooperative assignment strategy
# (a dropped minibatch must be read again from the committed offsets), and an
# unknown updates.values. None of them may leave a snapshot behind.
set -u
: "${STREAMLDA:?}"
tmp=$(mktemp -d /tmp/slda-0018-XXXXXX)
pass=0 fail=0
check() { # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; pass=$((pass + 1)); else echo "FAILED: $what"; fail=$((fail + 1)); fi
}
cd "$tmp" || exit 1

refused() { # refused NAME PATTERN ARGS... : exit 1 (2 for a bad property) in 20 s, PATTERN on stderr
    local name=$1 pattern=$2 want=1; shift 2
    [ "$name" = values ] && want=2
    timeout 20 "$STREAMLDA" run -X snapshot.dir="$name.snaps" -X http.port=-1 "$@" 2> "$name.log"
    local rc=$?
    check "$name: exit $want (got $rc)" test "$rc" -eq "$want"
    check "$name: says \"$pattern\"" grep -q -- "$pattern" "$name.log"
    check "$name: no snapshot written" test -z "$(ls "$name.snaps" 2>/dev/null | grep '\.slda$')"
    [ "$rc" -eq "$want" ] || cat "$name.log"
}

refused embedded "needs a Kafka broker with transactions" -X updates.topic=m.updates
refused embedded2 "the embedded cluster has none" --embedded -X updates.topic=m.updates
refused cooperative "need an eager strategy" -X updates.topic=m.updates \
    -X kafka.bootstrap.servers=127.0.0.1:1 -X kafka.partition.assignment.strategy=cooperative-sticky
refused values "updates.values" -X updates.topic=m.updates -X updates.values=float8 \
    -X kafka.bootstrap.servers=127.0.0.1:1

echo "0018-kafka_replica_refusals: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && rm -rf "$tmp"
[ "$fail" -eq 0 ]
