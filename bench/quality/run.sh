#!/bin/bash
# run.sh - the whole quality benchmark: one streaming pass and five passes against a converged
# batch collapsed Gibbs sampler and gensim, on KOS, AP, Reuters-21578 and 20 Newsgroups.
#
#   bench/quality/run.sh [OUT]                    (default OUT: build/quality)
#
# Steps (each result is kept in OUT, and a step whose output exists is not run again, so an
# interrupted run resumes; delete OUT/<corpus>/gibbs.npy to redo a reference):
#   1. setup_venv.sh: numpy, scipy, gensim, tomotopy from PyPI into VENV (build/quality-venv);
#   2. prepare.py: the fixed splits (10% of documents held out, seed 1) in OUT/data/<corpus>;
#   3. gibbs_ref.py: tomotopy collapsed Gibbs, K=100, alpha = eta = 0.1, GIBBS_ITERS iterations
#      (default 1000) then the mean phi of 10 samples -> OUT/data/<corpus>/gibbs.npy, and
#      OUT/ref.json (its held-out perplexity per corpus);
#   4. OWN_GIBBS=1: streamlda's own batch CGS (`train --batch -X local=cgs`, OWN_ITERS, default
#      500) on each training set, its perplexity trace in OUT/own_cgs_<corpus>.log (convergence
#      check; batch mode scores its own 10% of withheld tokens, not this split);
#   5. gensim_peer.py with 1 and 5 passes, scored by evaluate.py (OUT/peer_<corpus>_<passes>.txt);
#   6. measure.py: streamlda one pass and five passes at its defaults, and the same with
#      BEFORE_X (the previous defaults as -X settings; default replay=off, one visit per
#      document as before second visits existed, bit for bit; global.rows=decay gives the
#      global step before global.rows existed) over SEEDS (default 1,2,3);
#   7. the table (markdown) on standard output and in OUT/table.md.
# Knobs: STREAMLDA (binary; default: a Release build in SLDA_BUILD_DIR, default build/),
# CORPORA (kos,ap,reuters,20news), SEEDS, GIBBS_ITERS, OWN_GIBBS, OWN_ITERS, BEFORE_X, VENV.
# Quality figures do not depend on the machine's load; tokens/s do: quote them from a quiet
# machine only (uptime's load average well below 1 on 2 cores), and with threads=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/quality}
corpora=${CORPORA:-kos,ap,reuters,20news}
seeds=${SEEDS:-1,2,3}
gibbs_iters=${GIBBS_ITERS:-1000}
before_x=${BEFORE_X-replay=off}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -z "${STREAMLDA:-}" ]; then
    bdir=${SLDA_BUILD_DIR:-$repo/build}
    cmake -S "$repo" -B "$bdir" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$bdir" -j2 --target streamlda >/dev/null
    STREAMLDA=$bdir/streamlda
fi
venv=${VENV:-$repo/build/quality-venv}
bash "$here/setup_venv.sh" "$venv"
py=$venv/bin/python
echo "run: $(date -u +%FT%TZ) $(uname -n) load: $(cut -d' ' -f1-3 /proc/loadavg)" \
     "revision: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo ?) binary: $STREAMLDA" >&2

[ -f "$out/data/.done" ] || { "$py" "$here/prepare.py" "$out/data" && touch "$out/data/.done"; }

IFS=, read -r -a list <<< "$corpora"
for c in "${list[@]}"; do
    if [ ! -f "$out/data/$c/gibbs.npy" ]; then
        "$py" "$here/gibbs_ref.py" "$out/data/$c" "$out/data/$c/gibbs.npy" \
            --iterations "$gibbs_iters" | tee "$out/gibbs_$c.log" >&2
    fi
    if [ "${OWN_GIBBS:-0}" = 1 ] && [ ! -f "$out/own_cgs_$c.log" ]; then
        "$STREAMLDA" train --batch -X local=cgs -X topics=100 -X seed=1 \
            --iterations "${OWN_ITERS:-500}" -e 50 "$out/data/$c/docword.train.txt" \
            2> "$out/own_cgs_$c.log" >> "$out/own_cgs_$c.log"
    fi
done
"$py" - "$out" "$corpora" <<'EOF'
import json, re, sys
out, corpora = sys.argv[1], sys.argv[2].split(",")
ref = {}
for c in corpora:
    with open(f"{out}/gibbs_{c}.log") as f:
        m = re.search(r"perplexity_last=([\d.]+) perplexity_avg=([\d.]+)", f.read())
    ref[c] = float(m.group(2))
    ref[c + ".last"] = float(m.group(1))
with open(f"{out}/ref.json", "w") as f:
    json.dump(ref, f, indent=1)
EOF

res=$out/results.txt
: > "$res"
for c in "${list[@]}"; do
    for p in 1 5; do
        f=$out/peer_${c}_$p.txt
        if [ ! -s "$f" ]; then
            line=$("$py" "$here/gensim_peer.py" "$out/data/$c" "$out/gensim_$c.npy" --passes $p)
            perp=$("$py" "$here/evaluate.py" "$out/data/$c" "$out/gensim_$c.npy")
            echo "peer corpus=$c passes=$p $line $perp" > "$f"
        fi
        tee -a "$res" < "$f" >&2
    done
done
bx=()
for kv in $before_x; do bx+=(-X "$kv"); done
for p in 1 5; do
    "$py" "$here/measure.py" "$out/data" --streamlda "$STREAMLDA" --corpora "$corpora" \
        --seeds "$seeds" --ref "$out/ref.json" --passes $p --label before "${bx[@]}" \
        | tee -a "$res" >&2
done
for p in 1 5; do
    "$py" "$here/measure.py" "$out/data" --streamlda "$STREAMLDA" --corpora "$corpora" \
        --seeds "$seeds" --ref "$out/ref.json" --passes $p --label after | tee -a "$res" >&2
done
"$py" "$here/table.py" "$out" "$corpora" | tee "$out/table.md"
