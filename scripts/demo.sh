#!/usr/bin/env bash
# demo.sh - build streamlda, run the Kafka service on its embedded cluster, feed it
# examples/janeausten (two Austen novels, one paragraph a line), stop it with SIGTERM and
# print the topics of the final snapshot. No external broker: the service hosts
# librdkafka's in-process mock cluster (kafka.bootstrap.servers=embedded).
# Environment: TOPICS (default 10), KEEP=1 keeps the work directory.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$repo" -B "$repo/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$repo/build" -j"$jobs" --target streamlda >/dev/null
S=$repo/build/streamlda
work=$(mktemp -d "${TMPDIR:-/tmp}/streamlda-demo.XXXXXX")
svc=
cleanup() {
    [ -n "$svc" ] && kill "$svc" 2>/dev/null && wait "$svc" 2>/dev/null
    [ "${KEEP:-0}" = 1 ] && echo "demo: work directory kept: $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

echo "demo: starting streamlda run --embedded (log: $work/run.log)" >&2
"$S" run --embedded -X topics="${TOPICS:-10}" -X http.port=0 -X status.ms=2000 \
    -X snapshot.dir="$work/snapshots" -X snapshot.every.ms=5000 \
    -X kafka.session.timeout.ms=6000 -X kafka.heartbeat.interval.ms=500 2>"$work/run.log" &
svc=$!
for _ in $(seq 150); do
    grep -q "bootstrap: " "$work/run.log" && grep -q "http: 127.0.0.1:" "$work/run.log" && break
    kill -0 "$svc" 2>/dev/null || { cat "$work/run.log" >&2; exit 1; }
    sleep 0.2
done
addr=$(sed -n 's/.*bootstrap: //p' "$work/run.log" | head -1)
port=$(sed -n 's/.*http: 127.0.0.1://p' "$work/run.log" | head -1)
[ -n "$addr" ] && [ -n "$port" ] || { echo "demo: the service did not start" >&2; cat "$work/run.log" >&2; exit 1; }
echo "demo: embedded Kafka at $addr, metrics at http://127.0.0.1:$port/metrics" >&2

n=$(cat "$repo"/examples/janeausten/*.txt | grep -c .)
"$S" produce --brokers "$addr" --topic documents "$repo"/examples/janeausten/*.txt
echo "demo: produced $n documents; waiting for the service to take them all" >&2
done_docs=0
for _ in $(seq 600); do
    m=$(curl -fs "http://127.0.0.1:$port/metrics" || true)
    docs=$(echo "$m" | awk '/^streamlda_documents_total/ {print int($2)}')
    dead=$(echo "$m" | awk '/^streamlda_deadletters_total/ {s += $2} END {print int(s)}')
    done_docs=$(( ${docs:-0} + ${dead:-0} ))
    [ "$done_docs" -ge "$n" ] && break
    sleep 0.5
done
echo "demo: trained ${docs:-0} documents, ${dead:-0} dead letters; stopping with SIGTERM" >&2
kill -TERM "$svc"
rc=0
wait "$svc" || rc=$?
svc=
tail -n 3 "$work/run.log" >&2
[ "$rc" -eq 0 ] || { echo "demo: service exited $rc" >&2; exit 1; }
snap=$(ls "$work"/snapshots/*.slda | tail -1)
echo "demo: topics of $(basename "$snap"):" >&2
"$S" topics -n 10 "$snap"
