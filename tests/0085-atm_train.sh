#!/usr/bin/env bash
# 0085-atm_train.sh - the author-topic model through the command line (docs/models.md):
# JSON lines with an author field named by --author-field (a string, a number, an array) and
# CSV with authors separated by ';' train with -X model.kind=atm; a record without authors is
# rejected with file:line and counted, a bad author field too; `authors` lists the authors with
# their mixtures (writers of one subject share a topic, the two subjects' writers differ), ranks
# who drives a topic, exports the mixtures as .npy with the names; `topics` and `infer` read
# the snapshot (infer with and without an author); what atm does not support is refused with
# the reason (births=true, local.sparse=on, `authors` on an LDA snapshot; batch mode: 0089).
set -u
. "$(dirname "$0")/checks.sh"

python3 - "$T" <<'EOF'
import json, random, sys
t = sys.argv[1]
rng = random.Random(5)
sport = "goal match team season coach player league score stadium final".split()
money = "stock market bank price trader shares bond interest profit fund".split()
with open(f"{t}/a.jsonl", "w") as f:
    for i in range(600):
        s = i % 2 == 0
        who = f"{'sam' if s else 'max'}{(i // 2) % 6}"
        words = [rng.choice(sport if s else money) for _ in range(30)]
        f.write(json.dumps({"id": f"d{i}", "who": who, "text": " ".join(words)}) + "\n")
    f.write(json.dumps({"id": "noauthor", "text": "goal match team"}) + "\n")      # line 601
    f.write(json.dumps({"id": "empty", "who": [], "text": "goal match team"}) + "\n") # line 602
    f.write(json.dumps({"id": "bad", "who": ["x", {}], "text": "goal team"}) + "\n")  # line 603
    f.write(json.dumps({"id": "num", "who": 42, "text": "stock bank market"}) + "\n")
EOF

# 1. train: the two bad lines rejected with file:line, the others trained
expect_rc 0 "atm train" "$S" train -k 2 -X seed=3 -X model.kind=atm --author-field who \
    -o "$T/m.slda" "$T/a.jsonl"
grep -q "train docs=601 " "$T/out" && ok || fail "atm: 601 documents trained: $(cat "$T/out")"
grep -q "rejected=3" "$T/out" && ok || fail "atm: 3 rejected: $(cat "$T/out")"
says "missing author named" 'a\.jsonl:601: field "who": missing \(model\.kind=atm'
says "empty author list named" 'a\.jsonl:602: field "who": no author named'
says "bad element named" 'a\.jsonl:603: field "who": element 1 is object'

# 2. authors: the subjects' writers on different topics, each writer's largest topic its own
expect_rc 0 "authors" "$S" authors --top 0 --topics 1 "$T/m.slda"
n=$(grep -c "tokens=" "$T/out")
[ "$n" -eq 13 ] && ok || fail "authors: 13 listed (12 writers and 42): $n: $(cat "$T/out")"
ts=$(grep -E '^sam' "$T/out" | sed -E 's/.*: topic ([0-9]+) .*/\1/' | sort -u)
tm=$(grep -E '^max' "$T/out" | sed -E 's/.*: topic ([0-9]+) .*/\1/' | sort -u)
[ "$(echo "$ts" | wc -l)" -eq 1 ] && [ "$(echo "$tm" | wc -l)" -eq 1 ] && [ "$ts" != "$tm" ] &&
    ok || fail "authors: writers of a subject share a topic, subjects differ: $(cat "$T/out")"
grep -E '^(sam|max)' "$T/out" | awk '{ if ($NF + 0 < 0.9) bad = 1 } END { exit bad }' && ok ||
    fail "authors: each writer's mixture is mostly its subject's topic: $(cat "$T/out")"
