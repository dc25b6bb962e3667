#!/usr/bin/env bash
# 0080-topic_births.sh - births, retirement and merges of topics (src/engine/births.c) on
# synthetic streams whose truth is known (bench/shift/gen.py, matched by bench/shift/match.py):
#  - 5 topics, then from document 5000 on 70% of documents from 5 new topics: with births every
#    true topic, old and new, is matched by a learned topic within L1 0.3 at K=15 (without
#    births the new topics are not: L1 > 0.5, the engine's known failure);
#  - the same with new topics over the old topics' words (gen.py --shared), K=10: every true topic
#    within L1 0.2 (under global.rows=counts the running count of each word's row total once
#    held the old frequencies and every topic ended 0.23-0.40 away; births.c "5. Row totals");
#  - a stream that does not change gives no births;
#  - a stream whose old topics stop retires dead topics;
#  - the events do not depend on the thread count;
#  - the same on the sparse path (local.sparse=on, docs/engine.md "The sparse path": its own
#    birth scores and column moves of its summed entries).
set -u
. "$(dirname "$0")/checks.sh"
SRC=${SLDA_SOURCE_DIR:?}
GEN="$SRC/bench/shift/gen.py"
MATCH="$SRC/bench/shift/match.py"

python3 "$GEN" --docs 10000 --shift 5000 "$T/shift" && ok || fail "gen shift"
python3 "$GEN" --docs 10000 --shift 5000 --shared "$T/shared" && ok || fail "gen shared"
python3 "$GEN" --docs 5000 --stationary "$T/flat" && ok || fail "gen stationary"
python3 "$GEN" --docs 10000 --shift 3000 --new-share 1.0 "$T/gone" && ok || fail "gen gone"

learn() { # learn NAME OUT [-X ...]: train, export, match against the truth
    local name=$1 out=$2
    shift 2
    "$S" train -q -k 15 "$@" -o "$T/$out.slda" "$T/$name.txt" >"$T/$out.sum" 2>"$T/$out.err" &&
        ok || fail "train $out: $(cat "$T/$out.err")"
    "$S" export "$T/$out.slda" --npy "$T/$out.npy" --vocab "$T/$out.voc" && ok || fail "export $out"
    python3 "$MATCH" "$T/$name.truth" "$T/$out.npy" "$T/$out.voc" >"$T/$out.match"
}

# 1. every topic found with births; new topics missed without
learn shift with -X births=true
if ! python3 "$MATCH" "$T/shift.truth" "$T/with.npy" "$T/with.voc" --max-l1 0.3 >/dev/null; then
    fail "births=true: a true topic is farther than L1 0.3:"
    cat "$T/with.match" >&2
else
    ok
fi
grep -q '^topics births=[1-9]' "$T/with.err" && ok || fail "births=true made no birth: $(cat "$T/with.err")"
learn shift without -X births=false
far=$(awk '$1 == "new" { split($4, a, "="); if (a[2] + 0 > 0.5) n++ } END { print n + 0 }' \
      "$T/without.match")
[ "$far" -ge 3 ] && ok || fail "births=false found the new topics (far: $far), the test shows nothing"
! grep -q '^topics ' "$T/without.err" && ok || fail "births=false prints topic counts: $(grep '^topics ' "$T/without.err")"
! grep -q '^topics ' "$T/with.sum" && ok || fail "topic counts on standard output: $(grep '^topics ' "$T/with.sum")"

# 1b. new topics over the old words: found, and the old ones kept
"$S" train -q -k 10 -X births=true -o "$T/sh.slda" "$T/shared.txt" >/dev/null 2>"$T/sh.err" &&
    ok || fail "train shared: $(cat "$T/sh.err")"
"$S" export "$T/sh.slda" --npy "$T/sh.npy" --vocab "$T/sh.voc" && ok || fail "export shared"
if ! python3 "$MATCH" "$T/shared.truth" "$T/sh.npy" "$T/sh.voc" --max-l1 0.2 >"$T/sh.match"; then
    fail "shared words: a true topic is farther than L1 0.2:"
    cat "$T/sh.match" "$T/sh.err" >&2
else
    ok
fi

# 2. a stream that does not change: no births
"$S" train -q -k 15 -X births=true "$T/flat.txt" >"$T/flat.sum" 2>"$T/flat.err" && ok || fail "train flat"
grep -q '^topics births=0 ' "$T/flat.err" && ok || fail "stationary stream: $(cat "$T/flat.err")"

# 3. old topics stop: dead topics are retired, and said so
"$S" train -q -k 10 -X births=true "$T/gone.txt" >"$T/gone.sum" 2>"$T/gone.err" && ok || fail "train gone"
grep -q '^topics .* deaths=[1-9]' "$T/gone.err" && ok || fail "no topic retired: $(cat "$T/gone.err")"
grep -q '^topic death topic=' "$T/gone.err" && ok || fail "no death event on stderr: $(cat "$T/gone.err")"

# 4. deterministic: the same events and model with 2 threads as with 1 (the run of section 1)
"$S" train -q -k 15 -X births=true -X threads=2 -o "$T/th2.slda" "$T/shift.txt" \
    >/dev/null 2>"$T/th2.err" && ok || fail "train threads=2"
"$S" export "$T/th2.slda" --npy "$T/th2.npy" && ok || fail "export threads=2"
grep -q '^topic birth' "$T/with.err" && ok || fail "no birth event on stderr"
cmp -s "$T/with.err" "$T/th2.err" && ok || fail "events differ between threads=1 and 2"
cmp -s "$T/with.npy" "$T/th2.npy" && ok || fail "models differ between threads=1 and 2"

# 5. the sparse path: births find the new topics, the same with 2 threads as with 1
learn shift sparse -X births=true -X local.sparse=on
# (the new topics within L1 0.3 as above; the old within 0.5: at K=15 the sparse path splits two
# of them between topics with births and without, 0.31-0.46; it is made for hundreds of topics)
far=$(awk '{ split($4, a, "="); l = a[2] + 0; if (($1 == "new" && l > 0.3) || l > 0.5) n++ }
           END { print n + 0 }' "$T/sparse.match")
if [ "$far" != 0 ]; then
    fail "local.sparse=on: $far true topic(s) too far:"
    cat "$T/sparse.match" >&2
else
    ok
fi
grep -q '^topics births=[1-9]' "$T/sparse.err" && ok || fail "sparse: no birth: $(cat "$T/sparse.err")"
"$S" train -q -k 15 -X births=true -X local.sparse=on -X threads=2 -o "$T/sp2.slda" \
    "$T/shift.txt" >/dev/null 2>"$T/sp2.err" && ok || fail "train sparse threads=2"
"$S" export "$T/sp2.slda" --npy "$T/sp2.npy" && ok || fail "export sparse threads=2"
cmp -s "$T/sparse.err" "$T/sp2.err" && ok || fail "sparse: events differ between threads=1 and 2"
cmp -s "$T/sparse.npy" "$T/sp2.npy" && ok || fail "sparse: models differ between threads=1 and 2"

checks_done 0080-topic_births
