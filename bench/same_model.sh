#!/usr/bin/env bash
# same_model.sh - are two builds' models the same bit for bit? For changes that must not move
# a model (restructuring, speed work): each run below is made by both binaries and their
# topic-word matrices (`export --npy`), vocabularies and top words compared byte for byte.
#
#   bench/same_model.sh OLD NEW      OLD, NEW: directories holding a `streamlda` binary (and,
#                                    for the service run, its streamlda-kafka.so)
#   env: SLDA_SHARED_DIR (default ../shared beside the repository), SERVICE=0 skips the service run,
#        NEW_X="-X k=v ..." train options given to NEW only (e.g. NEW_X="-X text.segment=simple
#        -X text.stopwords=smart": the tokenizer of builds before text.segment, against one)
#
# Runs: KOS (UCI) and Reuters-21578 as raw text (title + body, time order) with 1 and 2 threads;
# standard input with vocab.capacity=3000 (evictions); the births stream of tests/0080
# (bench/shift/gen.py: births, deaths, merges) with 1 and 2 threads; the service on the embedded
# cluster, one partition, 4,000 Reuters documents, 1 and 2 threads (minibatches cut by count,
# one snapshot at the end: a snapshot trains the open minibatch).
# Prints one line per run and exits 1 if any differs. Timing plays no part: no figure here
# depends on the machine's load.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
OLD=$(cd "${1:?usage: same_model.sh OLD_DIR NEW_DIR}" && pwd)
NEW=$(cd "${2:?usage: same_model.sh OLD_DIR NEW_DIR}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
differ=0

python3 "$repo/bench/reuters_text.py" "$shared/data/reuters21578/reuters21578.by-time.tsv.gz" \
    "$T/reuters.txt" "$T/reuters.jsonl"
python3 "$repo/bench/shift/gen.py" --docs 10000 --shift 5000 "$T/shift" >/dev/null

# outputs of one binary for one run: the npy, the vocabulary, the top words with weights
model_files() { # bin name slda
    "$1/streamlda" export "$3" --npy "$T/$2.npy" --vocab "$T/$2.voc" >/dev/null 2>&1 || echo "export failed" >"$T/$2.npy"
    "$1/streamlda" topics --weights -n 20 "$3" >"$T/$2.top" 2>&1
}
compare() { # name: compare old.* and new.* of a run
    local name=$1 what=identical
    for ext in npy voc top; do
        cmp -s "$T/old.$name.$ext" "$T/new.$name.$ext" || what="DIFFERENT ($ext)"
    done
    [ -s "$T/old.$name.npy" ] || what="MISSING (no model)"
    [ "$what" = identical ] || differ=1
    printf "%-28s %s\n" "$name" "$what"
}
train_run() { # name args... (given to train)
    local name=$1
    shift
    for side in old new; do
        local bin=$OLD extra=()
        [ $side = new ] && bin=$NEW && read -r -a extra <<<"${NEW_X:-}"
        "$bin/streamlda" train -q "$@" "${extra[@]}" -o "$T/$side.$name.slda" >/dev/null 2>"$T/$side.$name.err"
        model_files "$bin" "$side.$name" "$T/$side.$name.slda"
    done
    compare "$name"
}

for t in 1 2; do
    train_run "kos.t$t" -k 50 -X threads=$t "$shared/data/kos/docword.kos.txt"
    train_run "reuters.t$t" -k 50 -X threads=$t -f text "$T/reuters.txt"
    train_run "reuters-json.t$t" -k 30 -X threads=$t "$T/reuters.jsonl"
    train_run "births.t$t" -k 15 -X births=true -X threads=$t "$T/shift.txt"
done
for side in old new; do # standard input, a bounded vocabulary (evictions)
    bin=$OLD extra=()
    [ $side = new ] && bin=$NEW && read -r -a extra <<<"${NEW_X:-}"
    "$bin/streamlda" train -q -k 30 -X vocab.capacity=3000 "${extra[@]}" -o "$T/$side.stdin.slda" -f text - \
        <"$T/reuters.txt" >/dev/null 2>&1
    model_files "$bin" "$side.stdin" "$T/$side.stdin.slda"
done
compare stdin

service_run() { # side bin threads: the service on the embedded cluster, one partition
    local side=$1 bin=$2 th=$3 d="$T/svc.$1.$3" addr="" port="" docs=0
    mkdir -p "$d"
    head -4000 "$T/reuters.jsonl" >"$d/in.jsonl"
    (cd "$d" && exec "$bin/streamlda" run --embedded -X topics=30 -X threads="$th" \
        -X minibatch.docs=16 -X minibatch.ms=3600000 -X snapshot.every.batches=0 \
        -X snapshot.every.ms=0 -X snapshot.dir=snaps -X http.port=0 \
        -X input.topics=documents 2>run.log) &
    local pid=$!
    for _ in $(seq 600); do
        kill -0 $pid 2>/dev/null || break
        grep -q "http: 127.0.0.1:" "$d/run.log" && grep -q "bootstrap: " "$d/run.log" && break
        sleep 0.1
    done
    addr=$(sed -n 's/.*bootstrap: //p' "$d/run.log" | head -1)
    port=$(sed -n 's/.*http: 127.0.0.1://p' "$d/run.log" | head -1)
    "$bin/streamlda" produce --brokers "$addr" --topic documents --partition 0 --format jsonl \
        "$d/in.jsonl" >/dev/null 2>&1
    for _ in $(seq 3000); do # every document trained (4,000 = 250 full minibatches)
        kill -0 $pid 2>/dev/null || break
        docs=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^streamlda_documents_total/ {print $2}')
        [ "${docs%.*}" = 4000 ] && break
        sleep 0.1
    done
    kill -TERM $pid
    wait $pid
    local snap
    snap=$(ls "$d/snaps"/*.slda 2>/dev/null | sort | tail -1)
    model_files "$bin" "$side.svc.t$th" "${snap:-/nonexistent}"
}
if [ "${SERVICE:-1}" = 1 ]; then
    for th in 1 2; do
        service_run old "$OLD" $th
        service_run new "$NEW" $th
        compare "svc.t$th"
    done
fi
exit $differ
