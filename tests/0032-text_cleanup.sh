#!/usr/bin/env bash
# 0032-text_cleanup.sh - the text.* rules from the command line: a tweet-like stream trains clean
# topics, infer on the snapshot cleans text the same way, composed stop lists (+FILE, +words),
# and a missing stop-word file is an error that names it.
set -u
. "$(dirname "$0")/checks.sh"
run() { "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }

# Two themes wrapped in what raw social text carries: links, mentions, entities, contractions.
for i in $(seq 1 120); do
    echo "RT @fruit_fan$i: Don't miss the apple &amp; banana harvest https://t.co/Ab$i #orchard"
    echo "@motorhead$i engine &quot;piston&quot; turbine &gt; motor isn't cheap www.cars$i.com/x?a=1&amp;b=2 torque"
done >"$T/tweets.txt"
printf 'harvest\ntorque\n' >"$T/stop.txt"

run "$S" train -q -k 2 -X seed=5 -o "$T/m.slda" "$T/tweets.txt"
[ "$(cat "$T/rc")" -eq 0 ] && ok || fail "train: $(cat "$T/err")"
run "$S" topics -n 8 "$T/m.slda"
if grep -Eqw 'https|http|www|com|co|amp|quot|gt|don|isn|fruit_fan[0-9]*|motorhead[0-9]*|ab[0-9]+' "$T/out"; then
    fail "topics hold URL, entity, mention or contraction fragments: $(cat "$T/out")"
else ok; fi
grep -q 'apple' "$T/out" && grep -q 'engine' "$T/out" && grep -q 'orchard' "$T/out" && ok \
    || fail "topics lost the words: $(cat "$T/out")"

# the same rules with every cleanup off (what snapshots made before them do) keep the fragments
run "$S" train -q -k 2 -X seed=5 -X text.urls=keep -X text.html=keep -X text.mentions=keep \
    -X text.apostrophes=split -X text.digits=split -o "$T/old.slda" "$T/tweets.txt"
"$S" topics -n 8 "$T/old.slda" >"$T/old.topics" 2>&1
grep -Eqw 'https|amp|quot|don|isn' "$T/old.topics" && ok || fail "rules off: $(cat "$T/old.topics")"

# infer reads the snapshot's rules: a document of nothing but links, mentions and entities is empty
printf '{"id":"noise","text":"https://t.co/x @fruit_fan1 &amp; &quot;"}\n{"id":"fruit","text":"apple banana https://x.org"}\n' >"$T/new.jsonl"
run "$S" infer -t 1 "$T/m.slda" "$T/new.jsonl"
grep -q '"id":"fruit"' "$T/out" && ! grep -q '"id":"noise"' "$T/out" && ok \
    || fail "infer: $(cat "$T/out" "$T/err")"

# composed stop lists: +FILE adds to the default list, and so does +word,word
run "$S" train -q -k 2 -X seed=5 -X "text.stopwords=+$T/stop.txt" -o "$T/s.slda" "$T/tweets.txt"
"$S" topics -n 8 "$T/s.slda" >"$T/s.topics" 2>&1
grep -Eqw 'harvest|torque' "$T/s.topics" && fail "+FILE: $(cat "$T/s.topics")" || ok
grep -Eqw 'the' "$T/s.topics" && fail "+FILE lost the default list" || ok
run "$S" train -X "text.stopwords=+apple,engine" -X dump
grep -qx 'text.stopwords=auto+apple,engine' "$T/out" && ok || fail "dump: $(grep stopwords "$T/out")"
run "$S" train -q -k 2 -X "text.stopwords=snowball+$T/stop.txt+apple,engine" "$T/tweets.txt"
[ "$(cat "$T/rc")" -eq 0 ] && ok || fail "snowball+FILE+words: $(cat "$T/err")"

# a missing file is named
run "$S" train -q -k 2 -X "text.stopwords=smart+$T/missing.txt" "$T/tweets.txt"
[ "$(cat "$T/rc")" -ne 0 ] && grep -q "text.stopwords \"$T/missing.txt\": not a built-in list" "$T/err" \
    && ok || fail "missing file: rc $(cat "$T/rc"): $(cat "$T/err")"

checks_done 0032-text_cleanup
