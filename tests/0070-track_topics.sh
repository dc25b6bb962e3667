#!/usr/bin/env bash
# 0070-track_topics.sh - `topics --weights` and `topics --json`: each topic's weight is its share
# of the topic totals NZ (the weights sum to 1 and match export's counts), the plain output is
# unchanged, and the JSON names the same topics and words; a bad snapshot or option gives exit
# 1 or 2 with the path named.
set -u
. "$(dirname "$0")/checks.sh"
SRC=${SLDA_SOURCE_DIR:?}

"$S" train -q -k 7 -X seed=5 -o "$T/m.slda" "$SRC"/examples/janeausten/*.txt >/dev/null 2>&1 &&
    ok || fail "train"

"$S" topics -n 5 "$T/m.slda" >"$T/plain" && ok || fail "topics"
"$S" topics -n 5 --weights "$T/m.slda" >"$T/weights" && ok || fail "topics --weights"
"$S" topics -n 5 --json "$T/m.slda" >"$T/json" && ok || fail "topics --json"
cat "$T/weights"
[ "$(wc -l <"$T/plain")" -eq 7 ] && ok || fail "plain: $(wc -l <"$T/plain") lines, wanted 7"
grep -Eq '^topic 0: [a-z]+( [a-z]+){4}$' "$T/plain" && ok || fail "plain format: $(head -1 "$T/plain")"
[ "$(grep -Ec '^topic [0-9]+ 0\.[0-9]{4}:( [a-z]+){5}$' "$T/weights")" -eq 7 ] &&
    ok || fail "weights format: $(head -2 "$T/weights")"
# the same words in the same order, with the weight inserted
diff <(sed 's/^topic \([0-9]*\) [0-9.]*:/topic \1:/' "$T/weights") "$T/plain" >/dev/null &&
    ok || fail "--weights changed the words"

python3 - "$T/json" "$T/weights" <<'PY' && ok || fail "json/weights check"
import json, sys
d = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().split("\n")
assert d["K"] == 7 and len(d["topics"]) == 7, d["K"]
ws = [t["weight"] for t in d["topics"]]
assert abs(sum(ws) - 1) < 1e-4, sum(ws)
assert all(w > 0 for w in ws), ws
assert len(set(round(w, 4) for w in ws)) > 1, "all weights equal: not NZ shares"
for t, line in zip(d["topics"], lines):
    head, words = line.split(":", 1)
    assert head == "topic %d %.4f" % (t["topic"], t["weight"]), (head, t)
    assert words.split() == t["words"], (words, t["words"])
    assert t["probs"] == sorted(t["probs"], reverse=True), t["probs"]
print("json ok: weights", ", ".join("%.3f" % w for w in ws))
PY

# weights are NZ shares: a model trained with one theme per topic shows the token proportions
for i in $(seq 1 90); do echo "apple banana cherry fruit orchard apple banana fruit"; done >"$T/two.txt"
for i in $(seq 1 30); do echo "engine piston turbine motor engine gearbox motor fuel"; done >>"$T/two.txt"
"$S" train -q -k 2 -X text.stopwords=none -X seed=4 -X minibatch.docs=20 -p 40 -o "$T/two.slda" "$T/two.txt" >/dev/null 2>&1 &&
    ok || fail "train two themes"
"$S" topics --weights -n 3 "$T/two.slda" >"$T/two.out" && ok || fail "topics two"
cat "$T/two.out"
# 90 fruit documents of 8 tokens against 30 engine documents: fruit holds 3/4 of the tokens
# (after enough updates for the initial counts to decay: 0.64 after 5 passes of one minibatch)
python3 - "$T/two.out" <<'PY' && ok || fail "two-theme weights are not the token shares"
import sys, re
w = {}
for line in open(sys.argv[1]):
    m = re.match(r"topic \d+ ([0-9.]+): (.*)", line)
    w["fruit" if any(x in m.group(2) for x in ("apple", "banana", "fruit")) else "engine"] = float(m.group(1))
assert set(w) == {"fruit", "engine"}, w
assert abs(w["fruit"] - 0.75) < 0.05 and abs(w["engine"] - 0.25) < 0.05, w
PY

# bad snapshots and options
printf 'SLDASNAP\0\0\0\1garbage-garbage-garbage' >"$T/bad.slda"
"$S" topics --weights "$T/bad.slda" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && ok || fail "corrupt snapshot: exit status not 1"
grep -q 'bad.slda' "$T/err" && ok || fail "corrupt snapshot: path not named: $(cat "$T/err")"
"$S" topics --json "$T/missing.slda" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && ok || fail "missing snapshot: exit status not 1"
grep -q 'missing.slda' "$T/err" && ok || fail "missing snapshot: path not named"
"$S" topics --weights -n 0 "$T/m.slda" >/dev/null 2>&1
[ $? -eq 2 ] && ok || fail "-n 0: exit status not 2"
"$S" topics --weights >/dev/null 2>&1
[ $? -eq 2 ] && ok || fail "no snapshot: exit status not 2"

checks_done 0070-track_topics
