#!/usr/bin/env bash
# 0020-cli_outputs.sh - outputs never clobber what a path is: `export` and `train -o`
# replace a regular file atomically (keeping its mode), follow a symlink (relative,
# absolute, into another directory, dangling) and replace its target while the link
# stays a link, write straight into a FIFO (read by a background reader) and to
# standard output for "-", and refuse a directory. Everything happens in a scratch
# directory; no path under /dev is used.
set -u
. "$(dirname "$0")/checks.sh"
cd "$T" || exit 1
no_temp_files() { # dir...
    local left
    left=$(find "$@" -name '*.tmp.*' 2>/dev/null)
    [ -z "$left" ] && ok || fail "temporary files left behind: $left"
}
is_snapshot() { # file description
    if [ "$(head -c 8 "$1" 2>/dev/null)" = SLDASNAP ] && "$S" topics -n 3 "$1" >/dev/null 2>&1; then ok
    else fail "$2: $1 is not a readable snapshot"; fi
}

for i in $(seq 1 60); do
    echo "apple banana cherry fruit orchard apple juice"
    echo "engine piston turbine motor gearbox engine fuel"
done >docs.txt
TRAIN=("$S" train -q -k 2 -X text.stopwords=none -X seed=5)

expect_rc 0 "train -o a regular file" "${TRAIN[@]}" -o ref.slda docs.txt
is_snapshot ref.slda "regular file"
expect_rc 0 "export to regular files" "$S" export ref.slda --npy ref.npy --vocab ref.vocab
[ "$(head -c 6 ref.npy | tail -c 5)" = NUMPY ] && ok || fail "ref.npy is not a .npy file"
[ "$(wc -l <ref.vocab)" -eq 12 ] && ok || fail "ref.vocab has $(wc -l <ref.vocab) lines, wanted 12"
"$S" topics -n 5 ref.slda >ref.topics 2>/dev/null

# A replaced regular file keeps its permission bits.
chmod 640 ref.slda
expect_rc 0 "train -o over a 0640 file" "${TRAIN[@]}" -o ref.slda docs.txt
[ "$(stat -c %a ref.slda)" = 640 ] && ok || fail "replaced file has mode $(stat -c %a ref.slda), wanted 640"

# Relative symlink in the same directory: the target is replaced, the link stays.
echo old >model-target.slda
ln -s model-target.slda rel.slda
expect_rc 0 "train -o a relative symlink" "${TRAIN[@]}" -o rel.slda docs.txt
[ -L rel.slda ] && [ "$(readlink rel.slda)" = model-target.slda ] && ok || fail "rel.slda is no longer the symlink: $(ls -l rel.slda)"
is_snapshot model-target.slda "relative symlink target"
no_temp_files "$T"

# Relative symlink into another directory: the temp file goes beside the target.
mkdir -p sub other
echo old >other/phi.npy
echo old >other/words.txt
ln -s ../other/phi.npy sub/phi.npy
ln -s ../other/words.txt sub/words.txt
expect_rc 0 "export through symlinks into another directory" "$S" export ref.slda --npy sub/phi.npy --vocab sub/words.txt
[ -L sub/phi.npy ] && [ -L sub/words.txt ] && ok || fail "export replaced the symlinks: $(ls -l sub)"
cmp -s other/phi.npy ref.npy && ok || fail "symlink target other/phi.npy does not hold the export"
cmp -s other/words.txt ref.vocab && ok || fail "symlink target other/words.txt does not hold the vocabulary"
no_temp_files sub other

# Absolute symlink, through a chain of two links.
ln -s "$T/other/chain-target.slda" chain2.slda
ln -s chain2.slda chain1.slda
echo old >other/chain-target.slda
expect_rc 0 "train -o through a chain of symlinks" "${TRAIN[@]}" -o chain1.slda docs.txt
[ -L chain1.slda ] && [ -L chain2.slda ] && ok || fail "the symlink chain was replaced: $(ls -l chain1.slda chain2.slda)"
is_snapshot other/chain-target.slda "absolute symlink chain target"

# A dangling symlink: its target is created, the link stays.
ln -s other/new.npy dangling.npy
expect_rc 0 "export through a dangling symlink" "$S" export ref.slda --npy dangling.npy
[ -L dangling.npy ] && ok || fail "dangling.npy is no longer a symlink"
cmp -s other/new.npy ref.npy && ok || fail "the dangling symlink's target was not created with the export"

