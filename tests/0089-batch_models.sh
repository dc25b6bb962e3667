#!/usr/bin/env bash
# 0089-batch_models.sh - `train --batch` for the author-topic model and pachinko allocation
# (docs/models.md, "Batch mode"): ATM with authors from --author-field trains, its test perplexity
# falls over the iterations, -o writes a snapshot whose `authors` tells the two subjects' writers
# apart; a record without the author field is rejected with file:line, a field no record has
# stops the run with the reason (exit 1), a document with two authors is skipped, named and
# counted (the library refuses it: unit_batch_models.c); PAM
# trains with each local variant, its perplexity falls, -o gives `topics` its super-topics.
set -u
. "$(dirname "$0")/checks.sh"

python3 - "$T" <<'PY'
import json, random, sys
t = sys.argv[1]
rng = random.Random(3)
sport = "goal match team season coach player league score stadium final".split()
money = "stock market bank price trader shares bond interest profit fund".split()
with open(f"{t}/a.jsonl", "w") as f, open(f"{t}/two.jsonl", "w") as g:
    for i in range(240):
        s = i % 2 == 0
        who = f"{'sam' if s else 'max'}{(i // 2) % 4}"
        words = [rng.choice(sport if s else money) for _ in range(30)]
        f.write(json.dumps({"id": f"d{i}", "who": who, "text": " ".join(words)}) + "\n")
        g.write(json.dumps({"id": f"d{i}", "who": who if i != 5 else [who, "sam0"],
                            "text": " ".join(words)}) + "\n")
    f.write(json.dumps({"id": "noauthor", "text": "goal match team"}) + "\n")  # line 241
PY
x=(-X text.stopwords=none -X topics=2 -X seed=2)

# the author-topic model: every variant the paper compares, perplexity falling
for v in cvb0 cgs cvb0+cgs; do
    expect_rc 0 "atm $v" "$S" train --batch -i 40 -e 1 "${x[@]}" -X model.kind=atm -X local=$v \
        --author-field who -o "$T/atm.slda" "$T/a.jsonl"
    grep -q "^batch local=$v K=2 iterations=40 perplexity=" "$T/out" && ok ||
        fail "atm $v: result line: $(cat "$T/out")"
    says "atm $v: the record without an author, by line" 'a\.jsonl:241: .*field "who": missing'
    awk '/^iter 1 /{a=$4} /^iter 40 /{b=$4} END {exit !(a > 0 && b > 0 && b < a)}' "$T/err" && ok ||
        fail "atm $v: perplexity did not fall: $(grep -E '^iter (1|40) ' "$T/err" | tr '\n' ' ')"
done
expect_rc 0 "authors of a batch ATM" "$S" authors --json "$T/atm.slda"
python3 - "$T/out" <<'PY' && ok || fail "authors: $(head -c 300 "$T/out")"
import json, sys
top = {a["author"]: max(a["topics"], key=lambda t: t[1])[0]
       for a in json.load(open(sys.argv[1]))["list"]}
print("batch ATM authors' largest topics:", top)
assert len(top) == 8, top
assert len({top[f"sam{i}"] for i in range(4)}) == 1 and len({top[f"max{i}"] for i in range(4)}) == 1
assert top["sam0"] != top["max0"]
PY

# a bad author field: every record rejected with file:line, then the reason the run stops
expect_rc 1 "no such author field" "$S" train --batch -i 5 "${x[@]}" -X model.kind=atm \
    --author-field sender "$T/a.jsonl"
says "rejected by line" 'a\.jsonl:1: .*field "sender": missing'
says "why nothing ran" 'no documents to train \(241 bad records'
# two authors in one document: batch ATM takes one; the document is reported, counted, skipped
expect_rc 0 "two authors" "$S" train --batch -i 5 "${x[@]}" -X model.kind=atm --author-field who \
    "$T/two.jsonl"
says "two authors named" 'two\.jsonl: document "d5": 2 authors; batch mode with model.kind=atm takes one author a document \(skipped\)'
says "two authors counted" '^batch: 239 documents, .* 1 bad records'


# pachinko allocation
for v in cvb0 cgs cvb0+cgs; do
    expect_rc 0 "pam $v" "$S" train --batch -i 30 -e 10 "${x[@]}" -X model.kind=pam -X pam.super=2 \
        -X local=$v -o "$T/pam.slda" "$T/a.jsonl"
    grep -q "^batch local=$v K=2 iterations=30 perplexity=" "$T/out" && ok ||
        fail "pam $v: result line: $(cat "$T/out")"
    awk '/^iter 10 /{a=$4} /^iter 30 /{b=$4} END {exit !(a > 0 && b > 0 && b < a)}' "$T/err" && ok ||
        fail "pam $v: perplexity did not fall: $(grep '^iter' "$T/err" | tr '\n' ' ')"
done
expect_rc 0 "topics of a batch PAM" "$S" topics "$T/pam.slda"
grep -qi "super" "$T/out" && ok || fail "topics: no super-topics: $(head -c 300 "$T/out")"
checks_done 0089-batch_models