# who drives a topic: the sport topic's list starts with sam writers
expect_rc 0 "authors --topic" "$S" authors --topic "$ts" --top 6 --json "$T/m.slda"
python3 - "$T/out" <<'EOF' && ok || fail "authors --topic: the six sam writers first: $(head -c 300 "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
names = [e["author"] for e in j["list"]]
assert len(names) == 6 and all(n.startswith("sam") for n in names), names
assert all(e["topic_tokens"] > 0 and e["mass"] > 0 for e in j["list"])
EOF
# .npy export with the names: A x K float32, rows summing to 1
expect_rc 0 "authors --npy" "$S" authors --npy "$T/a.npy" --names "$T/a.names" "$T/m.slda"
python3 - "$T/a.npy" "$T/a.names" <<'EOF' && ok || fail "authors --npy: shape and rows"
import ast, struct, sys
b = open(sys.argv[1], "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
h = ast.literal_eval(b[10:10 + hl].decode())
names = open(sys.argv[2]).read().split("\n")[:-1]
assert h["descr"] == "<f4" and h["shape"] == (len(names), 2), (h, len(names))
data = struct.unpack("<%df" % (len(names) * 2), b[10 + hl:])
assert all(abs(data[2 * i] + data[2 * i + 1] - 1) < 1e-4 for i in range(len(names)))
EOF
expect_rc 2 "authors --npy alone" "$S" authors --npy "$T/x.npy" "$T/m.slda"
says "--npy needs --names" "go together"

"$S" train -q -k 2 -o "$T/l.slda" "$T/a.jsonl" >/dev/null 2>&1 # an LDA twin
# 3. topics and infer read the snapshot; infer folds a known author in, and a document alone
expect_rc 0 "topics" "$S" topics --authors 3 "$T/m.slda"
grep -E "^topic $ts: .* \| by sam[0-9] sam[0-9] sam[0-9]$" "$T/out" >/dev/null && ok ||
    fail "topics --authors: the sport topic by three sam writers: $(cat "$T/out")"
printf '{"id":"q1","who":"sam1","text":"stock market"}\n{"id":"q2","text":"stock market"}\n' \
    >"$T/q.jsonl"
expect_rc 0 "infer" "$S" infer --author-field who "$T/m.slda" "$T/q.jsonl"
[ "$(grep -c '"id"' "$T/out")" -eq 2 ] && ok || fail "infer: two mixtures: $(cat "$T/out")"

# a new author's mixture folded in from its documents, a known one's updated by them
printf '%s\n' '{"id":"n1","who":"newbie","text":"stock market bank"}' \
    '{"id":"n2","who":"newbie","text":"trader shares bond price"}' \
    '{"id":"n3","who":"sam1","text":"goal match"}' >"$T/n.jsonl"
expect_rc 0 "infer --by-author" "$S" infer --by-author --author-field who "$T/m.slda" "$T/n.jsonl"
grep -E "^\{\"author\":\"newbie\",\"docs\":2,\"tokens\":[0-9]+,\"known\":false,.*\"topics\":\[\[$tm," \
    "$T/out" >/dev/null && ok || fail "infer --by-author: newbie on the money topic: $(cat "$T/out")"
grep -E "^\{\"author\":\"sam1\",\"docs\":1,\"tokens\":2,\"known\":true,.*\"topics\":\[\[$ts," \
    "$T/out" >/dev/null && ok || fail "infer --by-author: sam1 known, on the sport topic: $(cat "$T/out")"
expect_rc 1 "infer --by-author on lda" "$S" infer --by-author "$T/l.slda" "$T/n.jsonl"

# 4. CSV: authors separated by ';'
{
    echo 'id,authors,text'
    for i in $(seq 1 40); do echo "c$i,ann;bob,goal match team season coach player"; done
    echo 'c41,,goal match'
} >"$T/c.csv"
expect_rc 0 "atm csv" "$S" train -q -k 2 -X model.kind=atm --author-field authors \
    -o "$T/c.slda" "$T/c.csv"
says "csv: the row without authors" 'c\.csv:42: field "authors": missing'
expect_rc 0 "authors csv" "$S" authors "$T/c.slda"
grep -q '^ann tokens=' "$T/out" && grep -q '^bob tokens=' "$T/out" && ok ||
    fail "csv: both authors of each row: $(cat "$T/out")"

# raw text names no author: every line rejected with the reason, nothing trained
printf 'goal match team\nstock market bank\n' >"$T/r.txt"
expect_rc 1 "atm raw text" "$S" train -q -k 2 -X model.kind=atm "$T/r.txt"
says "raw text refused" 'r\.txt:1: raw text names no author'

# the report of an author-topic run names each topic's authors (JSON and HTML)
python3 - "$T" <<'PY'
import json, sys
src = open(sys.argv[1] + "/a.jsonl").read().splitlines()[:600]
with open(sys.argv[1] + "/t.jsonl", "w") as f:
    for i, line in enumerate(src):
        r = json.loads(line)
        r["time"] = "2020-01-%02dT00:00:00Z" % (1 + i // 40)
        f.write(json.dumps(r) + "\n")
PY
expect_rc 0 "atm with snapshots" "$S" train -q -k 2 -X seed=3 -X model.kind=atm --author-field who \
    --time-field time --snapshot-dir "$T/snaps" --snapshot-every 200 "$T/t.jsonl"
expect_rc 0 "report" "$S" report "$T/snaps" --json "$T/r.json" --html "$T/r.html"
python3 - "$T/r.json" <<'PY' && ok || fail "report --json: each topic's authors, one subject's writers"
import json, sys
j = json.load(open(sys.argv[1]))
for t in j["topics"]:
    names = [a[0][:3] for a in t["authors"]]
    assert len(names) == 5 and len(set(names[:3])) == 1 and all(a[1] > 0 for a in t["authors"]), t
PY
grep -q '<div class="by">by sam' "$T/r.html" && grep -q '<div class="by">by max' "$T/r.html" && ok ||
    fail "report --html: the topics' authors"

# 5. refusals, each with its reason
expect_rc 1 "births=true" "$S" train -q -k 2 -X model.kind=atm -X births=true "$T/a.jsonl"
says "births refused" "births=true is not supported"
expect_rc 1 "sparse on" "$S" train -q -k 2 -X model.kind=atm -X local.sparse=on "$T/a.jsonl"
says "sparse refused" "local.sparse=on is not supported"
expect_rc 1 "authors of lda" "$S" authors "$T/l.slda"
says "authors names the kind" "not an author-topic model"
checks_done 0085-atm_train
