#!/bin/bash
# rss_20news.sh - resident memory of `streamlda run` over a 10-minute open-vocabulary run.
#
#   bench/rss_20news.sh [SECONDS]            (default 600; samples every 10 s)
#   env: STREAMLDA (binary, default build/streamlda), K (topics, 50), CAPACITY (vocab.capacity,
#        131072)
#
# 20 Newsgroups (/work/shared/data/20news-bydate, 18,846 posts, ~111k distinct words in the
# bodies) is turned into JSON lines {"id","text"} (bodies only, Latin-1 read as such) and fed
# through a `streamlda broker` process (16 partitions: the mock keeps ~5 MiB per partition) again
# and again, each pass with fresh ids, while `streamlda run` consumes it with an open vocabulary
# bounded at vocab.capacity. A new pass is produced only when the consumer lag is below half a
# pass, so the mock never drops unread data. Every 10 s prints: elapsed seconds, VmRSS (kB),
# documents trained, vocabulary size, consumer lag. The RSS should level off once the
# vocabulary is full (words are evicted, rows reused). Long: do not run it in CI.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${STREAMLDA:-$here/build/streamlda}
secs=${1:-600} K=${K:-50} CAPACITY=${CAPACITY:-131072}
data=${SLDA_SHARED_DIR:-$here/../shared}/data/20news-bydate/20news-bydate.tar.gz
tmp=$(mktemp -d /tmp/slda-rss-XXXXXX)
cleanup() { for p in ${feeder:-} ${svc:-} ${brk:-}; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
tar -xzf "$data" -C "$tmp"
/usr/bin/python3 - "$tmp" <<'PY'
import json, os, sys
root = sys.argv[1]
with open(os.path.join(root, "posts.jsonl"), "w", encoding="utf-8") as out:
    for split in ("20news-bydate-train", "20news-bydate-test"):
        for group in sorted(os.listdir(os.path.join(root, split))):
            d = os.path.join(root, split, group)
            for name in sorted(os.listdir(d)):
                raw = open(os.path.join(d, name), "rb").read().decode("latin-1").replace("\r\n", "\n")
                body = raw.split("\n\n", 1)[1] if "\n\n" in raw else ""
                if body.strip():
                    out.write(json.dumps({"id": "%s/%s" % (group, name), "text": body[:60000]}) + "\n")
PY
ndocs=$(wc -l < "$tmp/posts.jsonl")
echo "corpus: $ndocs posts, $(wc -c < "$tmp/posts.jsonl") bytes a pass"
"$bin" broker --brokers 1 --partitions 16 --topics documents,streamlda.snapshots:1,streamlda.deadletter \
    --address-file "$tmp/addr" > /dev/null 2> "$tmp/broker.log" &
brk=$!
for _ in $(seq 100); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
addr=$(cat "$tmp/addr")
(cd "$tmp" && exec "$bin" run -X kafka.bootstrap.servers="$addr" -X topics="$K" -X input.format=json \
    -X vocab.capacity="$CAPACITY" -X http.port=0 -X status.ms=10000 -X snapshot.every.ms=60000 \
    -X kafka.session.timeout.ms=6000 -X kafka.heartbeat.interval.ms=500 2> "$tmp/run.log") &
svc=$!
for _ in $(seq 100); do grep -q "http: 127.0.0.1:" "$tmp/run.log" && break; sleep 0.1; done
port=$(sed -n 's/.*http: 127.0.0.1://p' "$tmp/run.log" | head -1)
metric() { /usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
    "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1 ~ "^"n"[{]" {printf "%.0f\n", $2}'; }
( pass=0
  while :; do
      lag=$(metric streamlda_consumer_lag 2>/dev/null || echo 0)
      if [ "$pass" -eq 0 ] || [ "${lag:-0}" -lt $((ndocs / 2)) ]; then
          sed "s/\"id\": \"/\"id\": \"p$pass-/" "$tmp/posts.jsonl" > "$tmp/pass.jsonl"
          "$bin" produce --brokers "$addr" --topic documents --format jsonl "$tmp/pass.jsonl" 2>/dev/null
          pass=$((pass + 1))
      fi
      sleep 2
  done ) &
feeder=$!
printf "%8s %12s %12s %10s %10s\n" seconds rss_kb docs vocab lag
start=$(date +%s)
while :; do
    el=$(( $(date +%s) - start ))
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$svc/status" 2>/dev/null || echo 0)
    # $svc is the subshell that exec'ed streamlda, so /proc/$svc is the service itself
    printf "%8d %12s %12s %10s %10s\n" "$el" "$rss" "$(metric streamlda_documents_total)" \
        "$(metric streamlda_vocabulary_words)" "$(metric streamlda_consumer_lag)"
    [ "$el" -ge "$secs" ] && break
    sleep 10
done
kill "$feeder" 2>/dev/null || true; feeder=
kill -TERM "$svc"; wait "$svc" || true; svc=
tail -3 "$tmp/run.log"
