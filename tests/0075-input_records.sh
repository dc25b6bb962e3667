#!/usr/bin/env bash
# 0075-input_records.sh - delimited files and named fields are read as records, never as raw
# text: a TSV with a header (named .txt, detected from its header line) trains on its text
# column only (before: its header and source column became words of every topic, exit 0); a
# TSV without a text column is refused with its columns named (before: read as raw text,
# exit 0); CSV per RFC 4180 (quoted commas, doubled quotes, a line break inside quotes) with
# the text joined from two columns (--text-field title,body), an id column and a YYYYMMDD time
# column feeding the tracker; a row with a wrong field count is rejected with file:line and
# counted; JSON lines with --text-field/--id-field; --time-field on raw text is refused; a
# CSV/TSV language column (lang, language, or --lang-field NAME) overrides identification in
# infer's output and picks the stop list (before: the column was ignored, the language identified).
set -u
. "$(dirname "$0")/checks.sh"
prints() { # description regex: the last expect_rc's standard output matches
    grep -Eq "$2" "$T/out" && ok || fail "$1: stdout does not match /$2/: $(head -c 400 "$T/out")"
}

# 1. a TSV named .txt: its text column only
printf 'id\tsource\ttext\tdate\n1\twirefeed\tstocks fell sharply markets traders\t2020-01-01\n2\tpressdesk\tfootball game season players\t2020-01-02\n' >"$T/a.txt"
expect_rc 0 "tsv as .txt" "$S" train -q -k 2 -X seed=1 "$T/a.txt" -o "$T/a.slda"
prints "tsv: two documents, not three lines" "train docs=2 "
"$S" topics "$T/a.slda" >"$T/a.top" 2>/dev/null
grep -Eqw "source|wirefeed|pressdesk|date|text" "$T/a.top" &&
    fail "tsv: header or other columns became words: $(cat "$T/a.top")" || ok
grep -qw stocks "$T/a.top" && ok || fail "tsv: the text column's words are missing"

# 2. a TSV without a text column: refused, naming its columns and what to do
printf 'source\tbody\tdate\nwirefeed\tstocks fell\t2020-01-01\n' >"$T/b.txt"
expect_rc 1 "tsv without text column" "$S" train -q -k 2 "$T/b.txt" -o "$T/b.slda"
says "tsv refused" 'TSV with the columns source, body, date and no text column "text".*--text-field'
check "no model written" test ! -e "$T/b.slda"
# ... and read with the column named
expect_rc 0 "tsv --text-field body" "$S" train -q -k 2 --text-field body "$T/b.txt" -o "$T/b.slda"
prints "tsv body: one document" "train docs=1 "

# 3. CSV, RFC 4180, two text columns, id and YYYYMMDD time into the tracker
{
    echo 'id,title,body,day'
    echo 'n1,"Markets, stocks","traders said ""sell"" as stocks fell",20200101'
    echo 'n2,Football,"the season opened
with players and a game",20200102'
    echo 'n3,Stocks,markets rallied stocks traders,20200103'
    echo 'n4,Broken row,only three fields'
    echo 'n5,Season,football players game season,20200105'
} >"$T/c.csv"
expect_rc 0 "csv" "$S" train -q -k 2 -X seed=1 --text-field title,body --time-field day \
    --snapshot-dir "$T/csnap" "$T/c.csv" -o "$T/c.slda"
prints "csv: four documents" "train docs=4 "
says "csv: the broken row named with its line" 'c\.csv:6: .*3 fields, the header has 4'
says "csv: every good row in the prevalence" "prevalence: 4 documents"
"$S" topics -n 30 "$T/c.slda" >"$T/c.top" 2>/dev/null
grep -qw sell "$T/c.top" && grep -qw opened "$T/c.top" && grep -qw markets "$T/c.top" && ok ||
    fail "csv: quoted fields' words missing: $(cat "$T/c.top")"
grep -Eqw "n1|title|body|day|20200101" "$T/c.top" &&
    fail "csv: header, id or time became words" || ok
