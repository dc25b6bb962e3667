#!/bin/bash
# setup_venv.sh - the Python environment of the quality benchmark: numpy, scipy, gensim (peer)
# and tomotopy (an independent collapsed Gibbs sampler), from PyPI into a venv.
#
#   bench/quality/setup_venv.sh [VENV]      (default: build/quality-venv in the repository)
#
# Nothing outside VENV is changed. Needs Debian's python3-venv (python3 -m venv). Idempotent:
# an existing venv that imports all four packages is kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${1:-$repo/build/quality-venv}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import numpy, scipy, gensim, tomotopy' 2>/dev/null; then
    echo "setup_venv: $venv ready" >&2
    exit 0
fi
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
# Versions pinned so that the figures in docs/benchmarks.md can be reproduced.
"$venv/bin/pip" install --quiet "numpy==1.26.4" "scipy==1.11.4" "gensim==4.3.3" "tomotopy==0.12.7"
"$venv/bin/python" -c 'import numpy, scipy, gensim, tomotopy; print("setup_venv: numpy", numpy.__version__, "scipy", scipy.__version__, "gensim", gensim.__version__, "tomotopy", tomotopy.__version__)' >&2
