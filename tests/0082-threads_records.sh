#!/usr/bin/env bash
# 0082-threads_records.sh - JSON lines and CSV read on every core, the same model (issue 27, item 4):
# - records are decoded and tokenised on the worker threads and looked up in order
#   (src/io/reader_ahead.c): threads=1, 2 and 3 give the same model bit for bit from a JSON lines
#   file, from the same JSON on standard input (one minibatch read ahead), from a CSV file with
#   quoted fields spanning lines and from a TSV file, with evictions (a small vocab.capacity)
#   and a time field (the models equal the serial reader's before, checked by hand against
#   bf6c0a7);
# - bad records keep their place across read-ahead boundaries (256 records): their errors name
#   path:line (the first line of a CSV record), are counted once, and the documents keep their
#   ids (the "id" field, a JSON record without one its line number);
# - the JSON file, its CSV and TSV twins and the same texts as raw text lines give one model.
set -u
. "$(dirname "$0")/checks.sh"
PY=/usr/bin/python3

# 1,500 documents from 6 themes over 1,200 words and words that occur once (evicted first); in
# the JSON and CSV files lines 3, 300 and 700 (CSV: the records starting there) are bad
"$PY" - "$T" "$(dirname "$0")" <<'EOF'
import csv, json, random, sys
sys.path.insert(0, sys.argv[2])
from corpus_words import letters  # noqa: E402
T = sys.argv[1]
rng = random.Random(7)
themes = [[f"t{letters(k)}w{letters(i)}" for i in range(200)] for k in range(6)]
docs = []
for d in range(1500):
    a, b = rng.sample(range(6), 2)
    words = [rng.choice(themes[a] if rng.random() < 0.7 else themes[b]) for _ in range(40)]
    words += [f"rare{letters(d)}x{letters(j)}" for j in range(3)]
    docs.append(words)
with open(f"{T}/docs.txt", "w") as f:
    for w in docs:
        f.write(" ".join(w) + "\n")
# JSON lines: ids, a time field, every fifth record without an id, every seventh as tokens
with open(f"{T}/docs.jsonl", "w") as f:
    for d, w in enumerate(docs):
        r = {"id": f"doc{d}", "date": f"2021-01-{1 + d % 28:02d}T00:00:00Z", "text": " ".join(w)}
        if d % 5 == 4:
            del r["id"]
        if d % 7 == 6:
            del r["text"]
            r["tokens"] = w
        f.write(json.dumps(r) + "\n")
lines = open(f"{T}/docs.jsonl").read().split("\n")
lines.insert(2, '{"id": "broken", "text": ')               # line 3: not JSON
lines.insert(299, '{"id": "notext", "body": "x y z"}')     # line 300: no text field
lines.insert(699, '{"id": "late", "date": "yesterday", "text": "a b c"}')  # line 700: bad time
open(f"{T}/bad.jsonl", "w").write("\n".join(lines))
# CSV: title and body (joined by a newline), bodies with line breaks and quotes
with open(f"{T}/docs.csv", "w", newline="") as f:
    wr = csv.writer(f)
    wr.writerow(["id", "date", "title", "body"])
    for d, w in enumerate(docs):
        title, body = " ".join(w[:5]), " ".join(w[5:])
        if d % 3 == 0:
            body = body.replace(" ", "\n", 2)
        wr.writerow([f"doc{d}", f"2021-01-{1 + d % 28:02d}", title, body])
with open(f"{T}/docs.tsv", "w") as f:  # TSV: no quoting, one line per row
    f.write("id\tdate\ttitle\tbody\n")
    for d, w in enumerate(docs):
        f.write(f"doc{d}\t2021-01-{1 + d % 28:02d}\t{' '.join(w[:5])}\t{' '.join(w[5:])}\n")
EOF
X=(-q -k 8 -X seed=11 -X vocab.capacity=1500 -X input.time.field=date -X replay.docs=500)

