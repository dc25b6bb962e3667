#!/bin/bash
# 0014-kafka_embedded - `streamlda run --embedded` hosts its own mock cluster; the examples read it.
#
# The service prints "bootstrap: ADDR" on stderr; `streamlda produce` feeds the
# Austen paragraphs (JSON lines, keyed by id) into its input topic; once
# /metrics shows them all, examples/read_snapshot.c (built here against the
# library) and examples/read_snapshot.py rebuild the newest snapshot from the
# snapshot topic and print its topics; SIGTERM then gives exit 0 and a final
# snapshot file with every document. With no http.port given the live page is served on a free
# loopback port printed at start (the old default, -1, served nothing), and `run --help` names
# the settings people set first (http.port, input.time.field, track.*); `produce --time-field`
# keeps the stream in partition 0.
set -u
. "$(dirname "$0")/checks.sh"
: "${SLDA_SOURCE_DIR:?}" "${SLDA_BUILD_DIR:?}"
at_exit '[ -n "${svc:-}" ] && kill "$svc" 2>/dev/null; wait 2>/dev/null'

cd "$T" || exit 1
"$S" run --embedded -X topics=6 -X status.ms=1000 -X minibatch.docs=64 \
    -X snapshot.every.ms=1000 -X snapshot.dir=snaps -X snapshot.chunk.bytes=65536 \
    -X kafka.session.timeout.ms=6000 -X kafka.heartbeat.interval.ms=500 2> run.log &
svc=$!
for _ in $(seq 300); do grep -q "http: 127.0.0.1:" run.log && grep -q "bootstrap: " run.log && break; sleep 0.2; done
addr=$(sed -n 's/.*bootstrap: //p' run.log | head -1)
port=$(sed -n 's/.*http: 127\.0\.0\.1:\([0-9]*\) .*/\1/p' run.log | head -1)
echo "embedded bootstrap: $addr, http port: $port"
check "service printed its bootstrap address" test -n "$addr"
# the page is on by default (no http.port given): a free port on loopback, its URL printed
grep -q "http: 127.0.0.1:$port (the live page http://127.0.0.1:$port/, /metrics" run.log && ok ||
    fail "the start line names the live page: $(grep 'http:' run.log)"
/usr/bin/python3 -c 'import sys, urllib.request; sys.exit(b"<html" not in urllib.request.urlopen(sys.argv[1], timeout=5).read())' \
    "http://127.0.0.1:$port/" && ok || fail "GET / serves the live page by default"
"$S" run --help >help.txt
for name in http.port input.time.field track.window kafka.bootstrap.servers input.topics; do
    grep -q "$name" help.txt && ok || fail "run --help names $name"
done

# JSON lines with ids, one per paragraph.
/usr/bin/python3 -c '
import json, sys
for name in sys.argv[1:]:
    for i, line in enumerate(open(name)):
        if line.strip():
            print(json.dumps({"id": "%s-%d" % (name.rsplit("/", 1)[-1][:4], i), "text": line.strip()}))
' "$SLDA_SOURCE_DIR"/examples/janeausten/*.txt > docs.jsonl
n=$(wc -l < docs.jsonl)
check "streamlda produce into the embedded cluster" \
    "$S" produce --brokers "$addr" --topic documents --format jsonl --key-from-id docs.jsonl

docs=0
for _ in $(seq 300); do
    m=$(/usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$port/metrics" 2>/dev/null)
    docs=$(echo "$m" | awk '/^streamlda_documents_total/ {print $2}')
    dead=$(echo "$m" | awk '/^streamlda_deadletters_total/ {s += $2} END {print s + 0}')
    [ "$((${docs%.*} + ${dead%.*}))" -ge "$n" ] && break
    sleep 0.3
done
echo "trained $docs documents, $dead dead letters, of $n"
check "every document trained or dead-lettered" test "$((${docs%.*} + ${dead%.*}))" -eq "$n"

# examples/read_snapshot.c, built by CMake with this build's flags (target read_snapshot). The
# snapshot with every document comes with the next time-driven snapshot (snapshot.every.ms):
# read the topic until it is there (or 60 s have passed; the checks below then say what is not).
cp "$SLDA_BUILD_DIR/read_snapshot" . 2>/dev/null
check "examples/read_snapshot.c is built" test -x read_snapshot
rc=127
for _ in $(seq 120); do
    [ -x read_snapshot ] || break
    ./read_snapshot "$addr" streamlda.snapshots streamlda 8 > c.out 2> c.err
    rc=$?
    [ "$rc" -eq 0 ] && grep -q "snapshot [0-9]*: [0-9]* bytes, ${docs%.*} documents" c.out && break
    sleep 0.5
done
check "read_snapshot (C) exit 0 (got $rc)" test "$rc" -eq 0
cat c.out c.err
check "read_snapshot (C) printed 6 topics" test "$(grep -c '^topic ' c.out)" -eq 6
check "read_snapshot (C) saw every document" grep -q "snapshot [0-9]*: [0-9]* bytes, ${docs%.*} documents" c.out
/usr/bin/python3 "$SLDA_SOURCE_DIR/examples/read_snapshot.py" --brokers "$addr" -n 8 > py.out 2> py.err
check "read_snapshot.py exit 0" test $? -eq 0
cat py.out py.err
check "read_snapshot.py verified the chunks" grep -q "chunks, .* verified" py.out
check "C and Python readers agree on the topics" \
    diff <(grep '^topic ' c.out) <(grep '^topic ' py.out)

# produce --time-field keeps a time-ordered stream in one partition by default (before, the
# partitioner spread it and the service counted most documents late)
printf '{"id":"t%d","date":"2020-01-%02dT00:00:00Z","text":"dated words"}\n' 1 1 2 2 3 3 4 4 5 5 6 6 >dated.jsonl
"$S" produce --brokers "$addr" --topic dated --time-field date dated.jsonl 2>produce.err
grep -q "every message to partition 0" produce.err && ok || fail "produce says where: $(cat produce.err)"
for p in 0 1 2 3; do
    got=$(timeout 30 kcat -C -b "$addr" -t dated -p "$p" -o beginning -e -q 2>/dev/null | wc -l)
    want=0
    [ "$p" -eq 0 ] && want=6
    [ "$got" -eq "$want" ] && ok || fail "dated stream: partition $p holds $got messages, wanted $want"
done

kill -TERM "$svc"
wait "$svc"
rc=$?
svc=
check "SIGTERM -> exit 0 (got $rc)" test "$rc" -eq 0
final=$(ls snaps/streamlda-*.slda | tail -1)
"$S" topics -n 5 "$final" > topics.out
cat topics.out
check "final snapshot has 6 topics" test "$(grep -c '^topic ' topics.out)" -eq 6
got=$(/usr/bin/python3 "$SLDA_SOURCE_DIR/examples/read_snapshot.py" --file "$final" | sed -n 's/.*updates, \([0-9]*\) documents.*/\1/p')
check "final snapshot counts $docs documents (got $got)" test "$got" -eq "${docs%.*}"
checks_done 0014-kafka_embedded
