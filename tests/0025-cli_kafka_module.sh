#!/usr/bin/env bash
# 0025-cli_kafka_module.sh - run, produce and broker live in the module streamlda-kafka.so
# (CMakeLists.txt, main.c): the other commands start without librdkafka (and
# their TLS libraries); the Kafka commands find the module beside the program, through a
# link to the program, and in ../lib/streamlda/ of an installed tree (cmake --install), and
# without it they fail with a message that names it.
set -u
. "$(dirname "$0")/checks.sh"
B=${SLDA_BUILD_DIR:?SLDA_BUILD_DIR must point at the build tree}
cd "$T" || exit 1
loaded() { # the shared objects the dynamic loader opened for a command (glibc's LD_DEBUG)
    LD_DEBUG=files timeout 120 "$@" 2>&1 >/dev/null | sed -n 's/.*file=\([^ ]*\) .*generating link map.*/\1/p'
}

for i in $(seq 1 40); do
    echo "apple banana cherry fruit orchard apple juice"
    echo "engine piston turbine motor gearbox engine fuel"
done >docs.txt

# train, topics: no Kafka or HTTP library loaded; run --help: the module and librdkafka
loaded "$S" train -q -k 2 -X text.stopwords=none -o m.slda docs.txt >libs.train
grep -q '^libz' libs.train && ok || fail "LD_DEBUG lists no libraries: $(cat libs.train)"
grep -Eq 'librdkafka|libmicrohttpd|libssl|libgnutls|streamlda-kafka' libs.train &&
    fail "train loaded: $(grep -E 'librdkafka|libmicrohttpd|libssl|libgnutls|streamlda-kafka' libs.train | tr '\n' ' ')" || ok
[ -s m.slda ] && ok || fail "train wrote no model"
loaded "$S" topics -n 3 m.slda >libs.topics
grep -Eq 'librdkafka|libmicrohttpd' libs.topics && fail "topics loaded Kafka libraries" || ok
loaded "$S" run --help >libs.run
grep -q 'streamlda-kafka\.so' libs.run && grep -q 'librdkafka' libs.run && ok ||
    fail "run --help did not load the module and librdkafka: $(tr '\n' ' ' <libs.run)"

# the program alone: train works, the Kafka commands say what is missing (exit 1)
mkdir alone && cp "$S" alone/streamlda
expect_rc 0 "train, the program without its module" alone/streamlda train -q -k 2 \
    -X text.stopwords=none docs.txt
for cmd in run produce broker; do
    expect_rc 1 "$cmd without the module" alone/streamlda "$cmd" --help
    grep -q 'streamlda-kafka\.so, which is neither beside the program' err && ok ||
        fail "$cmd without the module: $(head -c 400 err)"
done

# a link to the program elsewhere: the module is found beside the program it points at
mkdir linked && ln -s "$S" linked/streamlda
expect_rc 0 "run --help through a link" linked/streamlda run --help
grep -q '^usage: streamlda run' out && ok || fail "run --help through a link: $(head -c 200 out)"

# an installed tree: bin/streamlda and lib/streamlda/streamlda-kafka.so
if cmake --install "$B" --prefix "$T/inst" >install.log 2>&1; then
    ok
    [ -x inst/bin/streamlda ] && [ -f inst/lib/streamlda/streamlda-kafka.so ] && ok ||
        fail "install layout: $(cd inst && find . -type f | tr '\n' ' ')"
    expect_rc 0 "produce --help, installed" inst/bin/streamlda produce --help
    # the installed program started through PATH, from another directory
    (cd / && PATH="$T/inst/bin:$PATH" timeout 120 streamlda broker --help >"$T/out" 2>"$T/err") &&
        ok || fail "broker --help through PATH: $(head -c 400 err)"
else
    fail "cmake --install: $(tail -5 install.log)"
fi

checks_done 0025-cli_kafka_module
