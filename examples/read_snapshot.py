#!/usr/bin/python3
"""read_snapshot.py - rebuild the newest streamlda snapshot from a Kafka topic and print its topics.

    read_snapshot.py --brokers HOST:PORT [--topic streamlda.snapshots] [--model NAME] [-n 10]
    read_snapshot.py --file SNAPSHOT.slda [-n 10]

The service publishes each snapshot to snapshot.topic as chunks followed by a
manifest (docs/service.md): every record has the headers model, snapshot
(the update count) and type ("chunk" or "manifest"); chunks also carry chunk
(index) and chunks (count) and the key "<model>/<snapshot>/<index>"; the
manifest's value is JSON {"model", "snapshot", "chunks", "bytes", "xxh3",
"format", ...}. This reader takes every record of the topic with a default
consumer (kafka-python), keeps the chunks of each (model, snapshot), and when
a manifest arrives checks that all chunks are there and that their
concatenation has the manifest's size and XXH3-64. The newest complete
snapshot is then parsed following docs/snapshot-format.md only (magic,
version, XXH3-64 trailer, MessagePack header and row blocks) - no streamlda
code is used. Needs python3-msgpack; python3-kafka for --brokers.
"""
import argparse
import ctypes
import json
import struct
import sys
from array import array

import msgpack


def xxh3_64(data):
    """XXH3-64, seed 0, through libxxhash (ctypes)."""
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.XXH3_64bits(data, len(data))


class SnapshotError(Exception):
    pass


def parse_snapshot(data):
    """Parse snapshot bytes: returns (header, ids, words, rows) with rows a list of
    K-float lists (the raw A rows; Nphi = header['sigma'] * A)."""
    if data[:8] != b"SLDASNAP":
        raise SnapshotError("bad magic")
    if len(data) < 20:
        raise SnapshotError("truncated: %d bytes" % len(data))
    (version,) = struct.unpack(">I", data[8:12])
    if version != 1:
        raise SnapshotError("format version %d, this reader knows 1" % version)
    (stored,) = struct.unpack(">Q", data[-8:])
    found = xxh3_64(data[:-8])
    if found != stored:
        raise SnapshotError("checksum: expected %016x, found %016x" % (stored, found))
    up = msgpack.Unpacker(raw=False, strict_map_key=False)
    up.feed(data[12:-8])
    header = next(up)
    K = header["K"]
    ids, words, rows = [], [], []
    for obj in up:
        if obj.get("end"):
            if obj["rows"] != len(ids) or len(ids) != header["vocab_size"]:
                raise SnapshotError("row count %d, end marker %d, header %d"
                                    % (len(ids), obj["rows"], header["vocab_size"]))
            break
        n = len(obj["ids"])
        vals = array("f")
        vals.frombytes(obj["rows"])
        if sys.byteorder != "little":
            vals.byteswap()
        if len(vals) != n * K:
            raise SnapshotError("block of %d rows has %d floats" % (n, len(vals)))
        ids += obj["ids"]
        words += obj["words"]
        rows += [vals[i * K:(i + 1) * K].tolist() for i in range(n)]
    else:
        raise SnapshotError("no end marker")
    return header, ids, words, rows


def top_words(header, words, rows, n):
    """The n most probable words of each topic (phi[k][w] is proportional to A[w][k])."""
    K = header["K"]
    out = []
    for k in range(K):
        order = sorted(range(len(words)), key=lambda i: -rows[i][k])[:n]
        out.append([words[i] for i in order])
    return out


def _header(headers, name):
    for key, value in headers or []:
        if key == name:
            return value.decode("utf-8", "replace") if value is not None else None
    return None


def reassemble(records, model=None):
    """From (key, value, headers) records in partition order, the bytes and manifest
    of the newest complete snapshot (of model, if given), or (None, None)."""
    chunks = {}  # (model, id) -> {index: bytes}
    best = None
    for key, value, headers in records:
        kind, name = _header(headers, "type"), _header(headers, "model")
        if model is not None and name != model:
            continue
        try:
            sid = int(_header(headers, "snapshot"))
        except (TypeError, ValueError):
            continue
        if kind == "chunk":
            chunks.setdefault((name, sid), {})[int(_header(headers, "chunk"))] = value
        elif kind == "manifest":
            man = json.loads(value)
            parts = chunks.get((name, sid), {})
            if any(i not in parts for i in range(man["chunks"])):
                continue  # incomplete (e.g. chunks lost to retention)
            data = b"".join(parts[i] for i in range(man["chunks"]))
            if len(data) != man["bytes"] or "%016x" % xxh3_64(data) != man["xxh3"]:
                continue  # a mix of two publications: wait for a good one
            if best is None or sid >= best[1]["snapshot"]:
                best = (data, man)
    return best if best else (None, None)


def fetch_records(brokers, topic, timeout_s=30):
    """Every record of topic, partition by partition, from the beginning to the
    end offsets seen at start."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=brokers, enable_auto_commit=False,
                             group_id=None, consumer_timeout_ms=timeout_s * 1000,
                             max_partition_fetch_bytes=16 * 1024 * 1024,
                             fetch_max_bytes=64 * 1024 * 1024)
    parts = consumer.partitions_for_topic(topic)
    if not parts:
        raise SnapshotError("topic %s: not found" % topic)
    tps = [TopicPartition(topic, p) for p in sorted(parts)]
    end = consumer.end_offsets(tps)
    records = []
    for tp in tps:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        if consumer.position(tp) >= end[tp]:
            continue
        for msg in consumer:
            records.append((msg.key, msg.value, msg.headers))
            if msg.offset + 1 >= end[tp]:
                break
    consumer.close()
    return records


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--brokers")
    ap.add_argument("--topic", default="streamlda.snapshots")
    ap.add_argument("--model")
    ap.add_argument("--file")
    ap.add_argument("-n", type=int, default=10)
    args = ap.parse_args(argv)
    try:
        if args.file:
            with open(args.file, "rb") as f:
                data = f.read()
            print("snapshot %s: %d bytes" % (args.file, len(data)))
        elif args.brokers:
            data, man = reassemble(fetch_records(args.brokers, args.topic), args.model)
            if data is None:
                print("no complete snapshot in topic %s" % args.topic, file=sys.stderr)
                return 1
            print("snapshot %s/%d: %d chunks, %d bytes, xxh3 %s verified"
                  % (man["model"], man["snapshot"], man["chunks"], man["bytes"], man["xxh3"]))
        else:
            ap.error("--brokers or --file is required")
        header, ids, words, rows = parse_snapshot(data)
    except (SnapshotError, OSError) as e:
        print("read_snapshot: %s" % e, file=sys.stderr)
        return 1
    print("model %s: K=%d, %d updates, %d documents, %d tokens, %d words"
          % (header["name"], header["K"], header["t"], header["docs"], header["tokens"], len(words)))
    for k, ws in enumerate(top_words(header, words, rows, args.n)):
        print("topic %d: %s" % (k, " ".join(ws)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
