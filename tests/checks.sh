# checks.sh - what the shell tests share, sourced first thing (after set -u):
#   . "$(dirname "$0")/checks.sh"
# $S the binary ($STREAMLDA), $T a scratch directory removed at exit, pass/fail counters
# (ok, fail), expect_rc (a command's exit status, its output in $T/out and $T/err), says (that
# stderr's text), and checks_done NAME, the closing line and the test's exit status.
S=${STREAMLDA:?STREAMLDA must point at the binary}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass=0
ok() { pass=$((pass + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
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