# A FIFO is written straight (a reader in the background), never renamed over.
fifo_read() { # fifo output-file command...
    local fifo=$1 got=$2; shift 2
    timeout 60 cat "$fifo" >"$got" &
    local reader=$!
    expect_rc 0 "$*" "$@"
    wait "$reader" || fail "FIFO reader of $fifo: exit $?"
    [ -p "$fifo" ] && ok || fail "$fifo is no longer a FIFO: $(ls -l "$fifo")"
}
mkfifo pipe.npy pipe.txt pipe.slda
fifo_read pipe.npy got.npy "$S" export ref.slda --npy pipe.npy
cmp -s got.npy ref.npy && ok || fail "the .npy read from the FIFO differs from the file export"
fifo_read pipe.txt got.txt "$S" export ref.slda --vocab pipe.txt
cmp -s got.txt ref.vocab && ok || fail "the vocabulary read from the FIFO differs"
fifo_read pipe.slda got.slda "${TRAIN[@]}" -o pipe.slda docs.txt
is_snapshot got.slda "snapshot through a FIFO"
"$S" topics -n 5 got.slda >got.topics 2>/dev/null
cmp -s got.topics ref.topics && ok || fail "the snapshot through the FIFO has other topics: $(cat got.topics)"
grep -qi fsync err && fail "fsync error on a FIFO: $(cat err)" || ok
no_temp_files "$T"

# The broker's --address-file goes through the same path (a FIFO here).
mkfifo addr.fifo
timeout 60 head -n 1 addr.fifo >got.addr &
reader=$!
"$S" broker --brokers 1 --address-file addr.fifo >broker.out 2>broker.err &
broker=$!
wait "$reader" || fail "address-file FIFO reader: exit $?"
kill -TERM "$broker" 2>/dev/null
wait "$broker"
[ -p addr.fifo ] && ok || fail "broker replaced the address-file FIFO: $(ls -l addr.fifo)"
[ -s got.addr ] && [ "$(head -n 1 got.addr)" = "$(head -n 1 broker.out)" ] && ok ||
    fail "address read from the FIFO '$(cat got.addr)' is not the broker's '$(head -n 1 broker.out)'"
no_temp_files "$T"

# "-" is standard output, never a file named "-".
expect_rc 0 "export --vocab -" "$S" export ref.slda --vocab -
cmp -s out ref.vocab && ok || fail "export --vocab - printed: $(head -c 200 out)"
expect_rc 0 "export --npy -" "$S" export ref.slda --npy -
cmp -s out ref.npy && ok || fail "export --npy - does not print the .npy bytes"
expect_rc 0 "export --npy FILE --vocab -" "$S" export ref.slda --npy both.npy --vocab -
cmp -s out ref.vocab && cmp -s both.npy ref.npy && ok || fail "--npy FILE --vocab - wrote the wrong things"
expect_rc 2 "both outputs on standard output" "$S" export ref.slda --npy - --vocab -
expect_rc 0 "train -o -" "${TRAIN[@]}" -o - docs.txt
cp out stdout.slda
is_snapshot stdout.slda "train -o -"
grep -q '^train docs=120 ' err && ok || fail "train -o -: the summary line is not on stderr: $(head -c 300 err)"
[ -e ./- ] && fail "a file named '-' was written" || ok

# A directory is refused and left alone.
mkdir adir
expect_rc 1 "export --npy DIRECTORY" "$S" export ref.slda --npy adir
grep -q 'adir' err && grep -qi 'directory' err && ok || fail "directory refusal message: $(cat err)"
expect_rc 1 "train -o DIRECTORY" "${TRAIN[@]}" -o adir docs.txt
[ -d adir ] && [ -z "$(ls -A adir)" ] && ok || fail "adir was changed"
# ... and before training, not after the whole run (no summary line)
[ -s out ] && fail "train -o DIRECTORY trained first: $(cat out)" || ok
expect_rc 1 "train -o into a missing directory" "${TRAIN[@]}" -o no-such-dir/m.slda docs.txt
grep -q 'no-such-dir/m.slda.*No such file' err && ok || fail "missing directory message: $(cat err)"
[ -s out ] && fail "train -o into a missing directory trained first: $(cat out)" || ok

# A failed write (file size limit) leaves the old file whole and no temp file.
for a in {a..z}; do for b in {a..z}; do echo "word$a$b other$a$b thing$b$a"; done; done >big.txt
cp ref.npy keep.npy
expect_rc 0 "train a larger model" "$S" train -q -k 20 -X text.stopwords=none -o big.slda big.txt
( trap '' XFSZ; ulimit -f 8; exec "$S" export big.slda --npy keep.npy ) 2>&1 | cat >err
rc=${PIPESTATUS[0]}
[ "$rc" -eq 1 ] && ok || fail "export over the file size limit: exit $rc, wanted 1: $(cat err)"
grep -q 'keep.npy' err && ok || fail "failed export does not name the file: $(cat err)"
cmp -s keep.npy ref.npy && ok || fail "a failed export damaged the old file"
no_temp_files "$T"

checks_done 0020-cli_outputs
