#!/usr/bin/env bash
# 0086-groups.sh - tracking by group (docs/tracking.md "Groups"): JSON lines and CSV name each
# document's group in a field (--group-field, input.group.field); `train` keeps each group's
# documents over event time and its topic mix beside each snapshot and says how many groups it
# kept and evicted; `report` lists the largest groups (JSON and HTML) with their share of each
# window and their topics; a group whose source grows is seen growing; a capacity smaller than
# the groups evicts the smallest into "(other)" and counts them, the documents still adding up;
# a group field of the wrong type is a rejected record with file:line; a CSV without the named
# column is refused naming it; @lang groups by the documents' languages; without a group field
# nothing is grouped.
set -u
. "$(dirname "$0")/checks.sh"

python3 - "$T" <<'EOF'
import json, random, sys
t = sys.argv[1]
rng = random.Random(7)
subj = {"farm": "apple banana cherry grape lemon mango melon peach pear plum".split(),
        "garage": "engine wheel brake clutch gear piston valve axle tyre motor".split(),
        "club": "goal match team player coach league score referee season cup".split()}
t0 = 1577836800  # 2020-01-01
with open(f"{t}/g.jsonl", "w") as f, open(f"{t}/g.csv", "w") as c, open(f"{t}/l.jsonl", "w") as l:
    c.write("id,when,source,text\n")
    for i in range(3000):
        frac = i / 3000
        p_club = 0.1 + 0.5 * frac  # the club writes more and more: 10% -> 60%
        r = rng.random()
        src = "club" if r < p_club else "farm" if r < p_club + (1 - p_club) / 2 else "garage"
        text = " ".join(rng.choice(subj[src]) for _ in range(20))
        rec = {"id": i, "time": t0 + i * 3 * 3600, "text": text, "source": src}
        f.write(json.dumps(rec) + "\n")
        c.write(f"{i},{t0 + i * 3 * 3600},{src},{text}\n")
        l.write(json.dumps({"id": i, "time": t0 + i * 3600, "text": text,
                            "lang": "de" if src == "club" else "en"}) + "\n")
    f.write(json.dumps({"id": "bad", "time": t0, "text": "goal team", "source": {"x": 1}}) + "\n")
EOF

# 1. train: every document in its group, the closing line says so
expect_rc 0 "train --group-field" "$S" train -k 3 -X seed=2 --time-field time --group-field source \
    -X track.window=day --snapshot-dir "$T/s" -q "$T/g.jsonl"
says "groups named at the end" 'groups by source: 3 kept, 0 evicted into "\(other\)"'
says "a group of the wrong type rejected with file:line" \
    'g\.jsonl:3001: field "source": must be a string or a number'
grep -q "rejected=1" "$T/out" && ok || fail "one record rejected: $(cat "$T/out")"
expect_rc 0 "report" "$S" report "$T/s" --json "$T/r.json" --html "$T/r.html"
python3 - "$T/r.json" <<'EOF' && ok || fail "report: the groups, their growth and their topics"
import json, sys
g = json.load(open(sys.argv[1]))["groups"]
by = {x["name"]: x for x in g["list"]}
assert g["source"] == "source" and sorted(by) == ["club", "farm", "garage"], g
assert abs(sum(x["docs"] for x in g["list"]) + g["other"]["docs"] - 3000) < 1e-6, g
assert g["docs"] == 3000 and g["evicted"] == 0, g
tot = g["total"]
n = len(tot)
def share(x, a, b):
    return sum(x["series"][a:b]) / sum(tot[a:b])
