#!/usr/bin/env python3
"""scripts/check-docs.py -- the reference pages name what the code has.

  - every ROCK REPORT / INFO rock figure (src/rock_report.c: the figures of
    rockCollectFigures(), and the INFO lines written apart, such as
    rock_eviction) appears in docs/operations.md as `name` (REPORT's name;
    INFO's is rock_ + name), alone or in a group like `a`, `b`;
  - every rock-* option of the config table (patches/0003-*) appears in
    docs/configuration.md as `rock-...`;
  - every make target the docs and README name as `make X` exists in the
    Makefile.

Prints what is missing and exits 1 when anything is; 0 otherwise.
Usage: scripts/check-docs.py [checkout]
"""
import glob
import os
import re
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def figures(top):
    src = read(os.path.join(top, "src", "rock_report.c"))
    names = set(re.findall(r'\(rockFigure\)\{"([a-z0-9_]+)"', src))
    # INFO lines written outside the figure list: "rock_xxx:%s"
    names |= {n[len("rock_"):] for n in re.findall(r'"(rock_[a-z0-9_]+):%', src)}
    # The per-db lines (rock_db0...) are described as rock_db<N>.
    names.discard("db")
    return names


def options(top):
    text = "".join(read(p) for p in glob.glob(os.path.join(top, "patches", "0003-*.patch")))
    return set(re.findall(r'create[A-Za-z]*Config\("(rock-[a-z0-9-]+)"', text))


def make_targets(top):
    mk = read(os.path.join(top, "Makefile"))
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", mk, re.M))
    for line in re.findall(r"^\.PHONY:(.*)$", mk, re.M):
        targets |= set(line.split())
    return targets


def documented(page_text, name):
    return re.search(r"`(rock_)?" + re.escape(name) + r"`", page_text) is not None


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    ops = read(os.path.join(top, "docs", "operations.md"))
    for name in sorted(figures(top)):
        if not documented(ops, name):
            problems.append(f"docs/operations.md does not describe the ROCK REPORT / INFO rock figure `{name}`")
    conf = read(os.path.join(top, "docs", "configuration.md"))
    for opt in sorted(options(top)):
        if f"`{opt}`" not in conf:
            problems.append(f"docs/configuration.md does not describe the option `{opt}`")
    targets = make_targets(top)
    pages = glob.glob(os.path.join(top, "docs", "*.md")) + [os.path.join(top, "README.md")]
    for page in sorted(pages):
        for target in sorted(set(re.findall(r"`make ([a-z][a-z0-9-]*)", read(page)))):
            if target not in targets:
                problems.append(f"{os.path.relpath(page, top)} names `make {target}`, which the Makefile does not have")
    for p in problems:
        print("check-docs: " + p)
    if problems:
        return 1
    print(f"check-docs: {len(figures(top))} figures, {len(options(top))} options and the make targets named in the docs are described")
    return 0


if __name__ == "__main__":
    sys.exit(main())
