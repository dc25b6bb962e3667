#!/usr/bin/env bash
# openvocab.sh - held-out perplexity of the open vocabulary against a fixed vocabulary of
# exactly the words the open run learned, on Reuters-21578, 20 Newsgroups and Jane Austen
# (K=50, 10% of the documents held out), and against a smaller vocab.capacity that still holds
# every word (it must not move the figure). Quality only: safe on a loaded machine.
#
# The comparison is made fair (docs/engine.md, "Open vocabulary"): the fixed vocabulary lists
# the open run's learned words in the open run's id order, so both runs read the same
# documents in the same order, with the same word order inside each document (so the same
# random draws and the same held-out split), and score the same held-out tokens (words the
# open run never trained on are not scored there, and are not in the fixed vocabulary). They
# differ only in what the open run cannot know yet: W grows with the stream and a word's row
# appears when the word does, while the fixed run smooths over the final W from the start.
#
# Corpora (read each data set's SOURCE.md in $SLDA_SHARED_DIR/data), one document a line:
#   reuters  title + body of every article of reuters21578.by-time.tsv.gz, in time order
#   20news   the body (after the headers) of every message of 20news-bydate.tar.gz, shuffled
#            with a fixed seed (the archive is ordered by newsgroup)
#   austen   the paragraphs (>= 40 characters) of the six novels, in publication order
#
# Environment:
#   STREAMLDA        the binary (default: build Release in SLDA_BUILD_DIR, default build/)
#   BASE_STREAMLDA   optional second binary (e.g. an older revision): its open and fixed
#                    figures are added as "before" columns
#   SLDA_SHARED_DIR  the shared directory (default ../shared beside the repository)
#   CORPORA          default "reuters 20news austen"
#   K                topics (default 50); HELDOUT: --heldout modulo (default 10)
#   SEEDS            training seeds (default "1 2 3"); the table shows the geometric mean
#                    of open/fixed over them and each seed's figures in the log
#   EXTRA_X          extra -X key=value settings, space separated
#   OUT              work directory (default a new temporary one; corpora are cached there)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
PY=/usr/bin/python3
CORPORA=${CORPORA:-"reuters 20news austen"}
K=${K:-50}
HELDOUT=${HELDOUT:-10}
SEEDS=${SEEDS:-"1 2 3"}
EXTRA_X=${EXTRA_X:-}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/openvocab.XXXXXX")}

die() { echo "openvocab: $*" >&2; exit 2; }

if [ -z "${STREAMLDA:-}" ]; then
    build=${SLDA_BUILD_DIR:-$repo/build}
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    fi
    cmake --build "$build" --target streamlda -j2 >/dev/null || die "build failed in $build"
    STREAMLDA=$build/streamlda
fi
[ -x "$STREAMLDA" ] || die "no binary at $STREAMLDA"
[ -x "$PY" ] || die "no $PY"
mkdir -p "$OUT/corpora"

# ---- corpora ----
"$PY" - "$shared" "$OUT/corpora" $CORPORA <<'PY'
import gzip, os, random, re, sys, tarfile
shared, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
ws = re.compile(r"\s+")
def write(name, docs):
    with open(os.path.join(out, name + ".txt"), "w", encoding="utf-8") as f:
        for d in docs:
            d = ws.sub(" ", d).strip()
            if d:
                f.write(d + "\n")
def reuters():
    with gzip.open(f"{shared}/data/reuters21578/reuters21578.by-time.tsv.gz", "rt", encoding="utf-8") as f:
        next(f)
        for line in f:
            p = line.rstrip("\n").split("\t")
            yield p[4] + " " + p[5]
def news20():
    docs = []
    with tarfile.open(f"{shared}/data/20news-bydate/20news-bydate.tar.gz") as tf:
        for m in sorted((m for m in tf.getmembers() if m.isfile()), key=lambda m: m.name):
            raw = tf.extractfile(m).read()
            try:
                txt = raw.decode("utf-8")
            except UnicodeDecodeError:
                txt = raw.decode("latin-1")
            txt = txt.replace("\r\n", "\n")
            i = txt.find("\n\n")
            docs.append(txt[i + 2:] if i >= 0 else "")
    random.Random(1).shuffle(docs)
    return docs
def austen():
    for name in ["sensesensibility", "prideprejudice", "mansfieldpark", "emma",
                 "northangerabbey", "persuasion"]:
        text = open(f"{shared}/data/janeausten/{name}.txt", encoding="utf-8").read()
        for p in re.split(r"\n\s*\n", text):
            if len(ws.sub(" ", p).strip()) >= 40:
                yield p
make = {"reuters": reuters, "20news": news20, "austen": austen}
for n in names:
    if n not in make:
        sys.exit("openvocab: unknown corpus %s" % n)
    if not os.path.exists(os.path.join(out, n + ".txt")):
        write(n, make[n]())
PY