"$S" report "$T/csnap" --json "$T/c.json" 2>/dev/null
python3 - "$T/c.json" <<'PY' && ok || fail "csv: report windows"
import json, sys
p = json.load(open(sys.argv[1]))["prevalence"]
w = p["windows"]
assert sum(x["docs"] for x in w) == 4, w
assert w[0]["start_ms"] == 1577836800000, w[0]  # 2020-01-01, from 20200101
PY

# 4. JSON lines with other field names
printf '{"key":"a","body":"stocks markets traders fell"}\n{"key":"b","body":"football season game"}\n' >"$T/d.jsonl"
expect_rc 1 "jsonl without text" "$S" train -q -k 2 "$T/d.jsonl" -o "$T/d.slda"
expect_rc 0 "jsonl --text-field" "$S" train -q -k 2 --text-field body --id-field key \
    "$T/d.jsonl" -o "$T/d.slda"
prints "jsonl body: two documents" "train docs=2 "

# 5. a time field on a format without fields is refused, not ignored
printf 'stocks fell\nfootball game\n' >"$T/e.txt"
expect_rc 1 "time field on text" "$S" train -q -k 2 --time-field time -f text "$T/e.txt" \
    -o "$T/e.slda"
says "time field on text refused" "time field is named .* format has no fields"
# 6. a language column: "lang", else "language", else the column --lang-field names
{
    echo 'id,lang,text'
    echo 'g1,fr,"die Katze und der Hund sind nicht im Garten"'
    echo 'g2,,"die Katze und der Hund sind nicht im Garten"'
    echo 'g3,pt-BR,"die Katze und der Hund"'
} >"$T/l.csv"
expect_rc 0 "csv lang: train" "$S" train -q -k 2 -X seed=1 "$T/l.csv" -o "$T/l.slda"
expect_rc 0 "csv lang: infer" "$S" infer "$T/l.slda" "$T/l.csv"
for want in 'g1 fr' 'g2 de' 'g3 pt'; do
    prints "csv lang: $want" "\"id\":\"${want% *}\",\"lang\":\"${want#* }\""
done
printf 'id\tlanguage\ttext\nt1\tit\tdie Katze und der Hund\n' >"$T/l.tsv"
expect_rc 0 "tsv language: infer" "$S" infer "$T/l.slda" "$T/l.tsv"
prints "tsv language column" '"id":"t1","lang":"it"'
# --lang-field: German rows said to be English keep "und", "die" (not English stop words)
{
    echo 'id,idioma,text'
    for i in 1 2 3 4 5 6; do echo "h$i,en,die Katze und der Hund schlafen im Garten"; done
} >"$T/m.csv"
expect_rc 0 "csv --lang-field" "$S" train -q -k 2 -X seed=1 --lang-field idioma "$T/m.csv" \
    -o "$T/m.slda"
"$S" topics -n 10 "$T/m.slda" >"$T/m.top" 2>/dev/null
grep -qw und "$T/m.top" && grep -qw die "$T/m.top" && ok ||
    fail "csv --lang-field: the German stop list applied: $(cat "$T/m.top")"
grep -qw idioma "$T/m.top" && fail "csv --lang-field: the column became words" || ok
expect_rc 1 "csv --lang-field missing" "$S" train -q -k 2 --lang-field idioma "$T/l.csv" \
    -o "$T/n.slda"
says "csv --lang-field missing column" 'no column "idioma" \(input.lang.field, --lang-field\) among id, lang, text'
# JSON lines: the key -X input.lang.field names
for i in 1 2 3 4 5 6; do
    echo "{\"id\":\"j$i\",\"idioma\":\"en\",\"text\":\"die Katze und der Hund schlafen im Garten\"}"
done >"$T/m.jsonl"
expect_rc 0 "jsonl input.lang.field" "$S" train -q -k 2 -X seed=1 -X input.lang.field=idioma \
    "$T/m.jsonl" -o "$T/j.slda"
"$S" topics -n 10 "$T/j.slda" >"$T/j.top" 2>/dev/null
grep -qw und "$T/j.top" && ok || fail "jsonl input.lang.field: ignored: $(cat "$T/j.top")"
checks_done 0075-input_records
