#!/usr/bin/env bash
# speed.sh - what the unicode tokenizer costs raw text in wall time: `streamlda train` of two
# binaries, alternating runs, one thread, on English news (Reuters-21578, title + body), English
# mail (20 Newsgroups training messages, subject + body: headers, quotes, addresses) and, with
# PARA, Chinese and Japanese paragraphs (manpara.py's JSON lines, zh_CN + ja). Prints the median
# of each binary's tokens/s (as train reports it: tokens kept, so a tokenizer that keeps more
# tokens trains more), wall and user seconds, and NEW / OLD.
#
#   bench/text/speed.sh OLD NEW       OLD, NEW: directories holding a `streamlda` binary
#   env: SLDA_SHARED_DIR (default ../shared beside the repository), K (100), RUNS (5),
#        PARA (manpara.py output; its zh_CN and ja lines are the CJK corpus: NEW only, as the
#        simple tokenizer takes a clause for a word and trains about 75 times slower there;
#        CJK_OLD=1 runs OLD on it too, about 2 minutes a run)
#
# Wall time counts: run it on a quiet machine (bench/callgrind.sh gives instruction counts that
# do not depend on the load).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${SLDA_SHARED_DIR:-$repo/../shared}
OLD=$(cd "${1:?usage: speed.sh OLD_DIR NEW_DIR}" && pwd)
NEW=$(cd "${2:?usage: speed.sh OLD_DIR NEW_DIR}" && pwd)
K=${K:-100}
RUNS=${RUNS:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 "$repo/bench/reuters_text.py" "$shared/data/reuters21578/reuters21578.by-time.tsv.gz" \
    "$T/reuters.txt"
python3 "$repo/bench/news20_text.py" "$shared/data/20news-bydate/20news-bydate.tar.gz" \
    "$T/20news.txt"
corpora="reuters 20news"
if [ -n "${PARA:-}" ]; then
    python3 -c 'import json, sys
with open(sys.argv[2], "w") as o:
    for line in open(sys.argv[1]):
        d = json.loads(line)
        if d.get("dir") in ("zh_CN", "ja"):
            o.write(" ".join(d["text"].split()) + "\n")' "$PARA" "$T/cjk.txt"
    corpora="$corpora cjk"
fi
run() { # bin corpus: "tokens/s wall user" of one run
    { /usr/bin/time -f "TIME %e %U" "$1/streamlda" train -k "$K" -X threads=1 -f text \
        "$T/$2.txt" > /dev/null; } 2> "$T/err"
    local tps
    tps=$(grep '^progress' "$T/err" | tail -1 | sed 's/.*tokens\/s \([0-9]*\).*/\1/')
    echo "$tps $(sed -n 's/^TIME //p' "$T/err")"
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
declare -A dir=([old]="$OLD" [new]="$NEW") m
printf "%-8s %-4s %12s %7s %7s\n" corpus bin tokens/s wall user
for corpus in $corpora; do
    : > "$T/old" && : > "$T/new"
    bins="old new"
    [ "$corpus" = cjk ] && [ "${CJK_OLD:-0}" != 1 ] && bins=new
    for _ in $(seq "$RUNS"); do
        for b in $bins; do run "${dir[$b]}" "$corpus" >> "$T/$b"; done
    done
    for b in $bins; do # medians of tokens/s, wall, user
        for c in 1 2 3; do m[$b,$c]=$(cut -d' ' -f$c "$T/$b" | median); done
        printf '%-8s %-4s %12.0f %7.2f %7.2f\n' "$corpus" "$b" "${m[$b,1]}" "${m[$b,2]}" "${m[$b,3]}"
    done
    [ "$bins" = new ] && continue
    awk -v a="${m[old,1]}" -v b="${m[new,1]}" -v c="${m[old,2]}" -v d="${m[new,2]}" \
        'BEGIN {printf "%-8s new/old: tokens/s %.3f, wall %.3f\n", "", b / a, d / c}'
done
