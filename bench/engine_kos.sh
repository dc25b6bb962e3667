#!/usr/bin/env bash
# engine_kos.sh - streamlda's stream-mode speed and quality on KOS against gensim, in one run:
# a 90/10 document split with document completion on the held-out 10% (bench/kos_split.py),
# gensim's LdaModel (bench/peers.py) at K=100 with 1 and 5 passes, and streamlda with each
# local step (one pass, threads=1) at each K plus the default hybrid with 5 passes. Every
# streamlda configuration runs REPEAT times: the table shows the median tokens/s and
# perplexity and the largest peak RSS. It ends with the two verdicts: default hybrid at K=100,
# one pass, >= 1,000,000 tokens/s, and its perplexity <= gensim's five-pass perplexity.
# Not for a shared machine: run it when nothing else is using the cores.
#
# Environment:
#   STREAMLDA       the binary; when unset: build (cmake Release) in SLDA_BUILD_DIR
#                   (default build/ in the repository) and use SLDA_BUILD_DIR/streamlda
#   BUILD           0 = do not build even when STREAMLDA is unset (default 1)
#   SLDA_SHARED_DIR the shared directory holding data/kos (default: ../shared beside the repo)
#   K_LIST          topic counts for streamlda (default "10 100")
#   VARIANTS        local steps run with one pass (default "cgs cvb0 cvb svb cvb0+cgs cvb+cgs svb+cgs")
#   DEFAULT_PASSES  passes of the extra default-hybrid run (default 5; 0 = skip it)
#   REPEAT          runs per streamlda configuration (default 3)
#   EXTRA_X         extra streamlda properties, space separated key=value (e.g. "rho.kappa=0.6");
#                   they come after topics/alpha/eta/threads/seed and so can override them
#   SEED            seed of streamlda and the peers (default 1; the split always uses seed 1)
#   PEERS           comma list of peers.py peers (gensim, sklearn; default gensim); 0 or none = skip
#   PEER_K          K of the peer runs (default 100)
#   PEER_PASSES     passes of the peer runs (default "1 5"); the largest is the perplexity reference
#   PEER_REPEAT     runs per peer configuration (default REPEAT)
#   CHUNKSIZE       peer documents per update (default 256; streamlda's minibatch.docs default is 32)
#   TARGET_TPS      speed target in tokens/s (default 1000000); TARGET_K the K of both targets (100)
#   OUT             directory for the split, logs and raw results (default: a new temporary one)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
PY=/usr/bin/python3
K_LIST=${K_LIST:-"10 100"}
VARIANTS=${VARIANTS:-"cgs cvb0 cvb svb cvb0+cgs cvb+cgs svb+cgs"}
DEFAULT_PASSES=${DEFAULT_PASSES:-5}
REPEAT=${REPEAT:-3}
EXTRA_X=${EXTRA_X:-}
SEED=${SEED:-1}
PEERS=${PEERS:-gensim}
PEER_K=${PEER_K:-100}
PEER_PASSES=${PEER_PASSES:-"1 5"}
PEER_REPEAT=${PEER_REPEAT:-$REPEAT}
CHUNKSIZE=${CHUNKSIZE:-256}
TARGET_TPS=${TARGET_TPS:-1000000}
TARGET_K=${TARGET_K:-100}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/engine_kos.XXXXXX")}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

die() { echo "engine_kos: $*" >&2; exit 2; }

# ---- the binary ----
if [ -z "${STREAMLDA:-}" ]; then
    build=${SLDA_BUILD_DIR:-$repo/build}
    if [ "${BUILD:-1}" != 0 ]; then
        if [ ! -f "$build/CMakeCache.txt" ]; then
            echo "engine_kos: configuring a Release build in $build" >&2
            cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
        fi
        cmake --build "$build" --target streamlda -j2 >/dev/null || die "build failed in $build"
    fi
    btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
    [ "$btype" = Release ] || echo "engine_kos: WARNING: $build is a '${btype:-unset}' build, not Release" >&2
    STREAMLDA=$build/streamlda
fi
[ -x "$STREAMLDA" ] || die "no binary at $STREAMLDA (set STREAMLDA or SLDA_BUILD_DIR)"
[ -r "$shared/data/kos/docword.kos.txt" ] || die "no KOS corpus in $shared/data/kos (set SLDA_SHARED_DIR)"
[ -x "$PY" ] || die "no $PY"

# ---- peak memory: /usr/bin/time (Debian package `time`), else getrusage of the child ----
measure() { # measure RSSFILE CMD...: run CMD, write its peak RSS in KiB to RSSFILE
    local rssfile=$1
    shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %M -o "$rssfile" "$@"
    else
        "$PY" -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$rssfile" "$@"
    fi
}

