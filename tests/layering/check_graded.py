#!/usr/bin/env python3
"""Graded result codes are never read as booleans (issue 21.1).

usage: check_graded.py ROOT | --selftest

An `enum tt_code` is graded (docs/architecture.md "Results"): TT_EOF and
TT_WARN are successes, so `if (rc)` treats a warning as a failure and
`if (!rc)` a warning as... not success.  For every variable declared
`enum tt_code NAME` in a source file under src/, this fails on
`if (NAME)`, `if (!NAME)`, `if ((NAME = f(...)))`, `while ((NAME = ...))`
and `NAME ? ` in that file; write tt_failed(NAME), NAME == TT_OK, or
NAME != TT_OK where OK alone is meant.  One line per finding, exit 1."""
import glob
import os
import re
import sys


def findings(path):
    text = open(path, encoding="utf-8").read()
    names = set(re.findall(r"\benum\s+tt_code\s+([a-z_][a-z0-9_]*)\s*[=;,)]", text))
    names |= set(re.findall(r"\benum\s+tt_code\s+[a-z_][a-z0-9_]*\s*,\s*([a-z_][a-z0-9_]*)\s*[=;]", text))
    out = []
    if not names:
        return out
    alt = "|".join(sorted(re.escape(n) for n in names))
    pats = [
        re.compile(r"\b(if|while)\s*\(\s*!?\s*(%s)\s*\)" % alt),
        re.compile(r"\b(if|while)\s*\(\s*\(\s*(%s)\s*=[^=]" % alt),
        re.compile(r"\b(if|while)\s*\(\s*!\s*\(\s*(%s)\s*=[^=]" % alt),
        re.compile(r"[(,=]\s*(%s)\s*\?" % alt),
        re.compile(r"\b(%s)\s*(&&|\|\|)" % alt),
        re.compile(r"(&&|\|\|)\s*!?\s*(%s)\s*[);]" % alt),
    ]
    for no, line in enumerate(text.splitlines(), 1):
        for p in pats:
            if p.search(line):
                out.append(f"{path}:{no}: graded code read as a boolean: {line.strip()}")
                break
    return out


def selftest():
    """The check can fail: each form it must find, and one it must not."""
    import tempfile
    bad = ("enum tt_code rc = f();\nif (rc)\n;\nif (!rc)\n;\nif ((rc = g()) ||\n"
           "    (rc = h()))\n;\nk(rc ? 1 : 0);\n")
    good = "enum tt_code rc = f();\nif (tt_failed(rc))\n;\nif (rc != TT_OK)\n;\n"
    with tempfile.TemporaryDirectory() as d:
        for name, text, want in (("bad.c", bad, 4), ("good.c", good, 0)):
            path = os.path.join(d, name)
            open(path, "w").write(text)
            got = len(findings(path))
            if got != want:
                print(f"selftest: {name}: {got} findings, want {want}")
                return 1
    print("selftest: ok")
    return 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--selftest":
        return selftest()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    bad = []
    files = sorted(glob.glob(os.path.join(root, "src", "**", "*.c"), recursive=True))
    for f in files:
        bad += findings(f)
    for b in bad:
        print(os.path.relpath(b, root) if b.startswith(root) else b)
    print(f"{len(files)} files: {len(bad)} graded codes read as booleans: {'FAIL' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
