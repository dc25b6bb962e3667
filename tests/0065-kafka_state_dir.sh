#!/bin/bash
# 0065-kafka_state_dir - where `streamlda run` puts its snapshots when snapshot.dir is not given
# (issue 25, item 7): ./snapshots of the working directory, its full path in the start line;
# under systemd's StateDirectory= (STATE_DIRECTORY, the first of its paths) <that>/snapshots,
# made at start; an explicit snapshot.dir wins over both.
set -u
. "$(dirname "$0")/checks.sh"
at_exit '[ -n "${svc:-}" ] && kill "$svc" 2>/dev/null; wait 2>/dev/null'

start() { # LOG ENV [-X k=v]: run --embedded in $T/wd until its snapshot line, then stop
    local log=$1 envs=$2
    shift 2
    (cd "$T/wd" && exec env $envs "$S" run --embedded -X http.port=-1 -X status.ms=0 \
        -X kafka.session.timeout.ms=6000 -X kafka.heartbeat.interval.ms=500 "$@" 2>"$log" \
        >/dev/null) &
    svc=$!
    for _ in $(seq 300); do grep -q "snapshots: " "$log" && break; sleep 0.1; done
    kill -TERM "$svc" 2>/dev/null
    wait "$svc" 2>/dev/null
    svc=
}
mkdir -p "$T/wd"
start "$T/plain.log" "-u STATE_DIRECTORY"
grep -q "snapshots: $T/wd/snapshots (snapshot.dir;" "$T/plain.log" && ok ||
    fail "default: ./snapshots, in full: $(grep 'snapshots:' "$T/plain.log")"
start "$T/state.log" STATE_DIRECTORY="$T/state:$T/other"
grep -q "snapshots: $T/state/snapshots (snapshot.dir;" "$T/state.log" && ok ||
    fail "STATE_DIRECTORY: <first>/snapshots: $(grep 'snapshots:' "$T/state.log")"
check "STATE_DIRECTORY/snapshots made at start" test -d "$T/state/snapshots"
check "the other path untouched" test ! -e "$T/other"
mkdir -p "$T/mine"
start "$T/explicit.log" STATE_DIRECTORY="$T/state3" -X snapshot.dir="$T/mine"
grep -q "snapshots: $T/mine (snapshot.dir;" "$T/explicit.log" && ok ||
    fail "an explicit snapshot.dir wins: $(grep 'snapshots:' "$T/explicit.log")"
check "STATE_DIRECTORY unused then" test ! -e "$T/state3"
"$S" run --help | grep -q "STATE_DIRECTORY" && ok || fail "run --help names STATE_DIRECTORY"
checks_done 0065-kafka_state_dir
