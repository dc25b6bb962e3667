#!/usr/bin/python3
"""0056-kafka_http_slow_clients - no local process can blind /healthz and /metrics.

2,000 connections to the service's HTTP port, each sending a request one header line every
2 seconds and never finishing it (a slowloris), are held open from this process while
/healthz and /metrics are asked 10 times each. Every one of those answers, the median
within 1 s, none later than 5 s (the old server, libmicrohttpd with a 10 s timeout that each
byte restarted and no connection limit, refused every new connection while they were held:
the health check failed and a supervisor would restart a healthy service). The slow
connections are then dropped by the server's total request deadline: none is still open
after it, and the server never held more than its connection limit. Bad requests keep their
answers: 405 for POST, 404 for an unknown path, 414 for a request line over 4 KB, 431 for
headers over 8 KB, and HEAD answers without a body.
"""
import os
import resource
import socket
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario as sc  # noqa: E402

check = sc.check
SLOW = 2000


def raw(port, data, read=True):
    """Send data, return the status code of the answer (0 for none) and the answer."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(data)
        if not read:
            return 0, b""
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        line = out.split(b"\r\n", 1)[0].split()
        return (int(line[1]) if len(line) > 1 else 0), out
    except OSError:
        return 0, b""
    finally:
        s.close()


def timed_get(svc, path):
    t0 = time.monotonic()
    status, _ = svc.get(path)
    return status, time.monotonic() - t0


def slowloris(port, socks, stop, opened):
    """Open SLOW connections, each with an unfinished request, then feed them a header line
    every 2 s until stop is set."""
    for i in range(SLOW):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.setblocking(False)
            s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        except OSError:
            pass
        opened[0] = i + 1
    while not stop.is_set():
        for s in socks:
            try:
                s.send(b"X-Slow: 1\r\n")
            except OSError:
                pass
        stop.wait(2.0)


def still_open(socks):
    """How many of the slow connections the server has not closed."""
    n = 0
    for s in socks:
        try:
            data = s.recv(1)
            if data == b"":
                continue  # closed by the server
            n += 1
        except BlockingIOError:
            n += 1  # nothing to read: still open
        except OSError:
            continue
    return n


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < SLOW + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, SLOW + 1000), hard))
    tmp = tempfile.mkdtemp(prefix="slda-0056-")
    broker = sc.Broker(tmp, "documents:1")
    svc = sc.Service(tmp, broker.addr, ["http.port=0", "input.topics=documents"])
    socks, stop, opened = [], threading.Event(), [0]
    try:
        port = svc.http_port()
        check(port > 0, "the service printed its http port", port)
        check(sc.wait_for(lambda: svc.get("/healthz")[0] in (200, 503), 60, "/healthz answers"),
              "/healthz answers before the slow clients")

        t = threading.Thread(target=slowloris, args=(port, socks, stop, opened), daemon=True)
        t.start()
        sc.wait_for(lambda: opened[0] >= SLOW, 120, "%d slow connections opened" % SLOW, step=0.1)
        lat = {"/healthz": [], "/metrics": []}
        for _ in range(10):
            for path in lat:
                status, dt = timed_get(svc, path)
                check(status in (200, 503), "%s answers while %d slow connections are held"
                      % (path, SLOW), status)
                lat[path].append(dt)
        for path, xs in lat.items():
            med, mx = statistics.median(xs), max(xs)
            print("%s with %d slow connections: median %.4f s, max %.4f s" % (path, SLOW, med, mx))
            check(med <= 1.0, "%s median answer time at most 1 s" % path, med)
            check(mx <= 5.0, "%s slowest answer at most 5 s" % path, mx)
        # the request deadline (2 s) passes for every slow connection: all dropped
        check(sc.wait_for(lambda: still_open(socks) == 0, 60, "the slow connections dropped",
                          step=0.5), "every slow connection dropped by the request deadline",
              still_open(socks))
        stop.set()

        status, body = raw(port, b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        check(status == 405, "POST: 405", status)
        status, body = raw(port, b"GET /nosuch HTTP/1.1\r\nHost: x\r\n\r\n")
        check(status == 404, "unknown path: 404", status)
        status, body = raw(port, b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        check(status == 414, "a request line over 4 KB: 414", status)
        status, body = raw(port, b"GET /metrics HTTP/1.1\r\n" + b"X-Big: " + b"b" * 9000 + b"\r\n\r\n")
        check(status == 431, "headers over 8 KB: 431", status)
        status, body = raw(port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        head, _, rest = body.partition(b"\r\n\r\n")
        check(status in (200, 503) and rest == b"" and b"Content-Length: " in head,
              "HEAD: the head only", status, body[:200])
        status, body = raw(port, b"GET /metrics?x=1 HTTP/1.0\r\n\r\n")
        check(status == 200 and b"streamlda_documents_total" in body,
              "a query string and HTTP/1.0 are served", status)
    finally:
        stop.set()
        for s in socks:
            s.close()
        check(svc.stop() == 0, "the service exits 0 on SIGTERM")
        check(broker.stop() == 0, "broker exits 0 on SIGTERM")
    return sc.done("0056-kafka_http_slow_clients", tmp)


if __name__ == "__main__":
    sys.exit(main())
