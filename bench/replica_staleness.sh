#!/usr/bin/env bash
# replica_staleness.sh - what updates.staleness costs in quality (docs/replication.md): held-out
# perplexity of a model whose update records' local halves read the model S records behind
# (the bound of a replica with updates.staleness=S, held all the time), against slda_model_train
# (global.stale=0), one pass, on KOS (UCI) and Reuters-21578 (text).
#
#   bench/replica_staleness.sh    env: STALE ("0 1 4 8 16"), K (100), MB (32), SEEDS ("1 2 3"),
#                                 SLDA_SHARED_DIR
#
# bench/update_log.c with UPDATE_LOG_STALE; quality only (safe on a loaded machine). Prints
# per seed, then the mean change over the seeds per S.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
K=${K:-100}
MB=${MB:-32}
SEEDS=${SEEDS:-1 2 3}
export UPDATE_LOG_STALE=${STALE:-0 1 4 8 16}
cmake -S "$repo" -B "$repo/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$repo/build" -j2 --target slda >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -I"$repo/include" "$here/update_log.c" "$repo/build/libslda.a" \
    -lrdkafka -lmicrohttpd -lmsgpackc -lz -lm -lpthread -o "$T/update_log"
python3 - "$shared/data/reuters21578/reuters21578.by-time.tsv.gz" "$T/reuters.txt" <<'PY'
import gzip, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w") as o:
    next(f)
    for line in f:
        p = line.rstrip("\n").split("\t")
        text = (p[4] + " " + p[5]).strip()
        if text:
            o.write(text + "\n")
PY
for s in $SEEDS; do
    echo "== KOS, seed $s"
    "$T/update_log" uci "$shared/data/kos/docword.kos.txt" "$shared/data/kos/vocab.kos.txt" \
        "$K" "$MB" "$s" | tee -a "$T/kos.out" | grep -v '^RESULT'
    echo "== Reuters-21578, seed $s"
    "$T/update_log" text "$T/reuters.txt" "$K" "$MB" "$s" | tee -a "$T/reuters.out" |
        grep -v '^RESULT'
done
python3 - "$T/kos.out" "$T/reuters.out" <<'PY'
import sys
for path, name in zip(sys.argv[1:], ("KOS", "Reuters")):
    runs, cur = [], None
    for line in open(path):
        f = line.split()
        if f[:1] == ["RESULT"]:
            if f[1] == "train":
                cur = {}
                runs.append(cur)
            cur[f[1]] = float(f[3])
    print(f"== {name}: perplexity change against train, mean over {len(runs)} seeds (min, max)")
    for arm in [k for k in runs[0] if k != "train"]:
        ch = [100 * (r[arm] / r["train"] - 1) for r in runs]
        print(f"  S={arm[5:]:4} {sum(ch) / len(ch):+7.2f}%  ({min(ch):+.2f}, {max(ch):+.2f})")
PY