field() { grep '^train ' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
vocab_size() { # words in a snapshot's vocabulary (held or not)
    "$PY" -c 'import msgpack, sys
d = open(sys.argv[1], "rb").read(); u = msgpack.Unpacker(raw=False); u.feed(d[12:-8])
print(next(u)["vocab_size"])' "$1"
}
xs=()
for kv in $EXTRA_X; do xs+=(-X "$kv"); done

# run BIN TAG CORPUS SEED: open run, its learned words, fixed run; prints "open fixed words"
run() {
    local bin=$1 tag=$2 c=$3 seed=$4 base="$OUT/$2.$3.$4"
    local common=(train -q -f text -k "$K" --heldout "$HELDOUT" -X "seed=$seed" "${xs[@]}")
    "$bin" "${common[@]}" -o "$base.slda" "$OUT/corpora/$c.txt" >"$base.open" 2>"$base.log" ||
        die "$tag $c seed $seed: open run failed: $(tail -n 2 "$base.log")"
    if [ "$tag" = new ]; then # exports hold exactly the words learned
        "$bin" export "$base.slda" --npy "$base.npy" --vocab "$base.words" 2>>"$base.log"
    else # an older export lists every word: take the rows marked ready
        "$PY" -c 'import msgpack, sys
d = open(sys.argv[1], "rb").read(); u = msgpack.Unpacker(raw=False); u.feed(d[12:-8]); next(u)
w = []
for o in u:
    if o.get("end"): break
    w += [(i, x) for i, x, r in zip(o["ids"], o["words"], o["ready"]) if r]
open(sys.argv[2], "w").write("".join(x + "\n" for _, x in sorted(w)))' "$base.slda" "$base.words"
    fi
    "$bin" "${common[@]}" -X "vocab.file=$base.words" "$OUT/corpora/$c.txt" >"$base.fixed" \
        2>>"$base.log" || die "$tag $c seed $seed: fixed run failed"
    echo "$(field perplexity "$base.open") $(field perplexity "$base.fixed") $(wc -l <"$base.words")"
}

echo "openvocab: $(date -u +%FT%TZ) K=$K heldout=1/$HELDOUT seeds='$SEEDS' EXTRA_X='$EXTRA_X'" \
     "rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?') binary=$STREAMLDA" \
     "${BASE_STREAMLDA:+base=$BASE_STREAMLDA} (work in $OUT)" >&2
results=$OUT/results.txt
: >"$results"
for c in $CORPORA; do
    for seed in $SEEDS; do
        read -r open fixed words < <(run "$STREAMLDA" new "$c" "$seed")
        # the same run with the capacity cut to the vocabulary's size, rounded up to 1024
        need=$(vocab_size "$OUT/new.$c.$seed.slda")
        cap=$(( (need + 1023) / 1024 * 1024 ))
        "$STREAMLDA" train -q -f text -k "$K" --heldout "$HELDOUT" -X "seed=$seed" "${xs[@]}" \
            -X "vocab.capacity=$cap" "$OUT/corpora/$c.txt" >"$OUT/cap.$c.$seed" 2>/dev/null
        capp=$(field perplexity "$OUT/cap.$c.$seed")
        bo=- bf=-
        if [ -n "${BASE_STREAMLDA:-}" ]; then
            read -r bo bf _ < <(run "$BASE_STREAMLDA" base "$c" "$seed")
        fi
        docs=$(field docs "$OUT/new.$c.$seed.open") toks=$(field tokens "$OUT/new.$c.$seed.open")
        echo "openvocab: $c seed $seed: open $open fixed $fixed (words $words, capacity $cap:" \
             "$capp) before: open $bo fixed $bf" >&2
        echo "$c $seed $docs $toks $words $open $fixed $cap $capp $bo $bf" >>"$results"
    done
done

echo
echo "Held-out perplexity (document completion), K=$K, documents with XXH3(id) % $HELDOUT == 0" \
     "held out, one pass, seeds $SEEDS${EXTRA_X:+, -X $EXTRA_X}; open = default open vocabulary" \
     "(capacity 131072), fixed = vocab.file of the open run's learned words, capacity = open run" \
     "with vocab.capacity just above its vocabulary; ratios are geometric means over the seeds"
awk '
    function gm(s, n) { return n ? exp(s / n) : 0 }
    {
        c = $1; if (!(c in n)) order[++m] = c
        n[c]++; docs[c] = $3; toks[c] = $4; words[c] += $5
        lo[c] += log($6); lf[c] += log($7); r[c] += log($6 / $7)
        same[c] += ($6 == $9)
        if ($10 != "-") { bn[c]++; blo[c] += log($10); blf[c] += log($11); br[c] += log($10 / $11) }
    }
    END {
        printf "%-8s %7s %9s %7s %9s %9s %7s %9s %12s %12s %7s\n", "corpus", "docs", "tokens",
               "words", "open", "fixed", "open/fx", "cap same", "before open", "before fixed", "before"
        for (i = 1; i <= m; i++) {
            c = order[i]
            printf "%-8s %7d %9d %7.0f %9.1f %9.1f %7.4f %6d/%-2d", c, docs[c], toks[c],
                   words[c] / n[c], gm(lo[c], n[c]), gm(lf[c], n[c]), gm(r[c], n[c]), same[c], n[c]
            if (bn[c]) printf " %12.1f %12.1f %7.4f\n", gm(blo[c], bn[c]), gm(blf[c], bn[c]), gm(br[c], bn[c])
            else printf " %12s %12s %7s\n", "-", "-", "-"
        }
    }' "$results"
echo "raw results: $results"
