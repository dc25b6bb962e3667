#!/usr/bin/python3
"""0005-docs_names - what README.md and docs/ name exists in the code.

Prose drifts from code one rename at a time. Checked in README.md, docs/*.md,
config/CONFIGURATION.md and the comments of include/streamlda.h:
  - every `slda_*` identifier (a function, type, macro or enum value; a trailing `*` in a
    name, as in `slda_model_*`, stands for a family and must match one) is defined in src/,
    include/, tests/ or examples/;
  - every path of the repository (src/..., tests/..., bench/..., scripts/..., docs/...,
    config/..., examples/..., include/...) exists, and every bare source file name
    (`service.c`, `model.h`) is a file of src/, include/, tests/, bench/ or examples/ (or a
    system header, `xxhash.h`); a recipe's placeholder NAME (`src/io/reader_NAME.c`) must match
    one;
  - every `streamlda SUBCOMMAND` is a subcommand the program lists.
A name that only exists in the past (a migration note) is written with a trailing " (gone)"
and is not checked.
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario as sc  # noqa: E402

ROOT = os.environ["SLDA_SOURCE_DIR"]
IDENT = re.compile(r"\bslda_[A-Za-z0-9_]*\*?|\bSLDA_[A-Z0-9_]+\b")
PATH = re.compile(r"(?<![\w./-])((?:src|tests|bench|scripts|docs|config|examples|include)/"
                  r"[\w./+*-]*\.(?:c|h|py|sh|md|txt|conf|cmake|slda|json|html|def)\b|"
                  r"tests/\d{4}[\w-]*|tests/01NN-[\w-]*|(?:src|tests|bench|scripts|docs|config|"
                  r"examples|include)/[\w/-]+/(?=[\s`),.;:]))")
BARE = re.compile(r"(?<![\w./-])([a-z][a-z0-9_]*\.(?:c|h))\b")
CODE_DIRS = ["src", "include", "tests", "examples", "bench"]


def texts():
    """(name, text) of every document checked."""
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files.append(os.path.join(ROOT, "config", "CONFIGURATION.md"))
    out = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            out.append((os.path.relpath(path, ROOT), f.read()))
    with open(os.path.join(ROOT, "include", "streamlda.h"), encoding="utf-8") as f:
        comments = "\n".join(re.findall(r"/\*.*?\*/", f.read(), re.S))
    out.append(("include/streamlda.h (comments)", comments))
    return out


def code_corpus():
    """All the code's text (to look identifiers up) and the source file names."""
    parts, names = [], set()
    for d in CODE_DIRS:
        for path in glob.glob(os.path.join(ROOT, d, "**", "*"), recursive=True):
            if os.path.isfile(path) and path.endswith((".c", ".h", ".py", ".sh", ".cmake")):
                names.add(os.path.basename(path))
                with open(path, encoding="utf-8", errors="replace") as f:
                    parts.append(f.read())
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        parts.append(f.read())
    return "\n".join(parts), names


def defined(name, code):
    if "NAME" in name:  # a placeholder of a recipe (slda_vb_NAME): a family that must exist
        return re.search(r"\b" + re.escape(name.split("NAME")[0]) + r"\w+", code) is not None
    if name.endswith("*"):
        return re.search(r"\b" + re.escape(name[:-1]) + r"\w*", code) is not None
    # as a definition or declaration, not merely mentioned: followed by '(' or used as a
    # type/macro/enum anywhere in the code
    return re.search(r"\b" + re.escape(name) + r"\b", code) is not None


def subcommands():
    out = subprocess.run([os.environ["STREAMLDA"], "--help"], capture_output=True, text=True)
    return set(re.findall(r"^  (\w+)  ", out.stdout + out.stderr, re.M))


def strip_gone(text):
    """Drop the names marked as gone (migration notes)."""
    return re.sub(r"`?[\w./*]+`? \(gone\)", "", text)


def main():
    code, names = code_corpus()
    cmds = subcommands()
    sc.check(len(cmds) >= 8, "streamlda --help lists its subcommands", sorted(cmds))
    missing_ids, missing_paths, missing_bare, missing_cmds = [], [], [], []
    for doc, text in texts():
        text = strip_gone(text)
        for name in sorted(set(IDENT.findall(text))):
            if not defined(name, code):
                missing_ids.append("%s: %s" % (doc, name))
        for path in sorted(set(PATH.findall(text))):
            p = path.rstrip(".")
            if re.fullmatch(r"tests/\d{4}[\w-]*", p) and not os.path.exists(os.path.join(ROOT, p)):
                ok = glob.glob(os.path.join(ROOT, p + "*"))  # a test by its number
            elif "NAME" in p:  # a recipe's placeholder (src/io/reader_NAME.c)
                ok = glob.glob(os.path.join(ROOT, p.replace("NAME", "*")))
            elif "*" in p or "NN" in p:
                ok = glob.glob(os.path.join(ROOT, p.replace("NN", "[0-9][0-9]") + "*"))
            else:
                ok = os.path.exists(os.path.join(ROOT, p))
            if not ok:
                missing_paths.append("%s: %s" % (doc, path))
        for bare in sorted(set(BARE.findall(text))):
            if bare not in names and not os.path.exists(os.path.join("/usr/include", bare)):
                missing_bare.append("%s: %s" % (doc, bare))
        for cmd in sorted(set(re.findall(r"`streamlda (\w+)", text))):
            if cmd not in cmds:
                missing_cmds.append("%s: streamlda %s" % (doc, cmd))
    sc.check(not missing_ids, "every slda_ name the documents use exists in the code", missing_ids)
    sc.check(not missing_paths, "every repository path the documents name exists", missing_paths)
    sc.check(not missing_bare, "every source file the documents name exists", missing_bare)
    sc.check(not missing_cmds, "every subcommand the documents name exists", missing_cmds)
    return sc.done("0005-docs_names")


if __name__ == "__main__":
    sys.exit(main())
