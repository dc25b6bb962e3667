#!/bin/bash
# segment_f1.sh - streamlda's Chinese and Japanese word cuts against jieba and fugashi +
# unidic-lite (token-boundary P/R/F1, where the granularity differs, merged frequent pairs and
# the topics): builds bench/text/segdump.c against build/libslda.a, reads the paragraphs of
# Debian's manpages-zh and manpages-ja (installed here with apt-get when missing: root needed),
# and runs segment_f1.py in the venv of setup_venv.sh.
#
#   bench/text/segment_f1.sh [--per-lang N] [--seed S] [-k K]     (defaults 2000, 1, 20)
#
# Scratch files in a temporary directory, removed at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
for p in manpages-zh manpages-ja; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null
    fi
done
bash "$here/setup_venv.sh"
cmake --build "$repo/build" -j2 --target slda streamlda >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -I"$repo/include" -I"$repo/src" "$here/segdump.c" \
    "$repo/build/libslda.a" $(pkg-config --libs icu-uc icu-i18n) -lmsgpackc -lz -lm -lpthread \
    -o "$T/segdump"
python3 "$here/manpara.py" /usr/share/man zh_CN ja >"$T/para.jsonl"
"$repo/build/text-venv/bin/python" "$here/segment_f1.py" "$T/segdump" "$repo/build/streamlda" \
    "$T/para.jsonl" "$@"
