#!/usr/bin/python3
"""0002-layers - the layers of src/ are boundaries (docs/architecture.md).

The folders of src/ are layers, each allowed to use only those below it:

    core < text < engine < io < track < kafka < cli

Checked, each a failure with the file and what it reached:
  1. includes: a file includes internal headers by layer ("engine/model.h"), never one of a
     higher layer, and never a private header of another folder (a folder's `*_int.h`, and
     every header that includes one: engine/local.h reaches engine/model_priv.h), directly or
     through other headers;
  2. symbols: in the built objects (nm), a function or variable a file uses is defined in its
     own layer or a lower one;
  3. cycles: no two files depend on each other through their symbols, directly or around a
     longer loop (a module can be read, tested and replaced starting from the bottom).
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario as sc  # noqa: E402

LAYERS = ["core", "text", "engine", "io", "track", "kafka", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}
SRC = os.path.join(os.environ["SLDA_SOURCE_DIR"], "src")
BUILD = os.environ["SLDA_BUILD_DIR"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    """Every file of src/ as a path relative to src/ ("engine/model.c")."""
    out = []
    for layer in LAYERS:
        for path in sorted(glob.glob(os.path.join(SRC, layer, "*.[ch]"))):
            out.append(os.path.relpath(path, SRC))
    return out


def includes(rel):
    """The internal headers rel includes (paths relative to src/)."""
    with open(os.path.join(SRC, rel), encoding="utf-8") as f:
        text = f.read()
    return [name for name in INCLUDE.findall(text) if os.path.exists(os.path.join(SRC, name))]


def closure(rel, direct):
    """Every internal header rel reaches through its includes."""
    seen, todo = set(), list(direct.get(rel, []))
    while todo:
        h = todo.pop()
        if h not in seen:
            seen.add(h)
            todo.extend(direct.get(h, []))
    return seen


def check_includes(files):
    direct = {rel: includes(rel) for rel in files}
    private = {rel for rel in files if rel.endswith("_priv.h")}
    # a header that reaches a private header is private to that folder too
    private |= {rel for rel in files if rel.endswith(".h") and
                any(h in private and h.split("/")[0] == rel.split("/")[0]
                    for h in closure(rel, direct))}
    bad_order, bad_private, unnamed = [], [], []
    for rel in files:
        layer = rel.split("/")[0]
        with open(os.path.join(SRC, rel), encoding="utf-8") as f:
            names = INCLUDE.findall(f.read())
        for name in names:
            if name in ("streamlda.h",):
                continue
            if "/" not in name:
                unnamed.append("%s includes \"%s\" without its layer" % (rel, name))
                continue
            if name.split("/")[0] in RANK and RANK[name.split("/")[0]] > RANK[layer]:
                bad_order.append("%s (%s) includes %s" % (rel, layer, name))
        for h in closure(rel, direct):
            if h in private and h.split("/")[0] != layer:
                bad_private.append("%s reaches the private header %s" % (rel, h))
    sc.check(not unnamed, "every internal include names its layer", unnamed)
    sc.check(not bad_order, "no include of a higher layer", bad_order)
    sc.check(not bad_private, "no private header of another folder, directly or through others",
             sorted(set(bad_private)))
    print("private headers:", sorted(private))


def objects():
    """Object file of each source file of src/ (one per source; the module's copies of the
    Kafka layer are the same code). A build directory keeps the objects of files moved or
    removed since: those are left out."""
    found = {}
    for path in glob.glob(os.path.join(BUILD, "CMakeFiles", "*.dir", "src", "*", "*.c.o")):
        rel = os.path.relpath(path, os.path.join(os.path.dirname(path), ".."))
        rel = rel[:-len(".o")]
        if os.path.exists(os.path.join(SRC, rel)):  # not a moved file's stale object
            found.setdefault(rel, path)
    return found


def symbols(path):
    """(defined, used) global symbols of one object."""
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDRBCGSV":
            defined.add(parts[2])
    return defined, used


def check_symbols(files):
    objs = objects()
    missing = [rel for rel in files if rel.endswith(".c") and rel not in objs]
    sc.check(not missing, "every source file of src/ has its object in the build", missing)
    owner, uses = {}, {}
    for rel, path in objs.items():
        defined, used = symbols(path)
        uses[rel] = used
        for name in defined:
            owner.setdefault(name, rel)
    edges = {rel: set() for rel in objs}
    upward = []
    for rel, used in uses.items():
        for name in used:
            dep = owner.get(name)
            if dep is None or dep == rel:
                continue
            edges[rel].add(dep)
            if RANK[dep.split("/")[0]] > RANK[rel.split("/")[0]]:
                upward.append("%s uses %s of %s" % (rel, name, dep))
    sc.check(not upward, "no file uses a symbol of a higher layer", sorted(upward))
    cycles = strongly_connected(edges)
    sc.check(not cycles, "no cycle between files", cycles)
    print("files: %d, dependencies between them: %d" % (len(edges),
                                                         sum(len(v) for v in edges.values())))


def strongly_connected(edges):
    """The components of more than one file (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    files = sources()
    sc.check(len(files) > 50, "the sources of src/ found", len(files))
    check_includes(files)
    check_symbols(files)
    return sc.done("0002-layers")


if __name__ == "__main__":
    sys.exit(main())
