#!/usr/bin/env bash
# 0033-text_languages.sh - a multilingual stream from the command line (text.segment=unicode,
# text.stopwords=auto, the defaults): no language's stop words in the topics, Chinese and
# Japanese cut into words, each document's language in infer's output with a record's "lang"
# (or the field infer's --lang-field names) overriding identification; text.segment=simple
# keeps the old rule (a clause one token).
set -u
. "$(dirname "$0")/checks.sh"
run() { "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }

# Two themes per language, each sentence wrapped in that language's stop words.
python3 - "$T/multi.jsonl" <<'PY'
import json, random, sys
r = random.Random(7)
langs = {
    "de": ("die der und ist das nicht ein sie mit den".split(),
           ["katze hund garten futter", "motor getriebe werkstatt reifen"]),
    "fr": ("le la les et est que une dans pour pas".split(),
           ["fromage vin boulangerie marché", "élection ministre parlement vote"]),
    "es": ("el los las por una con para del que como".split(),
           ["fútbol equipo partido estadio", "lluvia tormenta nubes viento"]),
    "ru": ("что это как если все когда они был она его".split(),
           ["школа учитель урок ученики", "поезд вокзал билет рельсы"]),
}
out = open(sys.argv[1], "w")
n = 0
for _ in range(40):
    for code, (stops, themes) in langs.items():
        for theme in themes:
            words = theme.split() * 3 + r.sample(stops, 8)
            r.shuffle(words)
            n += 1
            out.write(json.dumps({"id": "%s%d" % (code, n), "text": " ".join(words)},
                                 ensure_ascii=False) + "\n")
    zh = ["我们的机器学习研究需要更多的数据和计算", "中国的经济市场和银行政策正在改变"]
    ja = ["東京大学の研究者が人工知能を開発した", "株式会社の社長が記者会見を行った"]
    for s in zh + ja:
        n += 1
        out.write(json.dumps({"id": "cjk%d" % n, "text": s}, ensure_ascii=False) + "\n")
PY

printf '{"id":"junk","text":"%s zzzz"}\n' "$(printf 'aGVsbGdvcmxk%.0s' $(seq 6))" >>"$T/multi.jsonl"
run "$S" train -q -k 12 -X seed=3 -o "$T/m.slda" "$T/multi.jsonl"
[ "$(cat "$T/rc")" -eq 0 ] && ok || fail "train: $(cat "$T/err")"
grep -q "1 tokens longer than text.token.max=50 characters were dropped" "$T/err" && ok \
    || fail "over-long token not counted: $(cat "$T/err")"
"$S" topics -n 10 "$T/m.slda" >"$T/topics" 2>&1
stops='die|der|und|ist|das|nicht|le|la|les|et|est|que|el|los|las|por|una|con|para|что|это|как|все|когда|的|和'
grep -Eqw "$stops" "$T/topics" && fail "stop words in topics: $(cat "$T/topics")" || ok
grep -Eqw 'katze|motor|fromage|élection|fútbol|школа|поезд' "$T/topics" && ok \
    || fail "topics lost the content words: $(cat "$T/topics")"
# Chinese and Japanese as words, never a whole clause
grep -Eqw '机器|学习|经济|银行' "$T/topics" && grep -Eqw '研究者|人工|株式会社|社長' "$T/topics" \
    && ok || fail "no CJK words: $(cat "$T/topics")"
grep -q '我们的机器' "$T/topics" && fail "a Chinese clause is one token: $(cat "$T/topics")" || ok

# infer: each document's language; a record's "lang" overrides identification
printf '%s\n' '{"id":"a","text":"die Katze und der Hund sind nicht im Garten"}' \
    '{"id":"b","lang":"fr","text":"die Katze und der Hund sind nicht im Garten"}' \
    '{"id":"c","text":"我们的机器学习研究"}' '{"id":"d","text":"Кошка и собака в школе"}' \
    '{"id":"e","language":"pt-BR","tokens":["Katze","Hund"]}' >"$T/q.jsonl"
run "$S" infer "$T/m.slda" "$T/q.jsonl"
[ "$(cat "$T/rc")" -eq 0 ] && ok || fail "infer: $(cat "$T/err")"
for want in 'a de' 'b fr' 'c zh' 'd ru' 'e pt'; do
    grep -q "\"id\":\"${want% *}\",\"lang\":\"${want#* }\"" "$T/out" && ok \
        || fail "infer: want $want: $(cat "$T/out")"
done

# infer --lang-field NAME, as train's: the named field, and only it, gives the language (a
# record without it is identified)
printf '%s\n' '{"id":"f","idioma":"fr","text":"die Katze und der Hund sind nicht im Garten"}' \
    '{"id":"g","idioma":"es","lang":"ru","text":"die Katze und der Hund sind nicht im Garten"}' \
    '{"id":"h","lang":"ru","text":"die Katze und der Hund sind nicht im Garten"}' >"$T/r.jsonl"
run "$S" infer --lang-field idioma "$T/m.slda" "$T/r.jsonl"
[ "$(cat "$T/rc")" -eq 0 ] && ok || fail "infer --lang-field: exit $(cat "$T/rc"): $(cat "$T/err")"
for want in 'f fr' 'g es' 'h de'; do
    grep -q "\"id\":\"${want% *}\",\"lang\":\"${want#* }\"" "$T/out" && ok \
        || fail "infer --lang-field idioma: want $want: $(cat "$T/out")"
done

# text.segment=simple: the rule of older snapshots, a Chinese clause one token
run "$S" train -q -k 12 -X seed=3 -X text.segment=simple -X text.stopwords=smart \
    -o "$T/s.slda" "$T/multi.jsonl"
[ "$(cat "$T/rc")" -eq 0 ] && ok || fail "train simple: $(cat "$T/err")"
"$S" topics -n 40 "$T/s.slda" >"$T/s.topics" 2>&1
grep -q '我们的机器学习研究需要更多的数据和计算' "$T/s.topics" && ok \
    || fail "simple: the clause is not one token: $(cat "$T/s.topics")"
run "$S" infer "$T/s.slda" "$T/q.jsonl"
grep -q '"id":"a","topics"' "$T/out" && grep -q '"id":"b","lang":"fr"' "$T/out" && ok \
    || fail "simple: no identification, the given lang kept: $(cat "$T/out")"

checks_done 0033-text_languages
