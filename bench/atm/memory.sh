#!/bin/bash
# memory.sh - peak RSS of model.kind=atm with many authors: a synthetic stream whose documents
# (40 tokens over a 20,000-word vocabulary) come from AUTHORS distinct authors, trained with
# the default authors.capacity (100,000) and with a tenth of it (eviction), beside LDA on the
# same stream. Prints one line per run:
#   memory kind=K authors=A capacity=C docs=D topics=K rss_mb=R seconds=S evicted=E
#
#   bench/atm/memory.sh STREAMLDA [AUTHORS=100000] [DOCS=200000] [TOPICS=100]
set -euo pipefail
bin=$1
authors=${2:-100000}
docs=${3:-200000}
k=${4:-100}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/slda-atm-mem-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp/s.jsonl" "$authors" "$docs" <<'PY'
import json, random, sys
path, A, D = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(1)
words = [f"w{i}" for i in range(20000)]
with open(path, "w") as f:
    for d in range(D):
        a = d % A  # every author writes D / A documents
        base = (a % 50) * 400  # an author's subject: a block of 400 words
        toks = [words[base + rng.randrange(400)] if rng.random() < 0.8 else rng.choice(words)
                for _ in range(40)]
        f.write(json.dumps({"id": str(d), "author": f"author{a}", "tokens": toks}) + "\n")
PY
run() { # kind capacity
    local out
    out=$(/usr/bin/time -f "rss_kb=%M" "$bin" train -q -f json -k "$k" -X threads=1 \
        -X replay=off -X "model.kind=$1" -X "authors.capacity=$2" -X text.stopwords=none \
        -X text.segment=simple -o "$tmp/m.slda" "$tmp/s.jsonl" 2>&1 >"$tmp/sum")
    local rss=${out##*rss_kb=}
    local ev=-
    if [ "$1" = atm ]; then
        ev=$("$bin" authors --json --top 1 "$tmp/m.slda" | sed -E 's/.*"evicted":([0-9]+).*/\1/')
    fi
    local sec
    sec=$(sed -E 's/.*wall_seconds=([0-9.]+).*/\1/' "$tmp/sum")
    echo "memory kind=$1 authors=$authors capacity=$2 docs=$docs topics=$k" \
        "rss_mb=$((rss / 1024)) seconds=$sec evicted=$ev"
}
run lda 100000
run atm 100000
run atm $((authors / 10))
