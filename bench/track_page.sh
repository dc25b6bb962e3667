#!/bin/bash
# track_page.sh - the live page at K=100 and K=1000: the size of its JSON endpoints and the time
# headless Chromium takes to load it, fetch the JSON and draw the topics and charts.
#
#   bench/track_page.sh            env: STREAMLDA (default build/streamlda), KS ("100 1000"), N (3)
# For each K: `streamlda run --embedded` (track.window=minute, so the prevalence ring has many
# windows), the Austen paragraphs produced twice with timestamps an hour apart per 200 lines,
# then the bytes of /, /api/status, /api/topics, /api/prevalence, /api/events, what one refresh
# of the page fetches at most (gzip, as a browser takes it: /api/status, and /api/topics,
# /api/chart, /api/events when their versions moved), and the wall time of
# `chromium --headless --dump-dom` on / minus the same on an empty page (median of N); the
# dumped page must hold min(K, 100) topic cards (the heaviest; the others a click away), or
# the figure is refused. Run it alone.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${STREAMLDA:-$here/build/streamlda}
KS=${KS:-100 1000} N=${N:-3}
tmp=$(mktemp -d /tmp/slda-trackpage-XXXXXX)
svc=
cleanup() { [ -n "$svc" ] && kill "$svc" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
chrome() { /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$tmp/chrome" \
    --virtual-time-budget=5000 --window-size=1280,1000 --dump-dom "$1" 2>/dev/null; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
/usr/bin/python3 - "$here"/examples/janeausten/*.txt > "$tmp/docs.jsonl" <<'PY'
import json, sys
n = 0
for path in sys.argv[1:]:
    for line in open(path):
        if line.strip():
            print(json.dumps({"id": "d%d" % n, "text": line.strip(), "time": 1700000000 + 18 * n}))
            n += 1
PY
printf '<html><body>empty</body></html>\n' > "$tmp/empty.html"
blank=$(for _ in $(seq "$N"); do s=$(date +%s.%N); chrome "file://$tmp/empty.html" > /dev/null; e=$(date +%s.%N); awk -v a="$e" -v b="$s" 'BEGIN {print a - b}'; done | median)
# CPU seconds (user + system) of Chromium and the children it waited for: less inflated than
# the wall time on a machine other work keeps busy
cpu() { /usr/bin/time -f "%U %S" -o "$tmp/cpu" /bin/bash -c "$(declare -f chrome); tmp='$tmp'; chrome '$1'" > /dev/null; awk '{print $1 + $2}' "$tmp/cpu"; }
blank_cpu=$(for _ in $(seq "$N"); do cpu "file://$tmp/empty.html"; done | median)
printf "%-6s %8s %9s %9s %13s %9s %10s %9s %10s %12s %9s %9s\n" K "page B" "status B" "topics B" \
    "prevalence B" "events B" "topics gz" "chart gz" "events gz" "refresh gz B" "render s" "cpu s"
for K in $KS; do
    rm -rf "$tmp/snaps" "$tmp/run.log"
    (cd "$tmp" && exec "$bin" run --embedded -X topics="$K" -X http.port=0 -X status.ms=0 \
        -X track.window=minute -X input.time.field=time -X snapshot.every.ms=1000 \
        -X snapshot.dir="$tmp/snaps" -X snapshot.topic= 2> "$tmp/run.log") &
    svc=$!
    for _ in $(seq 200); do grep -q "http: 127.0.0.1:" "$tmp/run.log" && grep -q "bootstrap:" "$tmp/run.log" && break; sleep 0.1; done
    port=$(sed -n 's/.*http: 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/run.log" | head -1)
    addr=$(sed -n 's/.*bootstrap: //p' "$tmp/run.log" | head -1)
    "$bin" produce --brokers "$addr" --topic documents --time-field time --partition 0 "$tmp/docs.jsonl" 2> /dev/null
    ndocs=$(wc -l < "$tmp/docs.jsonl")
    for _ in $(seq 600); do
        d=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^streamlda_documents_total/ {print $2}')
        [ "${d%.*}" -ge $((ndocs - 100)) ] 2>/dev/null && break; sleep 0.2
    done
    sleep 3 # a snapshot: drift and events, and the page's JSON republished
    size() { curl -s "http://127.0.0.1:$port$1" | wc -c; }
    p=$(size /); st=$(size /api/status); tp=$(size /api/topics); pv=$(size /api/prevalence); ev=$(size /api/events)
    gz() { curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port$1" | wc -c; }
    stz=$(gz /api/status); tpz=$(gz /api/topics); chz=$(gz /api/chart); evz=$(gz /api/events)
    refresh=$((stz + tpz + chz + evz))
    cards=$(chrome "http://127.0.0.1:$port/" | grep -o 'class="topic" data-topic=' | wc -l)
    want=$((K < 100 ? K : 100)) # the 100 heaviest topics, the rest a click away
    if [ "$cards" -ne "$want" ]; then
        echo "track_page: the page showed $cards topic cards, not $want: no render time" >&2; r=nan; c=nan
    else
        t=$(for _ in $(seq "$N"); do s=$(date +%s.%N); chrome "http://127.0.0.1:$port/" > /dev/null; e=$(date +%s.%N); awk -v a="$e" -v b="$s" 'BEGIN {print a - b}'; done | median)
        r=$(awk -v a="$t" -v b="$blank" 'BEGIN {printf "%.2f", a - b}')
        c=$(for _ in $(seq "$N"); do cpu "http://127.0.0.1:$port/"; done | median)
        c=$(awk -v a="$c" -v b="$blank_cpu" 'BEGIN {printf "%.2f", a - b}')
    fi
    printf "%-6s %8d %9d %9d %13d %9d %10d %9d %10d %12d %9s %9s\n" "$K" "$p" "$st" "$tp" "$pv" \
        "$ev" "$tpz" "$chz" "$evz" "$refresh" "$r" "$c"
    kill -TERM "$svc"; wait "$svc" 2>/dev/null || true; svc=
done
