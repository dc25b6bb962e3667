#!/usr/bin/env bash
# run.sh - documents after the shift until each new topic is found (births benchmark).
#
# bench/shift/run.sh [STREAMLDA] : for the synthetic shifting streams of gen.py (30,000
# documents from 5 topics, then 10,000 of which 70% come from 5 new topics; new topics with
# their own words, and sharing the old words), at K=10 and K=15, with births off and on, trains
# one pass on the first S+n documents for n = 500, 1000, ..., 10000 (deterministic: the run on a
# prefix is the long run's state at that document) and prints, for each new topic, the first n
# at which a learned topic is within L1 0.25 of it ("-" = never), then the final L1 of the old
# topics (max) and of the new ones. About 2 s per run on 2 cores: ~10 minutes in all.
set -u
S=${1:-$(dirname "$0")/../../build/streamlda}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FOUND=0.25
SEED=${SEED:-1} # the generator's seed: SEED=2 bench/shift/run.sh for another draw
python3 "$HERE/gen.py" --seed "$SEED" "$T/own"
python3 "$HERE/gen.py" --seed "$SEED" --shared "$T/shared"
printf "%-7s %-3s %-7s %-34s %-9s %s\n" stream K births "docs after shift to find new 0..4" old_max new_final
for data in own shared; do
    for k in 10 15; do
        for b in false true; do
            declare -a first=(- - - - -)
            for n in $(seq 500 500 10000); do
                head -n $((30000 + n)) "$T/$data.txt" >"$T/in.txt"
                "$S" train -q -k $k -X births=$b -o "$T/m.slda" "$T/in.txt" >/dev/null 2>&1
                "$S" export "$T/m.slda" --npy "$T/m.npy" --vocab "$T/m.voc"
                python3 "$HERE/match.py" "$T/$data.truth" "$T/m.npy" "$T/m.voc" >"$T/m.match"
                for i in 0 1 2 3 4; do
                    l1=$(awk -v i=$i '$1 == "new" && $2 == i { split($4, a, "="); print a[2] }' "$T/m.match")
                    if [ "${first[$i]}" = - ] && awk -v x="$l1" -v f=$FOUND 'BEGIN { exit !(x <= f) }'; then
                        first[$i]=$n
                    fi
                done
            done
            old=$(awk '$1 == "old" { split($4, a, "="); if (a[2] > m) m = a[2] } END { print m }' "$T/m.match")
            new=$(awk '$1 == "new" { split($4, a, "="); printf "%s ", a[2] }' "$T/m.match")
            printf "%-7s %-3s %-7s %-34s %-9s %s\n" $data $k $b "${first[*]}" "$old" "$new"
        done
    done
done
