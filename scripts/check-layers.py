#!/usr/bin/env python3
"""check-layers.py -- the tier's layering, checked from the compiler's symbols.

Every src/rock*.c belongs to one layer (LAYERS below, the one table; see
docs/architecture.md "Layers"). From `nm` on the object files this script
finds, for each object, the symbols it references (U) and which object of
the tier defines them (functions and data alike), then fails when

  - an object references a symbol defined in a higher layer, or
  - the objects of one layer reference one another in a cycle, or
  - a src/rock*.c is missing from the table (or the table names a file that
    is gone).

It prints each offending caller -> callee pair. Symbols defined outside the
tier (upstream Redis, RocksDB, libc) are not its concern.

Usage: scripts/check-layers.py [OBJDIR]   (default build/redis/src)
       scripts/check-layers.py --self-test  (builds three tiny trees with
           cc and checks that an upward call and a cycle are caught and a
           clean tree passes)
"""

import collections
import glob
import os
import subprocess
import sys

# file (without .c) -> layer. Lower layers never reference higher ones.
LAYERS = {
    # 1. storage: configuration values, the RocksDB handle and options, the
    #    record format, split collections' records, the merge operator.
    "rock_conf": 1,
    "rock_files": 1,
    "rock_store": 1,
    "rock_split": 1,
    # 2. threads: the hand-off they share, the writer, the reader pool, the
    #    compaction of flushed ranges.
    "rock_handoff": 2,
    "rock_write": 2,
    "rock_compact": 2,
    "rock_readers": 2,
    # 3. keyspace: values moving, eviction, page-in and pinning, per-key
    #    order, read-ahead, point reads, loading spills, the fork stream.
    "rock_inflight": 3,
    "rock_order": 3,
    "rock_element": 3,
    "rock_keys": 3,
    "rock_point": 3,
    "rock_fork": 3,
    "rock_load": 3,
    "rock_evict": 3,
    "rock_floor": 3,
    "rock_memory": 3,
    "rock_ahead": 3,
    "rock_read": 3,
    "rock_sizing": 3,
    "rock_sizing_ram": 3,
    "rock_sizing_fine": 3,
    "rock_sizing_cache": 3,
    "rock_hooks": 3,
    "rock_snapshot": 3,
    # 4. top: lifecycle and config hooks, commands, ROCK REPORT / INFO rock.
    "rock": 4,
    "rock_report": 4,
    "rock_warm": 4,
}

NAMES = {1: "storage", 2: "threads", 3: "keyspace", 4: "top"}


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRCGSV":
            defined.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            used.add(p[1])
    return defined, used


def cycles(nodes, edges):
    """Strongly connected components of more than one node (Tarjan)."""
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check(objdir, srcdir, layers):
    """Print the problems of the objects in objdir; return how many."""
    LAYERS = layers
    failures = 0

    sources = {os.path.basename(f)[:-2] for f in glob.glob(os.path.join(srcdir, "rock*.c"))}
    for f in sorted(sources - LAYERS.keys()):
        print("check-layers: src/%s.c is in no layer: add it to LAYERS in %s" % (f, __file__))
        failures += 1
    for f in sorted(LAYERS.keys() - sources):
        print("check-layers: LAYERS names %s.c, which does not exist" % f)
        failures += 1

    defs, uses = {}, {}
    for f in sorted(sources & LAYERS.keys()):
        obj = os.path.join(objdir, f + ".o")
        if not os.path.exists(obj):
            print("check-layers: %s missing: build first (make)" % obj)
            return failures + 1
        d, u = symbols(obj)
        for s in d:
            defs[s] = f
        uses[f] = u

    refs = collections.defaultdict(set)  # (caller, callee) -> symbols
    for f, used in uses.items():
        for s in used:
            g = defs.get(s)
            if g is not None and g != f:
                refs[(f, g)].add(s)

    for (f, g), syms in sorted(refs.items()):
        if LAYERS[g] > LAYERS[f]:
            for s in sorted(syms):
                print("check-layers: upward: %s (%d %s) -> %s (%d %s): %s" %
                      (f, LAYERS[f], NAMES[LAYERS[f]], g, LAYERS[g], NAMES[LAYERS[g]], s))
                failures += 1

    for layer in sorted(NAMES):
        nodes = [f for f in uses if LAYERS[f] == layer]
        edges = collections.defaultdict(set)
        for (f, g) in refs:
            if LAYERS[f] == layer and LAYERS[g] == layer:
                edges[f].add(g)
        for comp in cycles(nodes, edges):
            failures += 1
            print("check-layers: cycle in layer %d (%s): %s" % (layer, NAMES[layer], " ".join(comp)))
            for (f, g), syms in sorted(refs.items()):
                if f in comp and g in comp:
                    print("    %s -> %s: %s" % (f, g, " ".join(sorted(syms))))

    if not failures:
        print("check-layers: %d files in %d layers, every reference downward or sideways without a cycle" %
              (len(uses), len(NAMES)))
    return failures


def self_test():
    """Three tiny trees: an upward call, a cycle inside a layer, a clean one."""
    import tempfile
    cases = [
        # (name, {file: (layer, source)}, problems expected)
        ("upward call", {"rock_lo": (1, "int hi(void); int lo(void) { return hi(); }"),
                         "rock_hi": (2, "int hi(void) { return 1; }")}, 1),
        ("cycle in a layer", {"rock_a": (3, "int b(void); int a(void) { return b(); }"),
                              "rock_b": (3, "int a(void); int b(void) { return a(); }")}, 1),
        ("upward data", {"rock_lo": (1, "extern int state; int lo(void) { return state; }"),
                         "rock_hi": (4, "int state;")}, 1),
        ("clean", {"rock_lo": (1, "int lo(void) { return 1; }"),
                   "rock_hi": (2, "int lo(void); int hi(void) { return lo(); }")}, 0),
    ]
    bad = 0
    for name, files, want in cases:
        with tempfile.TemporaryDirectory() as d:
            for f, (_, src) in files.items():
                with open(os.path.join(d, f + ".c"), "w") as fh:
                    fh.write(src + "\n")
                subprocess.run(["cc", "-c", "-o", os.path.join(d, f + ".o"), os.path.join(d, f + ".c")],
                               check=True)
            got = check(d, d, {f: layer for f, (layer, _) in files.items()})
            ok = (got > 0) == (want > 0)
            print("check-layers self-test: %s: %d problem(s), %s" % (name, got, "as expected" if ok else "WRONG"))
            bad += not ok
    return bad


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return 1 if self_test() else 0
    objdir = sys.argv[1] if len(sys.argv) > 1 else "build/redis/src"
    srcdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    failures = check(objdir, srcdir, LAYERS)
    if failures:
        print("check-layers: %d problem(s)" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
