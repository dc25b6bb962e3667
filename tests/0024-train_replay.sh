#!/usr/bin/env bash
# 0024-train_replay.sh - when `streamlda train` gives documents their second visit (replay,
# docs/engine.md "Second visits"), seen in the update counts its snapshots are named by, and in
# what the model and the program report: each snapshot's header (its update count t and its
# documents: a second visit is an update that adds no document), the last progress line's
# update count and the summary's documents and tokens (second visits count as neither), and the
# model itself (a file that fits trains as replay=off with a first visit's sweeps until the
# input's end, and its second visits then move the topic totals NZ):
# - files whose documents all fit in replay.docs: no second visit before the input's end
#   (each then sees the model of the whole input), then every minibatch once more;
# - standard input (a stream of unknown length) and files that do not fit: the stream rule,
#   a document that came after n others comes back after about 2n (at most replay.docs later).
# 640 documents, 20 minibatches of 32, a snapshot every 320 documents and one at the end.
set -u
. "$(dirname "$0")/checks.sh"
SRC=${SLDA_SOURCE_DIR:?}
PY=/usr/bin/python3

"$PY" - "$T/docs.txt" "$(dirname "$0")" <<'EOF'
import random, sys
sys.path.insert(0, sys.argv[2])
from corpus_words import letters  # noqa: E402
rng = random.Random(3)
themes = [[f"t{letters(k)}w{letters(i)}" for i in range(100)] for k in range(4)]
with open(sys.argv[1], "w") as f:
    for d in range(640):
        a, b = rng.sample(range(4), 2)
        f.write(" ".join(rng.choice(themes[a] if rng.random() < 0.7 else themes[b])
                         for _ in range(30)) + "\n")
EOF

# updates DIR: the update counts of the snapshots in DIR, in order, space separated
updates() { ls "$1" | sed -n 's/^streamlda-0*\([0-9][0-9]*\)\.slda$/\1/p' | sort -n | tr '\n' ' '; }
# snapshot_py ARGS...: python with examples/read_snapshot.py's parser as module r, ARGS as argv
snapshot_py() {
    "$PY" -c 'import sys
sys.dont_write_bytecode = True  # nothing left in examples/
sys.path.insert(0, sys.argv[1] + "/examples")
import read_snapshot as r
def header(path):
    with open(path, "rb") as f:
        return r.parse_snapshot(f.read())[0]
exec(sys.argv[2])' "$SRC" "$@"
}
# headers DIR: "t:docs" of each snapshot in DIR from its header, in update order
headers() {
    snapshot_py 'import glob
hs = sorted((header(p) for p in glob.glob(sys.argv[3] + "/*.slda")), key=lambda h: h["t"])
print(" ".join("%d:%d" % (h["t"], h["docs"]) for h in hs), end=" ")' "$1"
}
# nz FILE: the topic totals NZ of a snapshot
nz() { snapshot_py 'print(header(sys.argv[3])["NZ"])' "$1"; }
snap() { printf '%s/streamlda-%020d.slda' "$T/$1" "$2"; }
# run NAME UPDATES HEADERS TRAIN-ARGS...: the snapshots' names (UPDATES), their headers' update
# and document counts (HEADERS, "t:docs ..."), the last progress line's update count (the last
# snapshot's) and the summary's documents and tokens (those of the last snapshot: each document
# of each pass once, 30 tokens each)
run() {
    local name=$1 want=$2 want_headers=$3
    shift 3
    if ! "$S" train -k 4 -X seed=3 -X minibatch.docs=32 --snapshot-dir "$T/$name" --snapshot-every 320 "$@" \
        > "$T/$name.out" 2> "$T/$name.err"; then
        fail "$name: train failed: $(cat "$T/$name.err")"
        return
    fi
    local got last docs
    got=$(updates "$T/$name")
    [ "$got" = "$want" ] && ok || fail "$name: snapshots after updates '$got', want '$want'"
    got=$(headers "$T/$name")
    [ "$got" = "$want_headers" ] && ok ||
        fail "$name: snapshot headers (updates:documents) '$got', want '$want_headers'"
    last=${want_headers% }
    last=${last##* }
    docs=${last#*:}
    last=${last%%:*}
    got=$(grep '^progress: ' "$T/$name.err" | tail -n 1)
    echo "$got" | grep -Eq "^progress: docs $docs tokens $((docs * 30)) .* updates $last " && ok ||
        fail "$name: last progress line '$got', want $docs documents, $((docs * 30)) tokens, $last updates"
    grep -Eq "^train docs=$docs tokens=$((docs * 30)) " "$T/$name.out" && ok ||
        fail "$name: summary '$(cat "$T/$name.out")', want docs=$docs tokens=$((docs * 30))"
}

# the file fits in replay.docs (20000): 10 first visits by document 320, 20 by 640, then
# the 20 second visits at the end
run fits "10 20 40 " "10:320 20:640 40:640 " "$T/docs.txt"
run fits_exactly "10 20 40 " "10:320 20:640 40:640 " -X replay.docs=640 "$T/docs.txt"
# two passes: 1,280 documents to train on, still within replay.docs
run fits_passes "10 20 30 40 80 " "10:320 20:640 30:960 40:1280 80:1280 " -p 2 "$T/docs.txt"
# standard input: a stream; by document 320, 5 of the 10 minibatches have come back
run stream "15 30 40 " "15:320 30:640 40:640 " - < "$T/docs.txt"
# a file that does not fit: the stream rule (as standard input), and with replay.docs=100 at
# most 100 documents (3 minibatches) wait
run no_fit "15 30 40 " "15:320 30:640 40:640 " -X replay.docs=639 "$T/docs.txt"
run no_fit_small "17 37 40 " "17:320 37:640 40:640 " -X replay.docs=100 "$T/docs.txt"
# one visit: replay=off
run off "10 20 " "10:320 20:640 " -X replay=off "$T/docs.txt"
# and with the sweeps of a first visit under replay (half of each phase's: local_step.c)
run off_half "10 20 " "10:320 20:640 " -X replay=off -X local.burnin=2 -X local.samples=2 "$T/docs.txt"

# The model: a file that fits is trained as with replay=off (and first visits' sweeps) until its
# end (the same topic totals after the 20 first visits), and its 20 second visits then train it
# further (the totals move); so do a stream's last second visits after its last document.
a=$(nz "$(snap fits 20)") b=$(nz "$(snap off_half 20)") c=$(nz "$(snap fits 40)")
[ -n "$a" ] && [ "$a" = "$b" ] && ok || fail "fits and off_half differ after the first visits: NZ $a vs $b"
[ -n "$c" ] && [ "$c" != "$a" ] && ok || fail "the second visits left NZ as it was: $a then $c"
a=$(nz "$(snap stream 30)") c=$(nz "$(snap stream 40)")
[ -n "$c" ] && [ "$c" != "$a" ] && ok || fail "stream: the last second visits left NZ as it was: $a then $c"

checks_done 0024-train_replay
