#!/usr/bin/env bash
# 0084-pam_train.sh - pachinko allocation through the command line (model.kind=pam,
# docs/models.md): train writes a version-2 snapshot with the super-topics' priors; `topics`
# lists the topics and then one line per super-topic with the topics it groups (shares of its
# prior summing to at most 1); held-out perplexity is reported; infer and export read the
# snapshot; `authors` refuses it with the reason, pam.super=0 is refused (batch mode: 0089).
set -u
. "$(dirname "$0")/checks.sh"

python3 - "$T" <<'PY'
import json, random, sys
rng = random.Random(7)
groups = [["goal match team season", "coach player league score"],
          ["stock market bank price", "trader shares bond profit"]]
with open(sys.argv[1] + "/p.jsonl", "w") as f:
    for i in range(800):
        g = groups[i % 2]
        words = " ".join(rng.choice(rng.choice(g).split()) for _ in range(30))
        f.write(json.dumps({"id": "d%d" % i, "text": words}) + "\n")
PY
expect_rc 0 "pam train" "$S" train -k 4 -X seed=2 -X model.kind=pam -X pam.super=3 \
    -X pam.alpha.warmup=5 --heldout 10 -o "$T/p.slda" "$T/p.jsonl"
grep -Eq "test_docs=[1-9][0-9]* perplexity=[0-9.]+ " "$T/out" && ok ||
    fail "pam: held-out perplexity: $(cat "$T/out")"
check "pam: snapshot version 2" test "$(head -c 12 "$T/p.slda" | od -An -tu1 | awk '{print $12}')" = 2
expect_rc 0 "topics" "$S" topics -n 4 "$T/p.slda"
[ "$(grep -c '^topic ' "$T/out")" -eq 4 ] && ok || fail "topics: four topics: $(cat "$T/out")"
[ "$(grep -c '^super ' "$T/out")" -eq 3 ] && ok || fail "topics: three super-topics: $(cat "$T/out")"
grep '^super ' "$T/out" | awk -F'topic ' '{ s = 0; for (i = 2; i <= NF; i++) { split($i, a, " "); s += a[2] } if (s > 1.0001 || s <= 0) bad = 1 } END { exit bad }' &&
    ok || fail "topics: a super-topic's shares sum to at most 1: $(grep '^super' "$T/out")"
expect_rc 0 "topics --json" "$S" topics --json "$T/p.slda"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len(j["supers"]) == 3 and len(j["topics"]) == 4' "$T/out" &&
    ok || fail "topics --json: supers"
# report: the super-topics with the topics they group (JSON "supers", an HTML table)
expect_rc 0 "pam train --snapshot-dir" "$S" train -k 4 -X seed=2 -X model.kind=pam \
    -X pam.super=3 -X pam.alpha.warmup=5 --snapshot-dir "$T/ps" -q "$T/p.jsonl"
expect_rc 0 "report" "$S" report "$T/ps" --json "$T/r.json" --html "$T/r.html"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["supers"]["supers"]; assert len(s) == 3 and all(0 < sum(t[1] for t in x["topics"]) <= 1.0001 for x in s), s' "$T/r.json" &&
    ok || fail "report --json: three super-topics with their topics"
[ "$(grep -c '<tr><td class="n">[0-2]</td><td>#' "$T/r.html")" -eq 3 ] &&
    grep -q '<table id="supers">' "$T/r.html" && ok || fail "report: the super-topics' table"
printf '{"id":"q","text":"stock market bank"}\n' >"$T/q.jsonl"
expect_rc 0 "infer" "$S" infer "$T/p.slda" "$T/q.jsonl"
grep -q '"id":"q"' "$T/out" && ok || fail "infer: a mixture: $(cat "$T/out")"
expect_rc 0 "export" "$S" export "$T/p.slda" --npy "$T/p.npy" --vocab "$T/p.voc"
expect_rc 1 "authors of pam" "$S" authors "$T/p.slda"
says "authors names the kind" "not an author-topic model"
expect_rc 1 "pam.super=0" "$S" train -q -k 4 -X model.kind=pam -X pam.super=0 "$T/p.jsonl"
says "pam.super refused" "pam.super must be at least 1"
checks_done 0084-pam_train