median() { # median of the numbers on standard input ("-" if none)
    sort -g | awk 'NF { v[++n] = $1 } END {
        if (n == 0) print "-"
        else if (n % 2) print v[(n + 1) / 2]
        else printf "%.10g\n", (v[n / 2] + v[n / 2 + 1]) / 2 }'
}

words() { # words "A B C": one word a line
    tr ' ' '\n' <<<"$1"
}

field() { # field NAME LINE: value of NAME=... in a summary line
    echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

mkdir -p "$OUT"
split=$OUT/split
"$PY" "$here/kos_split.py" "$split" --input "$shared/data/kos/docword.kos.txt"

xargs_common=(-X "seed=$SEED" -X threads=1 -X alpha=0.1 -X eta=0.1)
for kv in $EXTRA_X; do xargs_common+=(-X "$kv"); done
# The default local step: what -X dump reports (environment and EXTRA_X applied), else the
# built-in default from -X list overridden by a local= in EXTRA_X, else cvb0+cgs.
default_local=$("$STREAMLDA" train "${xargs_common[@]}" -X dump 2>/dev/null | sed -n 's/^local=//p' || true)
if [ -z "$default_local" ]; then
    default_local=$("$STREAMLDA" train -X list 2>/dev/null | awk '$1 == "local" { print $3 }' || true)
    for kv in $EXTRA_X; do
        case $kv in local=*) default_local=${kv#local=} ;; esac
    done
fi
default_local=${default_local:-cvb0+cgs}

echo "engine_kos: $(date -u +%FT%TZ) $(uname -m) nproc=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg)" \
     "rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?') binary=$STREAMLDA" >&2
echo "engine_kos: K_LIST='$K_LIST' VARIANTS='$VARIANTS' REPEAT=$REPEAT default local=$default_local" \
     "EXTRA_X='$EXTRA_X' PEERS=$PEERS (logs in $OUT)" >&2

# ---- peers ----
peers_out=$OUT/peers.txt
: >"$peers_out"
case $PEERS in 0 | none | "") PEERS="" ;; esac
for peer in ${PEERS//,/ }; do
    for p in $PEER_PASSES; do
        echo "engine_kos: peer=$peer K=$PEER_K passes=$p x$PEER_REPEAT" >&2
        if ! "$PY" "$here/peers.py" "$split" --peers "$peer" --topics "$PEER_K" --passes "$p" \
            --repeat "$PEER_REPEAT" --chunksize "$CHUNKSIZE" --seed "$SEED" \
            >>"$peers_out" 2>"$OUT/peer_${peer}_p$p.log"; then
            echo "engine_kos: peer=$peer passes=$p failed:" >&2
            tail -n 5 "$OUT/peer_${peer}_p$p.log" >&2
        fi
    done
done

# ---- streamlda ----
# results.txt: label local K passes tokens_per_s perplexity rss_mib seconds runs_ok
results=$OUT/results.txt
: >"$results"
failures=0
run_config() { # run_config LABEL LOCAL K PASSES [-X local=...]
    local label=$1 local=$2 k=$3 passes=$4
    shift 4
    local tag=${label//+/_}_k${k}_p$passes tps="" perp="" rss="" secs="" ok=0 r line
    for ((r = 1; r <= REPEAT; r++)); do
        echo "engine_kos: $label K=$k passes=$passes run $r/$REPEAT" >&2
        if ! measure "$OUT/$tag.$r.rss" "$STREAMLDA" train -f uci -q -p "$passes" -X "topics=$k" \
            "${xargs_common[@]}" "$@" --test-obs "$split/docword.testobs.txt" \
            --test-held "$split/docword.testheld.txt" "$split/docword.train.txt" \
            >"$OUT/$tag.$r.out" 2>"$OUT/$tag.$r.log"; then
            echo "engine_kos: $label K=$k passes=$passes run $r failed:" >&2
            tail -n 5 "$OUT/$tag.$r.log" >&2
            continue
        fi
        line=$(grep '^train ' "$OUT/$tag.$r.out" | tail -n 1)
        [ -n "$line" ] || { echo "engine_kos: $tag.$r: no summary line" >&2; continue; }
        [ "$(field errors "$line")" = 0 ] || echo "engine_kos: $tag.$r: $line (errors)" >&2
        [ "$(field test_docs "$line")" != 0 ] || echo "engine_kos: $tag.$r: no test documents scored" >&2
        tps+="$(field tokens_per_s "$line") "
        perp+="$(field perplexity "$line") "
        secs+="$(field seconds "$line") "
        rss+="$(tail -n 1 "$OUT/$tag.$r.rss") "
        ok=$((ok + 1))
    done
    [ "$ok" -eq "$REPEAT" ] || failures=$((failures + 1))
    local mrss
    mrss=$(words "$rss" | sort -g | tail -n 1)
    echo "$label $local $k $passes $(words "$tps" | median) $(words "$perp" | median)" \
         "$(awk -v k="$mrss" 'BEGIN { print k == "" ? "-" : sprintf("%.1f", k / 1024) }')" \
         "$(words "$secs" | median) $ok" >>"$results"
}

for k in $K_LIST; do
    for v in $VARIANTS; do
        run_config "$v" "$v" "$k" 1 -X "local=$v"
    done
    case " $VARIANTS " in
        *" $default_local "*) ;;
        *) run_config "default" "$default_local" "$k" 1 ;;
    esac
    if [ "$DEFAULT_PASSES" -gt 0 ]; then
        run_config "default" "$default_local" "$k" "$DEFAULT_PASSES"
    fi
