#!/usr/bin/env bash
# update_log.sh - update records (docs/replication.md): bytes per document of each value encoding
# and the held-out perplexity of a model built through encoded records against float32; with
# STALE, what updates.staleness costs instead: the perplexity of a model whose records' local
# halves read the model S records behind (the bound of a replica with updates.staleness=S, held
# all the time) against slda_model_train (global.stale=0).
#
#   bench/update_log.sh         env: K (100), MB (32, minibatch documents), SEEDS ("1 2 3 4 5";
#                               "1 2 3" with STALE), STALE (e.g. "0 1 4 8 16": staleness mode),
#                               UPDATE_LOG_CONF (more properties, e.g. "births=false"),
#                               UPDATE_LOG_THIN (e.g. "0.001 0.004": thinned records too),
#                               UPDATE_LOG_BYTES=1 (no train model: bytes and encodings only),
#                               SLDA_SHARED_DIR (default ../shared beside the repository)
#
# Builds the library (Release, build/) and bench/update_log.c against it, then runs it on KOS
# (UCI bag of words, fixed vocabulary) and Reuters-21578 (title + body of each article as text,
# in time order, open vocabulary through the replicas' scratch words). Every tenth document is
# held out. One table per seed, then per corpus the mean over the seeds of bytes per document
# and of each encoding's perplexity change against float32 (with its range): the change of one
# seed is mostly the chaos of a different trajectory (+-1% between float32 and train on text,
# whose only differences are the order of a document's words and so of the sampler's draws),
# so only the mean over seeds says anything. Quality figures only (no timing): safe on a
# loaded machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
K=${K:-100}
MB=${MB:-32}
STALE=${STALE:-}
if [ -n "$STALE" ]; then
    export UPDATE_LOG_STALE=$STALE
    SEEDS=${SEEDS:-1 2 3}
else
    SEEDS=${SEEDS:-1 2 3 4 5}
fi
cmake -S "$repo" -B "$repo/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$repo/build" -j2 --target slda >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -I"$repo/include" "$here/update_log.c" "$repo/build/libslda.a" \
    -lrdkafka -lmsgpackc -lz -lm -lpthread $(pkg-config --libs icu-uc) -o "$T/update_log"

python3 "$here/reuters_text.py" "$shared/data/reuters21578/reuters21578.by-time.tsv.gz" \
    "$T/reuters.txt"
for s in $SEEDS; do
    echo "== KOS (UCI, fixed vocabulary), seed $s"
    "$T/update_log" uci "$shared/data/kos/docword.kos.txt" "$shared/data/kos/vocab.kos.txt" \
        "$K" "$MB" "$s" | tee -a "$T/kos.out" | grep -v '^RESULT'
    echo "== Reuters-21578 (text, open vocabulary, scratch words), seed $s"
    "$T/update_log" text "$T/reuters.txt" "$K" "$MB" "$s" | tee -a "$T/reuters.out" |
        grep -v '^RESULT'
done
python3 - "$T/kos.out" "$T/reuters.out" "$STALE" <<'PY'
import sys
stale = sys.argv[3]
for path, name in zip(sys.argv[1:3], ("KOS", "Reuters")):
    runs, cur = [], None
    for line in open(path):
        f = line.split()
        if f[:1] == ["RESULT"]:
            if f[1] == "train":
                cur = {}
                runs.append(cur)
            cur[f[1]] = (float(f[2]), float(f[3]))
    if stale:
        print(f"== {name}: perplexity change against train, mean over {len(runs)} seeds (min, max)")
        for arm in [k for k in runs[0] if k != "train"]:
            ch = [100 * (r[arm][1] / r["train"][1] - 1) for r in runs]
            print(f"  S={arm[5:]:4} {sum(ch) / len(ch):+7.2f}%  ({min(ch):+.2f}, {max(ch):+.2f})")
        continue
    print(f"== {name}: mean over {len(runs)} seeds")
    print(f"{'model':14} {'bytes/doc':>10} {'mean vs float32':>16} {'min':>8} {'max':>8}")
    for arm in runs[0]:
        if arm == "train" and runs[0][arm][1] == 0:
            continue  # UPDATE_LOG_BYTES: no train model
        ch = [100 * (r[arm][1] / r["float32"][1] - 1) for r in runs]
        bpd = sum(r[arm][0] for r in runs) / len(runs)
        print(f"{arm:14} {bpd:10.1f} {sum(ch) / len(ch):+15.3f}% {min(ch):+7.2f}% {max(ch):+7.2f}%")
PY
