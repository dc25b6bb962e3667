#!/usr/bin/python3
"""0022-cli_train_signal - SIGINT/SIGTERM/SIGHUP during `train` on standard input.

`cat stream | streamlda train -o m.slda` is stopped with Ctrl-C. The signal
interrupts the blocked read; that read is not a rejected record. The run
says "interrupted" on stderr, exits 128 + the signal (130 for SIGINT), and
with -o writes the model of every document read in full (docs/cli.md in
README: "Exit codes"). A signal before any document was trained writes no
model and still exits 130. SIGHUP (a closed terminal) does the same, exit 129 (it killed
the process: no model, no summary).

Synchronisation without timing assumptions: the test waits for the progress
line of the first minibatch, then until the process sleeps (blocked in read)
according to /proc/PID/stat, before sending the signal.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

S = os.environ["STREAMLDA"]
FAILS = []


def check(cond, what):
    if cond:
        print("ok:", what)
    else:
        print("FAIL:", what, file=sys.stderr)
        FAILS.append(what)


def wait_blocked(pid, deadline):
    """Until the main thread sleeps (state S) on three polls in a row."""
    seen = 0
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        seen = seen + 1 if state == "S" else 0
        if seen >= 3:
            return True
        time.sleep(0.05)
    return False


def start(tmp, model):
    args = [S, "train", "-k", "2", "-X", "text.stopwords=none", "-X", "minibatch.docs=20",
            "-X", "progress.ms=1", "-o", model, "-"]
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp)


def read_until(stream, needle, deadline):
    """Read stderr lines until one contains needle; returns everything read."""
    got = b""
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        got += line
        if needle in line:
            break
    return got.decode(errors="replace")


def finish(p, deadline):
    try:
        out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err += b"\n(test: killed after the timeout)"
    return out.decode(errors="replace"), err.decode(errors="replace")


def no_read_error(err, what):
    for bad in ("read error", "Interrupted system call", "rejected records", "SLDA_ERR_IO"):
        check(bad not in err, "%s: the interrupted read is not an error (%r absent)" % (what, bad))


def after_documents(tmp, sig, want_rc):
    name = signal.Signals(sig).name
    model = os.path.join(tmp, "after-%s.slda" % name)
    p = start(tmp, model)
    deadline = time.monotonic() + 120
    p.stdin.write(b"apple banana cherry fruit orchard\nengine piston turbine motor fuel\n" * 10)
    p.stdin.flush()  # exactly one minibatch of 20; the pipe stays open
    head = read_until(p.stderr, b"progress: docs 20 ", deadline)
    check("progress: docs 20 " in head, "%s: the first minibatch was trained: %r" % (name, head))
    check(wait_blocked(p.pid, deadline), "%s: train blocks reading standard input" % name)
    p.send_signal(sig)
    out, err = finish(p, deadline)
    err = head + err
    p.stdin.close()
    check(p.returncode == want_rc, "%s: exit %s, wanted %d; stderr %r" % (name, p.returncode,
                                                                           want_rc, err[-600:]))
    check("interrupted (%s) after 20 documents" % name in err,
          "%s: says interrupted after 20 documents: %r" % (name, err[-400:]))
    no_read_error(err, name)
    check("train docs=20 " in out and "rejected=0 " in out,
          "%s: summary counts 20 documents and no errors: %r" % (name, out))
    check(os.path.exists(model), "%s: the model so far was written" % name)
    if os.path.exists(model):
        t = subprocess.run([S, "topics", "-n", "3", model], capture_output=True, text=True)
        check(t.returncode == 0 and t.stdout.count("topic ") == 2,
              "%s: the written model is a readable snapshot: %r %r" % (name, t.stdout, t.stderr))


def before_documents(tmp):
    model = os.path.join(tmp, "before.slda")
    p = start(tmp, model)
    deadline = time.monotonic() + 120
    check(wait_blocked(p.pid, deadline), "before: train blocks reading standard input")
    p.send_signal(signal.SIGINT)
    out, err = finish(p, deadline)
    p.stdin.close()
    check(p.returncode == 130, "before: exit %s, wanted 130; stderr %r" % (p.returncode, err))
    check("interrupted (SIGINT) before any document was trained" in err,
          "before: says interrupted: %r" % err)
    no_read_error(err, "before")
    check(not os.path.exists(model), "before: no model written")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        after_documents(tmp, signal.SIGINT, 130)
        after_documents(tmp, signal.SIGTERM, 128 + signal.SIGTERM)
        after_documents(tmp, signal.SIGHUP, 128 + signal.SIGHUP)
        before_documents(tmp)
    if FAILS:
        print("%d checks failed" % len(FAILS), file=sys.stderr)
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
