#!/usr/bin/env bash
# setup.sh - install the Debian packages streamlda needs to build, test and benchmark, and fetch
# the real-broker test tier's Apache Kafka (Maven Central) and client venv (PyPI) into build-cache/.
# Idempotent: installs only what is missing. Needs root (or sudo), Debian's archive, Maven Central, PyPI.
set -euo pipefail

packages=(
  build-essential cmake pkg-config          # toolchain
  librdkafka-dev libmsgpack-dev libxxhash-dev zlib1g-dev libicu-dev   # libraries (ICU: text.segment=unicode)
  python3 python3-numpy python3-msgpack python3-kafka kcat        # tests: independent clients
  curl time                                 # tests (/metrics) and bench (peak memory)
  chromium                                  # tests: the live page in a headless browser (0061)
  openjdk-17-jre-headless maven python3-venv   # the realkafka tier: Apache Kafka broker (scripts/kafka.sh), client venv
)
if [ "${SLDA_BENCH:-0}" = 1 ]; then
  packages+=(python3-gensim python3-sklearn linux-perf valgrind)  # bench/ peers and profilers
  packages+=(manpages-de manpages-fr manpages-es manpages-it manpages-nl manpages-pl manpages-pt-br
             manpages-ru manpages-ja manpages-zh)  # bench/text: translated manual pages
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The realkafka tier: the pinned Apache Kafka broker from Maven Central and the venv of its test
# clients from PyPI, into build-cache/ (git-ignored), so tests never download. Idempotent.
bash "$(dirname "$0")/kafka.sh" fetch
echo "setup: done"
