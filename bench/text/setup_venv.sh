#!/bin/bash
# setup_venv.sh - the Python environment of the text benchmarks, from PyPI into a venv: the
# reference language detector (lingua: langid.py) and segmenters (jieba for Chinese, fugashi with
# unidic-lite for Japanese: cjk_words.py).
#
#   bench/text/setup_venv.sh [VENV]      (default: build/text-venv in the repository)
#
# Nothing outside VENV is changed. Needs Debian's python3-venv. Idempotent: an existing venv that
# imports the packages is kept. Versions pinned so the figures in docs/text.md can be reproduced.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${1:-$repo/build/text-venv}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import lingua, jieba, fugashi' 2>/dev/null; then
    echo "setup_venv: $venv ready" >&2
    exit 0
fi
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --quiet "lingua-language-detector==2.1.1" "jieba==0.42.1" "fugashi==1.5.2" \
    "unidic-lite==1.0.8"
"$venv/bin/python" -c 'import lingua, jieba, fugashi; fugashi.Tagger(); print("setup_venv: ready")' >&2
