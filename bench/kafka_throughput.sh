#!/bin/bash
# kafka_throughput.sh - end-to-end docs/s and tokens/s through Kafka vs the engine alone.
#
#   bench/kafka_throughput.sh [FILE...]      (default: examples/janeausten/*.txt)
#   env: STREAMLDA (binary, default build/streamlda), K (topics, 20), MB (minibatch.docs, 256),
#        THREADS (1), RUN_X (more arguments for `streamlda run`, e.g. "-X track=false")
#
# 1. engine alone: `streamlda train` on the files (text, one document a line): its wall time
#    to read, tokenise and train (wall_seconds: the same work the service does per message),
#    and, for reference, its training steps alone (seconds);
# 2. through Kafka: a `streamlda broker` process (1 broker, partitions sized so each holds
#    < 1 MB: the mock keeps ~5 MiB per partition and was seen dropping data at ~3 MB),
#    `streamlda produce`, then `streamlda run`
#    with the same K, minibatch and seed. The clock starts at the first trained document (the
#    group join is excluded) and stops when every document is trained or dead-lettered; it
#    includes the last partial minibatch's minibatch.ms wait (set to 200 ms here); the CPU
#    seconds the service, the broker process and this script's polling used meanwhile (what
#    else runs on the same cores: the limit of threads=2 on a 2-core machine); and the steady
#    rate, documents between the first polls (every 50 ms) past 10% and past 90% of the corpus
#    over the time between them: neither the start nor the last partial minibatch's wait;
# 3. snapshot cost: with snapshot.every.ms=2000 and snapshot.topic on, the last snapshot's write
#    time, publish time (first chunk to manifest acknowledged) and size from /metrics.
# Prints one table. Uses the machine's 2 cores: run it alone.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${STREAMLDA:-$here/build/streamlda}
K=${K:-20} MB=${MB:-256} THREADS=${THREADS:-1}
if [ $# -eq 0 ]; then set -- "$here"/examples/janeausten/*.txt; fi
tmp=$(mktemp -d /tmp/slda-bench-XXXXXX)
cleanup() {
    for p in ${svc:-} ${brk:-} ${sums_pid:-}; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
cat "$@" | grep -v '^[[:space:]]*$' > "$tmp/corpus.txt"
ndocs=$(wc -l < "$tmp/corpus.txt")
bytes=$(wc -c < "$tmp/corpus.txt")
echo "corpus: $ndocs documents, $bytes bytes; K=$K minibatch.docs=$MB threads=$THREADS"

# 1. engine alone
engine=$("$bin" train -q -f text -k "$K" -X minibatch.docs="$MB" -X threads="$THREADS" "$tmp/corpus.txt")
echo "engine: $engine"
e_docs=$(echo "$engine" | sed -n 's/^train docs=\([0-9]*\).*/\1/p')
e_tokens=$(echo "$engine" | sed -n 's/.* tokens=\([0-9]*\).*/\1/p')
e_train=$(echo "$engine" | sed -n 's/.* seconds=\([0-9.e+-]*\).*/\1/p')
# engine alone end to end: read + tokenise + train (what the Kafka path also does)
e_secs=$(echo "$engine" | sed -n 's/.*wall_seconds=\([0-9.e+-]*\).*/\1/p')

# 2. through Kafka
parts=$(( bytes / 1000000 + 1 )); [ "$parts" -lt 4 ] && parts=4
"$bin" broker --brokers 1 --partitions "$parts" --topics documents,streamlda.snapshots:1,streamlda.deadletter \
    --address-file "$tmp/addr" > /dev/null 2> "$tmp/broker.log" &
brk=$!
for _ in $(seq 100); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
addr=$(cat "$tmp/addr")
"$bin" produce --brokers "$addr" --topic documents "$tmp/corpus.txt"
(cd "$tmp" && exec "$bin" run -X kafka.bootstrap.servers="$addr" -X topics="$K" -X minibatch.docs="$MB" \
    -X minibatch.ms=200 -X threads="$THREADS" -X http.port=0 -X status.ms=0 -X snapshot.every.ms=2000 \
    -X snapshot.every.batches=0 -X kafka.session.timeout.ms=6000 -X kafka.heartbeat.interval.ms=500 \
    ${RUN_X:-} 2> "$tmp/run.log") &
svc=$!
for _ in $(seq 100); do grep -q "http: 127.0.0.1:" "$tmp/run.log" && break; sleep 0.1; done
port=$(sed -n 's/.*http: 127.0.0.1://p' "$tmp/run.log" | head -1)
# /metrics into m, over bash's /dev/tcp and read (no process: the loop below polls every
# 50 ms, and a Python process per poll, as this script did, took most of a core of this
# 2-core machine from the service)
metrics() {
    m=
    exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
    printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    IFS= read -r -d '' -N 1000000 m <&3 || true # to the end of the response
    exec 3<&-
}
value() { awk -v n="$1" '$1 ~ "^"n"[{]" {s += $2} END {printf "%.0f\n", s}' <<<"$m"; }
# The loop's poll: metrics, summed by one awk kept running beside it
# (a coprocess; mawk buffers a pipe's input unless interactive), about 0.3 ms a poll. With a
# subshell, cat, two awk, date and sleep per poll it took 0.2-0.3 s of CPU per two-thread run,
# from the same two cores as the service it measures.
awki=(awk)
if command -v mawk >/dev/null; then awki=(mawk -W interactive); fi
coproc SUMS { "${awki[@]}" '$1 == "#END" {printf "%.0f %.0f\n", d, l; fflush(); d = 0; l = 0; next}
    $1 ~ /^streamlda_documents_total[{]/ {d += $2}
    $1 ~ /^streamlda_deadletters_total[{]/ {l += $2}'; }
sums_in=${SUMS[1]} sums_out=${SUMS[0]} sums_pid=$SUMS_PID
poll_counts() { # the documents trained (d) and dead-lettered (dl) so far
    metrics
    printf '%s\n#END\n' "$m" >&"$sums_in"
    read -r d dl <&"$sums_out"
}
mkfifo "$tmp/tick"
exec 4<>"$tmp/tick" # read -t on it: a 50 ms sleep without a process
# CPU seconds used so far: a process (utime + stime), or this shell's own and waited children's
tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{printf "%.3f\n", ($14 + $15) / t}' "/proc/$1/stat"; }
cpu_self() { awk -v t="$tck" '{printf "%.3f\n", ($14 + $15 + $16 + $17) / t}' "/proc/$$/stat"; }
t0=""
last=-1; still=0
while :; do
    poll_counts
    if [ -z "$t0" ] && [ "$d" -gt 0 ]; then
        t0=$EPOCHREALTIME c_svc0=$(cpu "$svc") c_brk0=$(cpu "$brk") c_me0=$(cpu_self)
    fi
    # the steady rate: between the first polls past 10% and past 90% of the documents (no
    # start, no last partial minibatch's wait), from the counts those polls read
    if [ -z "${s0:-}" ] && [ $((d + dl)) -ge $((ndocs / 10)) ]; then
        s0=$EPOCHREALTIME sd0=$((d + dl))
    fi
    if [ -z "${s1:-}" ] && [ $((d + dl)) -ge $((ndocs * 9 / 10)) ]; then
        s1=$EPOCHREALTIME sd1=$((d + dl))
    fi
    [ $((d + dl)) -ge "$ndocs" ] && break
    # no progress for 30 s: the mock cluster dropped data (or the service is stuck)
    if [ $((d + dl)) -eq "$last" ]; then still=$((still + 1)); else still=0; last=$((d + dl)); fi
    if [ "$still" -ge 600 ]; then
        metrics
        echo "kafka_throughput: stalled at $((d + dl)) of $ndocs documents (lag $(value streamlda_consumer_lag))" >&2
        exit 1
    fi
    read -r -t 0.05 -u 4 _ || true
done
t1=$EPOCHREALTIME
c_svc1=$(cpu "$svc") c_brk1=$(cpu "$brk") c_me1=$(cpu_self)
exec {sums_in}>&- # the summing awk ends
wait "$sums_pid" || true
metrics
k_docs=$(value streamlda_documents_total); k_tokens=$(value streamlda_tokens_total)
sleep 2.5 # one more time-driven snapshot, published
metrics
snap_s=$(echo "$m" | awk '/^streamlda_snapshot_seconds/ {print $2}')
pub_s=$(echo "$m" | awk '/^streamlda_snapshot_publish_seconds/ {print $2}')
snap_b=$(echo "$m" | awk '/^streamlda_snapshot_bytes/ {print $2}')
kill -TERM "$svc"; wait "$svc" || true; svc=

awk -v ed="$e_docs" -v et="$e_tokens" -v es="$e_secs" -v kd="$k_docs" -v kt="$k_tokens" \
    -v t0="$t0" -v t1="$t1" -v tr="$e_train" -v ss="$snap_s" -v ps="$pub_s" -v sb="$snap_b" \
    -v cs="$(awk -v a="$c_svc0" -v b="$c_svc1" 'BEGIN {print b - a}')" \
    -v cb="$(awk -v a="$c_brk0" -v b="$c_brk1" 'BEGIN {print b - a}')" \
    -v cm="$(awk -v a="$c_me0" -v b="$c_me1" 'BEGIN {print b - a}')" \
    -v s0="$s0" -v s1="$s1" -v sd0="$sd0" -v sd1="$sd1" 'BEGIN {
    ks = t1 - t0
    printf "%-22s %10s %12s %10s %12s\n", "path", "docs", "seconds", "docs/s", "tokens/s"
    printf "%-22s %10d %12.3f %10.0f %12.0f\n", "engine (read+train)", ed, es, ed / es, et / es
    printf "%-22s %10d %12.3f %10.0f %12.0f\n", "kafka (run)", kd, ks, kd / ks, kt / ks
    printf "%-22s %10d %12.3f %10.0f %12s\n", "kafka (10%-90%)", sd1 - sd0, s1 - s0, (sd1 - sd0) / (s1 - s0), "-"
    printf "%-22s %10d %12.3f %10.0f %12.0f\n", "engine (train only)", ed, tr, ed / tr, et / tr
    printf "kafka / engine (read+train) tokens/s: %.2f\n", (kt / ks) / (et / es)
    printf "snapshot: %.0f bytes, write %.4f s, publish to topic %.4f s\n", sb, ss, ps
    printf "cpu during the kafka run: service %.2f s (%.2f cores), broker %.2f s, polling %.2f s\n", \
        cs, cs / ks, cb, cm
}'
