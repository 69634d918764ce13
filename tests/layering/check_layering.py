#!/usr/bin/env python3
"""Check the #include lines of the library and the programs against the
picture in docs/architecture.md (its ```layering block), and find cycles.

usage: check_layering.py ROOT [DOC]

Nodes:
  lib/<module>   every file in src/lib/<module>/, and the public headers
                 include/tokentrace/*.h, each assigned to a module below
  <prog>/<stem>  a file of src/<prog>/ (capture, sim, cli); x.c and x.h are
                 one node
Edges come from `#include "..."` lines (angle includes of system headers are
not ours).  An edge to another node must be listed in the picture; a
program may reach the library only through include/tokentrace/ (public) or
protocol/ (the programs' unstable parsers).  Any cycle fails, wherever it is.

Exit 0 when everything holds; 1 with one line per violation otherwise.
"""
import fnmatch
import os
import re
import sys

# Which module owns each public header.
PUBLIC = {
    "error": "core", "buf": "core", "units": "core",
    "trace": "format", "run": "format", "workload": "format",
    "analysis": "analysis",
    "gauges": "analysis", "slo": "analysis",
    "export": "text",
    "profile": "synth", "synth": "synth",
    "render": "text",
    "chart": "chart",
    "report": "report",
    "diff": "diff",
    "diffview": "diffview",
    "trend": "trend",
    "import": "import",
}
PROGRAMS = ("cli", "capture", "sim")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_picture(doc):
    """The ```layering block: lines 'node: allowed allowed ...' (globs)."""
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"^```layering\n(.*?)^```", text, re.M | re.S)
    if not m:
        sys.exit(f"check_layering: no ```layering block in '{doc}'")
    rules = []
    for n, line in enumerate(m.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            sys.exit(f"check_layering: '{doc}': layering line {n}: no ':' in '{line}'")
        node, deps = line.split(":", 1)
        rules.append((node.strip(), deps.split()))
    return rules


def allowed(rules, src, dst):
    for node, deps in rules:
        if fnmatch.fnmatchcase(src, node) and any(fnmatch.fnmatchcase(dst, d) for d in deps):
            return True
    return False


def known(rules, src):
    return any(fnmatch.fnmatchcase(src, node) for node, _ in rules)


def sources(root):
    """(path relative to root, node) of every C file we check."""
    out = []
    inc = os.path.join(root, "include", "tokentrace")
    for f in sorted(os.listdir(inc)):
        if f.endswith(".h"):
            stem = f[:-2]
            if stem not in PUBLIC:
                sys.exit(f"check_layering: public header 'include/tokentrace/{f}' belongs "
                         "to no module: add it to PUBLIC in this script and to the picture")
            out.append((f"include/tokentrace/{f}", "lib/" + PUBLIC[stem]))
    lib = os.path.join(root, "src", "lib")
    for mod in sorted(os.listdir(lib)):
        d = os.path.join(lib, mod)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h")):
                out.append((f"src/lib/{mod}/{f}", "lib/" + mod))
    for prog in PROGRAMS:
        d = os.path.join(root, "src", prog)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h")):
                out.append((f"src/{prog}/{f}", f"{prog}/{f.rsplit('.', 1)[0]}"))
    return out


def target(root, path, node, inc):
    """The node an include names, and an error text when it may not name it."""
    prog = node.split("/")[0]
    parts = inc.split("/")
    if len(parts) == 2 and parts[0] == "tokentrace":
        stem = parts[1][:-2]
        if stem not in PUBLIC:
            return None, f"'{inc}' is not a public header"
        return "lib/" + PUBLIC[stem], None
    if len(parts) == 2 and os.path.isdir(os.path.join(root, "src", "lib", parts[0])):
        if node.startswith("lib/") or parts[0] == "protocol":
            return "lib/" + parts[0], None
        return None, f"'{inc}' is internal to the library (programs use include/tokentrace/)"
    if len(parts) == 1 and prog in PROGRAMS:
        if not os.path.exists(os.path.join(root, "src", prog, inc)):
            return None, f"'{inc}' does not exist in src/{prog}"
        return f"{prog}/{inc.rsplit('.', 1)[0]}", None
    if len(parts) == 1 and node.startswith("lib/"):
        return None, f"'{inc}': library files include as \"module/file.h\""
    return None, f"'{inc}' is not a header of ours"


def find_cycle(edges):
    """One cycle as a list of nodes, or None (iterative DFS, colours)."""
    colour, parent = {}, {}
    for start in sorted(edges):
        if colour.get(start):
            continue
        stack = [(start, iter(sorted(edges.get(start, ()))))]
        colour[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
                continue
            if colour.get(nxt) == 1:
                cyc = [nxt]
                for n, _ in reversed(stack):
                    cyc.append(n)
                    if n == nxt:
                        break
                return list(reversed(cyc))
            if not colour.get(nxt):
                colour[nxt] = 1
                parent[nxt] = node
                stack.append((nxt, iter(sorted(edges.get(nxt, ())))))
    return None


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    root = sys.argv[1]
    doc = sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, "docs", "architecture.md")
    rules = read_picture(doc)
    bad = []
    edges = {}
    files = sources(root)
    for path, node in files:
        if not known(rules, node):
            bad.append(f"{path}: node '{node}' is not in the picture ({doc})")
        text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            dst, why = target(root, path, node, inc)
            if why:
                bad.append(f"{path}:{line}: {why}")
                continue
            if dst == node:
                continue
            edges.setdefault(node, set()).add(dst)
            if not allowed(rules, node, dst):
                bad.append(f"{path}:{line}: {node} may not include '{inc}' ({dst}): "
                           f"not in the picture in {os.path.basename(doc)}")
    cyc = find_cycle(edges)
    if cyc:
        bad.append("cycle: " + " -> ".join(cyc))
    for b in bad:
        print(b)
    n_edges = sum(len(v) for v in edges.values())
    print(f"{len(files)} files, {len(set(n for _, n in files))} nodes, {n_edges} edges: "
          f"{'FAIL, ' + str(len(bad)) + ' problem(s)' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
