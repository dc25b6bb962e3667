#!/usr/bin/python3
"""0003-npy_numpy - `streamlda export SNAPSHOT --npy FILE` writes an array numpy loads.

The snapshot (the v1 fixture) is read here independently, following only
docs/snapshot-format.md: envelope, XXH3-64 trailer (through libxxhash when it
is installed), MessagePack header and blocks. phi computed from it must equal
what numpy reads from the exported file.
"""
import ctypes
import os
import struct
import subprocess
import sys
import tempfile

import msgpack
import numpy as np


def xxh3_64(data):
    """XXH3-64 with seed 0 via libxxhash, or None if the library is missing."""
    try:
        lib = ctypes.CDLL("libxxhash.so.0")
    except OSError:
        return None
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.XXH3_64bits(data, len(data))


def read_snapshot(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"SLDASNAP", "bad magic"
    (version,) = struct.unpack(">I", data[8:12])
    assert version == 1, "version %d" % version
    (stored,) = struct.unpack(">Q", data[-8:])
    computed = xxh3_64(data[:-8])
    if computed is None:
        print("libxxhash not found: checksum not verified")
    else:
        assert computed == stored, "checksum: expected %016x, found %016x" % (stored, computed)
    up = msgpack.Unpacker(raw=False)
    up.feed(data[12:-8])
    header = next(up)
    K = header["K"]
    ids, words, rows, ready = [], [], [], []
    for obj in up:
        if obj.get("end"):
            assert obj["rows"] == len(ids) == header["vocab_size"]
            break
        n = len(obj["ids"])
        ids += obj["ids"]
        words += obj["words"]
        ready += list(obj["ready"])
        rows.append(np.frombuffer(obj["rows"], dtype="<f4").reshape(n, K))
    rows = np.concatenate(rows) if rows else np.zeros((0, K), dtype="<f4")
    return header, ids, words, rows, ready


def main():
    binary = os.environ["STREAMLDA"]
    snap = os.path.join(os.environ["SLDA_SOURCE_DIR"], "tests", "fixtures", "snapshot-v1-k3.slda")
    header, ids, words, rows, ready = read_snapshot(snap)
    K, W, eta, sigma = header["K"], header["W"], header["eta"], header["sigma"]
    # The columns are the words the model holds (every word of a fixed vocabulary, the rows
    # marked ready in an open one) and W of the smoothing is their number (docs/engine.md).
    held = [i for i in range(len(ids)) if header["vocab_fixed"] or ready[i]]
    ids, words, rows = [ids[i] for i in held], [words[i] for i in held], rows[held]
    if not header["vocab_fixed"]:
        W = max(len(held), 1)
    nz = np.array(header["NZ"], dtype=np.float64)
    expected = ((sigma * rows.astype(np.float64).T + eta) / (nz + W * eta)[:, None]).astype(np.float32)
    print("snapshot: K=%d W=%d words held=%s" % (K, W, words))

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "phi.npy")
        cmd = [binary, "export", snap, "--npy", out]
        res = subprocess.run(cmd, capture_output=True, text=True)
        print("$ %s -> exit %d %s" % (" ".join(cmd), res.returncode, res.stderr.strip()))
        if res.returncode != 0:
            return 1
        phi = np.load(out, allow_pickle=False)

    print("numpy: shape %s dtype %s" % (phi.shape, phi.dtype))
    failures = 0
    if phi.shape != (K, len(ids)):
        print("FAIL: shape %s, expected %s" % (phi.shape, (K, len(ids))))
        return 1
    if phi.dtype != np.dtype("<f4"):
        print("FAIL: dtype %s, expected <f4" % phi.dtype)
        failures += 1
    diff = np.max(np.abs(phi - expected)) if phi.size else 0.0
    print("max |exported - computed| = %g" % diff)
    if not np.allclose(phi, expected, rtol=1e-6, atol=0):
        print("FAIL: exported\n%s\ncomputed\n%s" % (phi, expected))
        failures += 1
    sums = phi.sum(axis=1)
    print("row sums over the stored words: %s" % sums)
    if np.any(sums > 1 + 1e-6) or np.any(phi <= 0):
        print("FAIL: phi rows must be positive and sum to at most 1")
        failures += 1
    print("0003-npy_numpy: %s" % ("all checks passed" if not failures else "%d failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