for t in 1 2 3; do
    "$S" train "${X[@]}" -X threads=$t -o "$T/json$t.slda" "$T/docs.jsonl" >/dev/null 2>"$T/err$t" ||
        fail "train threads=$t: $(head -c 300 "$T/err$t")"
    "$S" train "${X[@]}" -X threads=$t -f jsonl -o "$T/stdin$t.slda" - \
        <"$T/docs.jsonl" \
        >/dev/null 2>&1 || fail "train threads=$t from stdin"
    "$S" train "${X[@]}" -X threads=$t -X input.text.field=title,body -o "$T/csv$t.slda" \
        "$T/docs.csv" >/dev/null 2>"$T/err$t" || fail "train csv threads=$t: $(head -c 300 "$T/err$t")"
    "$S" train "${X[@]}" -X threads=$t -X input.text.field=title,body -o "$T/tsv$t.slda" \
        "$T/docs.tsv" >/dev/null 2>"$T/err$t" || fail "train tsv threads=$t: $(head -c 300 "$T/err$t")"
done
for t in 2 3; do
    same_model "JSON file: threads=$t differs from threads=1" "$T/json1.slda" "$T/json$t.slda"
    same_model "JSON stdin: threads=$t differs from threads=1" "$T/stdin1.slda" "$T/stdin$t.slda"
    same_model "CSV: threads=$t differs from threads=1" "$T/csv1.slda" "$T/csv$t.slda"
    same_model "TSV: threads=$t differs from threads=1" "$T/tsv1.slda" "$T/tsv$t.slda"
done
same_model "the CSV twin differs from the JSON file" "$T/json1.slda" "$T/csv1.slda"
same_model "the TSV twin differs from the JSON file" "$T/json1.slda" "$T/tsv1.slda"
"$S" train -q -k 8 -X seed=11 -X vocab.capacity=1500 -X replay.docs=500 -X threads=2 -o "$T/text.slda" \
    "$T/docs.txt" >/dev/null 2>&1
same_model "the texts as raw text lines differ from the JSON file" "$T/json1.slda" "$T/text.slda"

# bad records in their places, with path:line, counted once, at any thread count
for t in 1 2; do
    "$S" train "${X[@]}" -X threads=$t -o "$T/bad$t.slda" "$T/bad.jsonl" >"$T/out" 2>"$T/err"
    for n in 3 300 700; do
        grep -q "bad.jsonl:$n: " "$T/err" && ok ||
            fail "threads=$t: no error naming bad.jsonl:$n: $(head -c 600 "$T/err")"
    done
    [ "$(grep -c 'bad.jsonl:[0-9]*: ' "$T/err")" = 3 ] && ok || fail "threads=$t: errors: $(cat "$T/err")"
    grep -q "rejected=3 " "$T/out" && ok || fail "threads=$t: summary $(cat "$T/out")"
done
same_model "bad.jsonl: threads=2 differs from threads=1" "$T/bad1.slda" "$T/bad2.slda"
same_model "bad.jsonl: the bad records changed the model" "$T/json1.slda" "$T/bad1.slda"
# a CSV row with a field too many, on the first line of a record that spans lines (line 602)
"$PY" - "$T/docs.csv" "$T/bad.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
rows[400][3] = "one\ntwo"
rows[400].append("extra")
with open(sys.argv[2], "w", newline="") as f:
    csv.writer(f).writerows(rows)
EOF
line=$(grep -n '^doc399,' "$T/bad.csv" | cut -d: -f1)
for t in 1 2; do
    "$S" train "${X[@]}" -X threads=$t -X input.text.field=title,body -o "$T/badcsv$t.slda" \
        "$T/bad.csv" >"$T/out" 2>"$T/err"
    grep -q "bad.csv:$line: 5 fields, the header has 4" "$T/err" && ok ||
        fail "threads=$t: no error naming bad.csv:$line: $(head -c 600 "$T/err")"
    grep -q "rejected=1 " "$T/out" && ok || fail "threads=$t: summary $(cat "$T/out")"
done
same_model "bad.csv: threads=2 differs from threads=1" "$T/badcsv1.slda" "$T/badcsv2.slda"

# ids: the "id" field, else the line number (JSON; infer reads no CSV)
"$S" infer "$T/json1.slda" "$T/bad.jsonl" 2>/dev/null | "$PY" -c '
import json, sys
ids = [json.loads(l)["id"] for l in sys.stdin if l.strip()]
# line 3 is bad: doc0, doc1, then doc2 on line 4; doc4 (no id) sits on line 6
sys.exit(0 if ids[:5] == ["doc0", "doc1", "doc2", "doc3", "6"] and "broken" not in ids else 1)
' && ok || fail "JSON ids"

checks_done 0082-threads_records
