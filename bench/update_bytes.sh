#!/usr/bin/env bash
# update_bytes.sh - bytes per document of update records (docs/replication.md, "Measured"), this
# tree against another revision, at K=100 and K=1000 on KOS and Reuters-21578.
#
#   bench/update_bytes.sh       env: BASE (a git revision, e.g. main: its records are measured
#                               too, its library and bench/update_log.c built from `git archive`
#                               in a scratch directory), K_LIST ("100 1000"), MB (32), SEED (1),
#                               THIN ("0.001 0.004": shares for slda_update_thin), CONF
#                               ("births=false", as docs/replication.md's and issue 27's figures)
#
# bench/update_log.c (UPDATE_LOG_BYTES=1: no slda_model_train model) on KOS (UCI, fixed
# vocabulary) and Reuters-21578 (title + body, open vocabulary, scratch words), minibatch MB, one
# pass, every tenth document held out. Bytes are slda_update_encode's, per document trained;
# the perplexity beside them is one seed's, against float32 (bench/update_log.sh over seeds 1-5
# is the quality measurement). No timing: safe on a loaded machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
MB=${MB:-32}
SEED=${SEED:-1}
K_LIST=${K_LIST:-100 1000}
export UPDATE_LOG_CONF=${CONF:-births=false} UPDATE_LOG_BYTES=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# build TREE LIBDIR OUT: the library of TREE (in LIBDIR) and TREE's bench/update_log.c
build() {
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$2" -j2 --target slda >/dev/null
    cc -O2 -std=c11 -D_GNU_SOURCE -I"$1/include" "$1/bench/update_log.c" "$2/libslda.a" \
        -lrdkafka -lmsgpackc -lz -lm -lpthread $(pkg-config --libs icu-uc) -o "$3"
}
build "$repo" "$repo/build" "$T/after"
arms="after"
if [ -n "${BASE:-}" ]; then
    mkdir "$T/base"
    git -C "$repo" archive "$BASE" | tar -x -C "$T/base"
    build "$T/base" "$T/base/build" "$T/before"
    arms="before after"
fi
python3 "$here/reuters_text.py" "$shared/data/reuters21578/reuters21578.by-time.tsv.gz" \
    "$T/reuters.txt"
for K in $K_LIST; do
    for arm in $arms; do
        thin=""
        [ "$arm" = after ] && thin=${THIN-0.001 0.004}
        UPDATE_LOG_THIN=$thin "$T/$arm" uci "$shared/data/kos/docword.kos.txt" \
            "$shared/data/kos/vocab.kos.txt" "$K" "$MB" "$SEED" |
            sed -n "s/^RESULT /KOS $K $arm /p" >>"$T/results"
        UPDATE_LOG_THIN=$thin "$T/$arm" text "$T/reuters.txt" "$K" "$MB" "$SEED" |
            sed -n "s/^RESULT /Reuters $K $arm /p" >>"$T/results"
    done
done
python3 - "$T/results" "${BASE:-}" "$MB" "$SEED" "$UPDATE_LOG_CONF" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"bytes per trained document; minibatch {sys.argv[3]}, seed {sys.argv[4]}, {sys.argv[5]}")
print(f"{'corpus':8} {'K':>5} {'records':18} {'bytes/doc':>10} {'vs before':>10} {'perplexity vs float32':>22}")
ref, f32 = {}, {}
for corpus, K, arm, enc, b, p in rows:
    if enc == "train":
        continue
    if enc == "float32":
        f32[(corpus, K, arm)] = float(p)
    if arm == "before":
        ref[(corpus, K, enc)] = float(b)
for corpus, K, arm, enc, b, p in rows:
    if enc == "train":
        continue
    name = f"{enc} ({sys.argv[2]})" if arm == "before" else enc
    r = ref.get((corpus, K, enc))
    vs = f"{float(b) / r:9.3f}x" if arm == "after" and r else ""
    pc = 100 * (float(p) / f32[(corpus, K, arm)] - 1)
    print(f"{corpus:8} {K:>5} {name:18} {float(b):10.1f} {vs:>10} {pc:+21.2f}%")
PY