done

# ---- table and verdicts ----
ref_passes=$(words "$PEER_PASSES" | sort -g | tail -n 1)
echo
echo "KOS 90/10 split ($split), document completion on the held-out 10%, alpha=eta=0.1, seed $SEED," \
     "streamlda threads=1${EXTRA_X:+, -X $EXTRA_X}, peers chunksize=$CHUNKSIZE"
echo "medians of $REPEAT streamlda runs and $PEER_REPEAT peer runs; speed ratio = tokens/s over" \
     "gensim's at the same K and passes; perplexity ratio over gensim's $ref_passes-pass at the same K"
awk -v peers="$peers_out" -v ref="$ref_passes" -v rep="$REPEAT" -v dl="$default_local" -v tk="$TARGET_K" \
    -v target="$TARGET_TPS" '
    function ratio(a, b) { return (a == "-" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
    BEGIN {
        while ((getline line < peers) > 0) {
            n = split(line, kv, " ")
            delete f
            for (i = 1; i <= n; i++) { split(kv[i], x, "="); f[x[1]] = x[2] }
            np++
            pname[np] = f["peer"]; pk[np] = f["K"]; pp[np] = f["passes"]
            ptps[np] = f["tokens_per_s"]; pperp[np] = f["perplexity"]; prss[np] = f["peak_rss_mib"]
            if (f["peer"] == "gensim") {
                gtps[f["K"], f["passes"]] = f["tokens_per_s"]
                if (f["passes"] == ref) gperp[f["K"]] = f["perplexity"]
            }
        }
        printf "%-22s %4s %6s %12s %11s %9s %9s %9s\n", "variant", "K", "passes", "tokens/s",
               "perplexity", "RSS MiB", "speed/gs", "perp/gs" ref
        for (i = 1; i <= np; i++)
            printf "%-22s %4s %6s %12.0f %11.2f %9s %9s %9s\n", "peer:" pname[i], pk[i], pp[i],
                   ptps[i], pperp[i], prss[i], ratio(ptps[i], gtps[pk[i], pp[i]]),
                   ratio(pperp[i], gperp[pk[i]])
    }
    {
        label = $1 == "default" ? "default(" $2 ")" : $1
        if ($9 == 0) { printf "%-22s %4s %6s %12s\n", label, $3, $4, "failed"; next }
        note = ($9 + 0 < rep + 0) ? " (" $9 " runs ok)" : ""
        printf "%-22s %4s %6s %12.0f %11.2f %9s %9s %9s%s\n", label, $3, $4, $5, $6, $7,
               ratio($5, gtps[$3, $4]), ratio($6, gperp[$3]), note
        if ($2 == dl && $3 == tk && $4 == 1) { dtps = $5; dperp = $6 }
    }
    END {
        print ""
        if (dtps == "" || dtps == "-") {
            printf "target speed:   not measured (default hybrid %s at K=%s, 1 pass, not run)\n", dl, tk
        } else {
            met = (dtps + 0 >= target + 0)
            need = met ? "" : sprintf(" (needs %.2fx)", target / dtps)
            printf "target speed:   default hybrid %s K=%s 1 pass: %.0f tokens/s vs target %.0f: %s by %+.1f%%%s\n",
                   dl, tk, dtps, target, met ? "MET" : "MISSED", 100 * (dtps / target - 1), need
        }
        g = gperp[tk]
        if (dperp == "" || dperp == "-" || g == "") {
            printf "target quality: not measured (needs default hybrid at K=%s and gensim %s-pass at K=%s)\n",
                   tk, ref, tk
        } else {
            met = (dperp + 0 <= g + 0)
            pct = met ? 100 * (1 - dperp / g) : 100 * (dperp / g - 1)
            printf "target quality: default hybrid %s K=%s 1 pass perplexity %.2f vs gensim %s-pass %.2f: %s (%.1f%% %s)\n",
                   dl, tk, dperp, ref, g, met ? "MET" : "MISSED", pct, met ? "lower" : "higher"
        }
    }' "$results"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg); raw results: $results $peers_out"
[ "$failures" -eq 0 ] || { echo "engine_kos: $failures configuration(s) had failed runs" >&2; exit 1; }
