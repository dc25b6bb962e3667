#!/usr/bin/env bash
# 0021-cli_train_nothing.sh - `train` that learns nothing fails honestly: an empty file,
# empty standard input, a binary file, every document held out -> exit 1, a message
# saying why (with the first rejection reason), and no model file written (an existing
# one is left alone). A .gz file either trains from the decompressed text or is refused
# with a non-zero exit, never exit 0 with an empty model.
set -u
. "$(dirname "$0")/checks.sh"
cd "$T" || exit 1
run() { # command... (exit status in $rc, output in out and err)
    timeout 120 "$@" >out 2>err; rc=$?
}
TRAIN=("$S" train -q -k 2 -X text.stopwords=none -X seed=1)
nothing_trained() { # description model-file reason-regex
    local what=$1 model=$2 reason=$3
    [ "$rc" -eq 1 ] && ok || fail "$what: exit $rc, wanted 1; stderr: $(head -c 400 err)"
    grep -q 'nothing trained' err && ok || fail "$what: no 'nothing trained' message: $(head -c 400 err)"
    grep -Eq "$reason" err && ok || fail "$what: message does not say why (/$reason/): $(head -c 600 err)"
    [ -e "$model" ] && fail "$what: a model file was written" || ok
}

for i in $(seq 1 40); do
    echo "apple banana cherry fruit orchard apple juice"
    echo "engine piston turbine motor gearbox engine fuel"
done >docs.txt

: >empty.txt
run "${TRAIN[@]}" -o empty.slda empty.txt
nothing_trained "empty file" empty.slda 'no documents in empty.txt'

printf '\n\n   \n\n' >blank.txt
run "${TRAIN[@]}" -o blank.slda blank.txt
nothing_trained "blank lines only" blank.slda 'no documents in blank.txt'

: | "${TRAIN[@]}" -o stdin.slda - >out 2>err; rc=$?
nothing_trained "empty standard input" stdin.slda 'no documents in standard input'

# Binary bytes: every record is rejected; the message gives the count and the first reason.
printf '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00\x01\x00\x00\x00\xff\xfe\n\xc3\x28\xa0\xa1\n\xf0\x28\x8c\x28\n' >binary.dat
run "${TRAIN[@]}" -o binary.slda -f text binary.dat
nothing_trained "binary file" binary.slda 'all 3 records were rejected \(the first: binary.dat:1: '
grep -q 'rejected records: 3 ' err && ok || fail "binary file: no rejected-records count: $(cat err)"

# Every document held out: nothing left to train on.
run "${TRAIN[@]}" --heldout 1 -o heldout.slda docs.txt
nothing_trained "everything held out" heldout.slda 'all 80 documents were held out'

# An existing model is not replaced by an empty one.
run "${TRAIN[@]}" -o keep.slda docs.txt
[ "$rc" -eq 0 ] && ok || fail "train docs.txt: exit $rc: $(cat err)"
cp keep.slda keep.orig
run "${TRAIN[@]}" -o keep.slda empty.txt
[ "$rc" -eq 1 ] && ok || fail "empty file over an existing model: exit $rc"
cmp -s keep.slda keep.orig && ok || fail "an existing model was replaced by a run that trained nothing"

# Several inputs, all empty.
run "${TRAIN[@]}" -o multi.slda empty.txt blank.txt
nothing_trained "several empty inputs" multi.slda 'no documents in the 2 inputs'

# A .gz file: trained from the decompressed text, or refused - never an empty model and exit 0.
gzip -c docs.txt >docs.txt.gz
run "${TRAIN[@]}" -o gz.slda docs.txt.gz
if [ "$rc" -eq 0 ]; then
    grep -q '^train docs=80 ' out && ok || fail ".gz: exit 0 but not trained on the 80 documents: $(cat out)"
    "$S" topics -n 5 gz.slda >topics 2>/dev/null
    grep -q apple topics && grep -q engine topics && ok || fail ".gz: topics are not the text's words: $(cat topics)"
else
    [ -e gz.slda ] && fail ".gz: refused (exit $rc) but a model file was written" || ok
    [ -s err ] && ok || fail ".gz: refused without a message"
fi

checks_done 0021-cli_train_nothing
