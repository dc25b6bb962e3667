#!/usr/bin/env bash
# 0024-train_replay.sh - when `streamlda train` gives documents their second visit (replay,
# docs/engine.md "Second visits"), seen in the update counts its snapshots are named by:
# - files whose documents all fit in replay.docs: no second visit before the input's end
#   (each then sees the model of the whole input), then every minibatch once more;
# - standard input (a stream of unknown length) and files that do not fit: the stream rule,
#   a document that came after n others comes back after about 2n (at most replay.docs later).
# 640 documents, 20 minibatches of 32, a snapshot every 320 documents and one at the end.
set -u
. "$(dirname "$0")/checks.sh"
PY=/usr/bin/python3

"$PY" - "$T/docs.txt" <<'EOF'
import random, sys
rng = random.Random(3)
def letters(n):  # digits are dropped by the tokenizer (text.digits): words of letters only
    s = ""
    while True:
        s = "abcdefghijklmnopqrstuvwxyz"[n % 26] + s
        n //= 26
        if n == 0:
            return s
themes = [[f"t{letters(k)}w{letters(i)}" for i in range(100)] for k in range(4)]
with open(sys.argv[1], "w") as f:
    for d in range(640):
        a, b = rng.sample(range(4), 2)
        f.write(" ".join(rng.choice(themes[a] if rng.random() < 0.7 else themes[b])
                         for _ in range(30)) + "\n")
EOF

# updates DIR: the update counts of the snapshots in DIR, in order, space separated
updates() { ls "$1" | sed -n 's/^streamlda-0*\([0-9][0-9]*\)\.slda$/\1/p' | sort -n | tr '\n' ' '; }
# run NAME EXPECTED TRAIN-ARGS...
run() {
    local name=$1 want=$2
    shift 2
    if ! "$S" train -q -k 4 -X seed=3 -X minibatch.docs=32 --snapshot-dir "$T/$name" --snapshot-every 320 "$@" \
        > "$T/$name.out" 2> "$T/$name.err"; then
        fail "$name: train failed: $(cat "$T/$name.err")"
        return
    fi
    local got
    got=$(updates "$T/$name")
    [ "$got" = "$want" ] && ok || fail "$name: snapshots after updates '$got', want '$want'"
}

# the file fits in replay.docs (20000): 10 first visits by document 320, 20 by 640, then
# the 20 second visits at the end
run fits "10 20 40 " "$T/docs.txt"
run fits_exactly "10 20 40 " -X replay.docs=640 "$T/docs.txt"
# two passes: 1,280 documents to train on, still within replay.docs
run fits_passes "10 20 30 40 80 " -p 2 "$T/docs.txt"
# standard input: a stream; by document 320, 5 of the 10 minibatches have come back
run stream "15 30 40 " - < "$T/docs.txt"
# a file that does not fit: the stream rule (as standard input), and with replay.docs=100 at
# most 100 documents (3 minibatches) wait
run no_fit "15 30 40 " -X replay.docs=639 "$T/docs.txt"
run no_fit_small "17 37 40 " -X replay.docs=100 "$T/docs.txt"
# one visit: replay=off
run off "10 20 " -X replay=off "$T/docs.txt"

checks_done 0024-train_replay
