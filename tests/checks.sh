# checks.sh - what the shell tests share, sourced first thing (after set -u):
#   . "$(dirname "$0")/checks.sh"
# $S the binary ($STREAMLDA), $T a scratch directory (slda-NNNN-*, removed at exit when the test
# passes, kept and named when it fails), pass/fail counters (ok, fail), check (a command's exit
# status as a check), expect_rc (a command's exit status, its output in $T/out and $T/err), says
# (that stderr's text), same_model (two snapshots hold the same model, bit for bit), at_exit (a
# command run at exit, e.g. to stop a background process), and
# checks_done NAME, the closing line and the test's exit status.
S=${STREAMLDA:?STREAMLDA must point at the binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/slda-$(basename "$0" | cut -c1-4)-XXXXXX")
checks_at_exit=()
at_exit() { # command: evaluated at exit, in the order given, before $T is removed
    checks_at_exit+=("$1")
}
checks_exit() {
    local rc=$? c
    for c in "${checks_at_exit[@]}"; do eval "$c"; done
    if [ "$rc" -eq 0 ]; then rm -rf "$T"; else echo "kept $T for inspection" >&2; fi
    return "$rc"
}
trap checks_exit EXIT
fails=0
pass=0
ok() { pass=$((pass + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
check() { # description command...: passes when the command exits 0
    local what=$1
    shift
    if "$@"; then ok; else fail "$what"; fi
}
expect_rc() { # expected-rc description command...
    local want=$1 what=$2
    shift 2
    timeout 120 "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else
        fail "$what: exit $rc, wanted $want; stderr: $(head -c 400 "$T/err")"
    fi
}
says() { # description regex: the last expect_rc's stderr matches
    grep -Eq "$2" "$T/err" && ok || fail "$1: stderr does not match /$2/: $(head -c 400 "$T/err")"
}
checks_done() { # name
    echo "$1: $pass passed, $fails failed"
    [ "$fails" -eq 0 ]
}
same_model() { # description a.slda b.slda: the same topic-word counts and words, bit for bit
    "$S" export "$2" --npy "$T/a.npy" --vocab "$T/a.voc" 2>/dev/null &&
        "$S" export "$3" --npy "$T/b.npy" --vocab "$T/b.voc" 2>/dev/null &&
        cmp -s "$T/a.npy" "$T/b.npy" && cmp -s "$T/a.voc" "$T/b.voc" && ok || fail "$1"
}