club = by["club"]
early, late = share(club, 0, n // 4), share(club, 3 * n // 4, n)
assert 0.05 < early < 0.25 and 0.45 < late < 0.75, (early, late)  # 10% -> 60% in truth
tops = {name: x["topics"][0] for name, x in by.items()}
assert len({t[0] for t in tops.values()}) == 3, tops  # each group its own topic
assert all(t[1] > 0.6 for t in tops.values()), tops
EOF
grep -q '<table id="groups">' "$T/r.html" && grep -q '<td>garage</td>' "$T/r.html" && ok ||
    fail "the HTML report's table of groups"
# the report's per-topic charts: the topic whose share moved most (the club's, 10% -> 60%) first
python3 - "$T/r.html" <<'EOF' && ok || fail "report: the topic that moved most charted first"
import re, sys
h = open(sys.argv[1]).read()
part = h.split("the topics that moved most first", 1)[1]
first = re.search(r'<div class="card"><h3>.*?<p class="w">([^<]*)', part).group(1).split()
assert set(first[:3]) <= set("goal match team player coach league score referee season cup".split()), first
EOF

# 2. a capacity of 2: the third group evicts the smallest into (other), counted; documents add up
expect_rc 0 "train, capacity 2" "$S" train -k 3 -X seed=2 --time-field time --group-field source \
    -X track.window=day -X track.group.capacity=2 --snapshot-dir "$T/s2" -q "$T/g.jsonl"
says "evictions counted" 'groups by source: 2 kept, [1-9][0-9]* evicted into "\(other\)"'
expect_rc 0 "report, capacity 2" "$S" report "$T/s2" --json "$T/r2.json"
python3 - "$T/r2.json" <<'EOF' && ok || fail "capacity 2: (other) holds the evicted documents"
import json, sys
g = json.load(open(sys.argv[1]))["groups"]
assert g["groups"] == 2 and g["evicted"] >= 1 and g["other"]["docs"] > 0, g
assert abs(sum(x["docs"] for x in g["list"]) + g["other"]["docs"] - 3000) < 1e-6, g
assert abs(sum(g["total"]) - 3000) < 1e-6, g
EOF

# 3. CSV: the named column, or a refusal naming it
expect_rc 0 "csv --group-field" "$S" train -k 3 -X seed=2 -f csv --time-field when \
    --group-field source -X track.window=day --snapshot-dir "$T/s3" -q "$T/g.csv"
says "csv groups" 'groups by source: 3 kept'
expect_rc 1 "csv without the group column" "$S" train -k 3 -f csv --time-field when \
    --group-field channel --snapshot-dir "$T/s4" -q "$T/g.csv"
says "the missing column named" 'no column "channel" \(input\.group\.field, --group-field\)'

# 4. @lang: grouped by each document's language (its "lang" field here)
expect_rc 0 "train @lang" "$S" train -k 3 -X seed=2 --time-field time --group-field @lang \
    -X track.window=day --snapshot-dir "$T/s5" -q "$T/l.jsonl"
says "languages as groups" 'groups by @lang: 2 kept'
expect_rc 0 "report @lang" "$S" report "$T/s5" --json "$T/r5.json" --html "$T/r5.html"
python3 - "$T/r5.json" <<'EOF' && ok || fail "@lang: de and en"
import json, sys
g = json.load(open(sys.argv[1]))["groups"]
assert sorted(x["name"] for x in g["list"]) == ["de", "en"], g
EOF
grep -q '<h2>Languages (2' "$T/r5.html" && ok || fail "the report names languages"

# 5. sources a run does not have are refused with the reason; a group that is not UTF-8 (a CSV
# column is not checked) is kept with '?' for its bad bytes, so the state stays JSON the report reads
expect_rc 1 "@author without an author-topic model" "$S" train -k 3 --time-field time \
    --group-field @author --snapshot-dir "$T/s7" -q "$T/g.jsonl"
says "@author's reason" 'input.group.field=@author groups by the authors an author-topic model reads'
expect_rc 1 "@key in train" "$S" train -k 3 --time-field time --group-field @key \
    --snapshot-dir "$T/s7" -q "$T/g.jsonl"
says "@key's reason" "input.group.field=@key groups by the Kafka message's key"
expect_rc 1 "an unknown @ source" "$S" train -k 3 --time-field time --group-field @source \
    --snapshot-dir "$T/s7" -q "$T/g.jsonl"
says "the unknown source named" 'input.group.field="@source": a field.s name, or @lang, @author, @key'
{ printf 'id,when,source,text\n'; printf '1,1577836800,caf\xe9,goal match team\n';
  printf '2,1577840400,ok,goal match team\n'; } >"$T/bad.csv"
expect_rc 0 "a group that is not UTF-8" "$S" train -k 2 -f csv --time-field when --group-field source \
    --snapshot-dir "$T/s8" -q "$T/bad.csv"
expect_rc 0 "report reads that state" "$S" report "$T/s8" --json "$T/r8.json"
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["groups"]; assert sorted(x["name"] for x in g["list"]) == ["caf?", "ok"], g' "$T/r8.json" &&
    ok || fail "the bad bytes as ?: $(head -c 300 "$T/r8.json")"

# 5b. tags: a JSON array names several groups, the document a share in each (they still add up
# to every document); empty elements left out, an element's newline a space; more than 64
# elements or an element that is not a string or a number is a rejected record with file:line
python3 - "$T" <<'EOF'
import json, sys
t = sys.argv[1]
with open(f"{t}/tags.jsonl", "w") as f:
    for i in range(300):
        src = ["farm", "garage", "club"][i % 3]
        tags = [src, "all"] if i % 2 == 0 else [src, "", "  all  "] if i % 4 == 1 else ["all\nnews"]
        f.write(json.dumps({"time": 1577836800 + i * 3600, "text": "goal match team " + src,
                            "tags": tags}) + "\n")
    f.write(json.dumps({"time": 1577836800, "text": "goal team", "tags": [str(k) for k in range(65)]}) + "\n")
    f.write(json.dumps({"time": 1577836800, "text": "goal team", "tags": ["x", {"y": 1}]}) + "\n")
EOF
expect_rc 0 "train with tags" "$S" train -k 3 -X seed=2 --time-field time --group-field tags \
    -X track.window=day --snapshot-dir "$T/s9" -q "$T/tags.jsonl"
says "65 tags rejected with file:line" 'tags\.jsonl:301: field "tags": 65 groups, at most 64'
says "a tag of another type rejected" 'tags\.jsonl:302: field "tags": element 1 is object, not a string'
expect_rc 0 "report of the tags" "$S" report "$T/s9" --json "$T/r9.json"
python3 - "$T/r9.json" <<'EOF' && ok || fail "tags: a share of each document in each of its groups"
import json, sys
g = json.load(open(sys.argv[1]))["groups"]
by = {x["name"]: x["docs"] for x in g["list"]}
assert g["docs"] == 300 and abs(sum(by.values()) + g["other"]["docs"] - 300) < 1e-6, g
assert sorted(by) == ["all", "all news", "club", "farm", "garage"], by
assert abs(by["all"] - 150 * 0.5 - 75 * 0.5) < 1e-6 and abs(by["all news"] - 75) < 1e-6, by
assert abs(by["farm"] + by["garage"] + by["club"] - 112.5) < 1e-6, by
EOF

# 6. no group field: nothing grouped
expect_rc 0 "train without groups" "$S" train -k 3 -X seed=2 --time-field time \
    -X track.window=day --snapshot-dir "$T/s6" -q "$T/g.jsonl"
grep -q "groups by" "$T/err" && fail "groups without a group field" || ok
expect_rc 0 "report without groups" "$S" report "$T/s6" --json "$T/r6.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["groups"] is None' "$T/r6.json" &&
    ok || fail "report: groups null without a group field"

checks_done 0086-groups
