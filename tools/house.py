#!/usr/bin/env python3
"""house.py — two rules of the house (issue 26), checked on a built tree.

1. No import circle between source files. File A "uses" file B when an
   object file of A has an undefined symbol that B's object file defines
   (nm); an import circle is a cycle in that graph (A uses B and B uses A,
   or a longer loop). Only linked code counts: an #include of a type, a
   macro or an inline function makes no edge, so the check sees what the
   linker sees. Every strongly connected component of more than one file
   is reported with the symbols on each of its edges.
2. No C source or header over 1,000 lines without a stated reason: one of
   its first five lines must contain the marker "over 1,000 lines because"
   (e.g. "/* over 1,000 lines because the four parts share one state. */").
   Generated files (under the build directory) are not checked.

Usage: python3 tools/house.py [--build DIR] [--max-lines N]
Run after `make all` (the objects of DIR are read). Prints every finding
and exits 1 when there is one, 0 when the house is in order.
"""
import argparse
import os
import subprocess
import sys

MARKER = "over 1,000 lines because"
# Directories whose C files are the project's sources (Makefile's SRV_DIRS,
# the core, and the tools around them).
SOURCE_ROOTS = ("core", "server", "cli", "tools", "bench", "fuzz", "tests/unit")


def object_files(build):
    """Yields (object path, source path) for every object under build whose
    source is known: build/x/y.o comes from x/y.c, or from build/x/y.c for
    generated code."""
    for root, _dirs, files in os.walk(build):
        for name in sorted(files):
            if not name.endswith(".o"):
                continue
            obj = os.path.join(root, name)
            rel = os.path.relpath(obj, build)[:-2] + ".c"
            if os.path.exists(rel):
                yield obj, rel
            elif os.path.exists(os.path.join(build, rel)):
                yield obj, os.path.join(build, rel)


def symbols(obj):
    """Returns (defined, undefined) global symbol names of one object."""
    out = subprocess.run(["nm", "-g", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in ("U", "w", "v"):
            defined.add(parts[2])
    return defined, undefined


def graph(build):
    """Returns {file: {used file: sorted symbols}} for the objects of build."""
    defs, undefs = {}, {}
    for obj, src in object_files(build):
        d, u = symbols(obj)
        defs.setdefault(src, set()).update(d)
        undefs.setdefault(src, set()).update(u)
    owner = {}
    for src, names in defs.items():
        for name in names:
            owner.setdefault(name, set()).add(src)
    edges = {src: {} for src in defs}
    for src, names in undefs.items():
        for name in names:
            if name == "main":
                continue
            for dst in owner.get(name, ()):
                if dst != src:
                    edges[src].setdefault(dst, []).append(name)
    for src in edges:
        for dst in edges[src]:
            edges[src][dst].sort()
    return edges


def components(edges):
    """Tarjan's strongly connected components (iterative: the graph is
    small, but Python's recursion limit is not a property of the tree)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, {})))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


def circles(edges):
    """Returns the findings for every component of more than one file."""
    found = []
    for comp in components(edges):
        if len(comp) < 2:
            continue
        lines = ["import circle: " + " <-> ".join(comp)]
        for a in comp:
            for b in comp:
                if b in edges.get(a, {}):
                    syms = edges[a][b]
                    more = " …" if len(syms) > 4 else ""
                    lines.append("    %s uses %s: %s%s" % (a, b, ", ".join(syms[:4]), more))
        found.append("\n".join(lines))
    return found


def long_files(max_lines):
    """Returns the findings for C files over max_lines without the marker."""
    found = []
    for root in SOURCE_ROOTS:
        for dirpath, _dirs, files in os.walk(root):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read().splitlines()
                if len(text) <= max_lines:
                    continue
                if any(MARKER in line for line in text[:5]):
                    continue
                found.append('%s: %d lines, no "%s" reason in its first five lines'
                             % (path, len(text), MARKER))
    return sorted(found)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory holding the objects")
    ap.add_argument("--max-lines", type=int, default=1000)
    args = ap.parse_args()
    if not os.path.isdir(args.build):
        print("house.py: %s: no build directory (run make all first)" % args.build,
              file=sys.stderr)
        return 2
    edges = graph(args.build)
    if not edges:
        print("house.py: %s holds no object files (run make all first)" % args.build,
              file=sys.stderr)
        return 2
    found = circles(edges) + long_files(args.max_lines)
    for f in found:
        print(f)
    print("house.py: %d files, %d findings" % (len(edges), len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
