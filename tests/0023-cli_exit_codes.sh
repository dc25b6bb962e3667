#!/usr/bin/env bash
# 0023-cli_exit_codes.sh - topics, infer and export report bad inputs and failed outputs
# with a message and the documented exit code (README: 0 success, 1 runtime failure,
# 2 usage error): an empty, non-snapshot, missing or directory SNAPSHOT; infer on empty
# input or input whose every record is rejected; standard output that cannot be
# written (file size limit); two outputs on standard output.
set -u
. "$(dirname "$0")/checks.sh"
cd "$T" || exit 1

for i in $(seq 1 40); do
    echo "apple banana cherry fruit orchard apple juice"
    echo "engine piston turbine motor gearbox engine fuel"
done >docs.txt
expect_rc 0 "train" "$S" train -q -k 2 -X text.stopwords=none -o m.slda docs.txt

: >empty.slda
cp docs.txt text.slda
mkdir dir.slda
for cmd in "topics" "infer" "export --npy x.npy"; do
    # shellcheck disable=SC2086
    set -- $cmd
    expect_rc 1 "$1 on an empty file" "$S" "$@" empty.slda
    says "$1 on an empty file" 'empty.slda.*(truncated|empty)'
    expect_rc 1 "$1 on a text file" "$S" "$@" text.slda
    says "$1 on a text file" 'text.slda'
    expect_rc 1 "$1 on a missing file" "$S" "$@" missing.slda
    says "$1 on a missing file" 'missing.slda.*No such file'
    expect_rc 1 "$1 on a directory" "$S" "$@" dir.slda
    says "$1 on a directory" 'dir.slda.*[Dd]irectory'
done
[ -e x.npy ] && fail "export wrote x.npy from a bad snapshot" || ok

# infer: empty input is a failure with a reason, like train; some rejects are not.
: >empty.txt
expect_rc 1 "infer on an empty file" "$S" infer m.slda empty.txt
says "infer on an empty file" 'no documents in empty.txt'
: | "$S" infer m.slda >out 2>err; rc=$?
[ "$rc" -eq 1 ] && ok || fail "infer on empty standard input: exit $rc, wanted 1"
says "infer on empty standard input" 'no documents in standard input'
printf '\xff\xfe\n\xc3\x28\n' >bad.txt
expect_rc 1 "infer with every record rejected" "$S" infer -f text m.slda bad.txt
says "infer with every record rejected" 'all 2 records were rejected'
printf 'apple banana\n\xff\xfe\nengine motor\n' >mixed.txt
expect_rc 0 "infer with one bad record" "$S" infer -f text m.slda mixed.txt
[ "$(wc -l <out)" -eq 2 ] && ok || fail "infer printed $(wc -l <out) mixtures, wanted 2"
expect_rc 1 "infer with a missing input" "$S" infer m.slda docs.txt missing.txt
says "infer with a missing input" 'missing.txt'

# Two outputs cannot share standard output.
expect_rc 2 "export --npy - --vocab -" "$S" export m.slda --npy - --vocab -

# Standard output that cannot be written (file size limit; SIGXFSZ ignored so the
# write fails with EFBIG) is a runtime failure, not success.
for cmd in "topics m.slda" "infer m.slda docs.txt" "export m.slda --vocab -" "train -q -k 2 docs.txt"; do
    # shellcheck disable=SC2086
    ( trap '' XFSZ; ulimit -f 0; exec "$S" $cmd >full.out ) 2>&1 | cat >err
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 1 ] && ok || fail "$cmd into a full standard output: exit $rc, wanted 1: $(head -c 300 err)"
    grep -Eq 'standard output|"-"' err && ok || fail "$cmd: no message about standard output: $(head -c 300 err)"
done

checks_done 0023-cli_exit_codes
