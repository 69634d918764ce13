#!/usr/bin/env python3
"""The diff CSV against its spec (formats/diff-csv-v1.md): the header is the
spec's column table, read from the spec file; the bytes follow its syntax
(LF only, no BOM, quoting only where it says); and every field, parsed as
the spec says, gives what the JSON diff of the same runs holds, in the
JSON's cell order.  Diffs: two synthetic runs (a slowdown, a status change,
cells of one side), replicates on each side, and an imported report
against itself (point figures, notes with commas, with and without
--tolerance).

usage: test_diff_csv_spec.py TOKENTRACE SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

tt, src = sys.argv[1], sys.argv[2]
fails = 0
passed = 0


def check(ok, what):
    global fails, passed
    if ok:
        passed += 1
    else:
        fails += 1
        print("FAIL:", what)


def run(*args):
    r = subprocess.run([tt, *args], capture_output=True)
    if r.returncode not in (0, 1):
        sys.exit(f"tokentrace {' '.join(args)}: exit {r.returncode}: {r.stderr.decode()}")
    return r.stdout


# ---- the spec -----------------------------------------------------------------
spec = open(os.path.join(src, "formats", "diff-csv-v1.md"), encoding="utf-8").read()
section3 = spec.split("## 3. Columns", 1)[1].split("\n## ", 1)[0]
columns = []
for line in section3.splitlines():
    m = re.match(r"\| (\d+) \| `([a-z_]+)` \|", line)
    if m:
        check(int(m.group(1)) == len(columns) + 1, f"spec: column {m.group(2)} numbered {m.group(1)}")
        columns.append(m.group(2))
check(len(columns) == 18, f"spec: {len(columns)} columns in section 3, want 18")
section41 = spec.split("### 4.1", 1)[1].split("\n### ", 1)[0]
figure_order = re.findall(r"^\| `([a-z0-9_]+)` \|", section41, re.M)
section42 = spec.split("### 4.2", 1)[1].split("\n### ", 1)[0]
verdicts = set(re.findall(r"`([a-z_]+)`", section42)) - {"note"}
section43 = spec.split("### 4.3", 1)[1].split("\n## ", 1)[0]
status_order = re.findall(r"`([a-z_]+)`", section43.split("\n\n", 1)[1])
statuses = set(status_order)
TEXT = {"cell", "phase", "presence", "base_status", "candidate_status", "figure", "verdict", "note"}
INT = {"context", "concurrency", "status_changed"}
NUM = {"base", "candidate", "ratio", "change_pct", "ci_lo_pct", "ci_hi_pct", "z"}
check(TEXT | INT | NUM == set(columns), "spec: every column is text, integer or number")
NUM_RE = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?(e[+-][0-9]{2,3})?$")


def parse(data):
    """Section 2: rows of fields; fields as (text, was_quoted)."""
    check(not data.startswith(b"\xef\xbb\xbf"), "csv: no byte order mark")
    check(b"\r" not in data, "csv: no CR")
    check(data.endswith(b"\n"), "csv: the last line ends in LF")
    text = data.decode("utf-8")
    rows, row, i = [], [], 0
    while i < len(text):
        if text[i] == '"':
            j, val = i + 1, []
            while True:
                k = text.index('"', j)
                val.append(text[j:k])
                if text[k + 1:k + 2] == '"':
                    val.append('"')
                    j = k + 2
                else:
                    break
            field, quoted, i = "".join(val), True, k + 1
        else:
            m = re.compile(r"[^,\n]*").match(text, i)
            field, quoted, i = m.group(0), False, m.end()
            check('"' not in field, f"csv: a bare field holds a quote: {field!r}")
        row.append((field, quoted))
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        check(i < len(text) and text[i] == "\n", f"csv: field not followed by , or LF at {i}")
        rows.append(row)
        row, i = [], i + 1
    return rows


def unneutralise(field, quoted):
    if quoted and len(field) >= 2 and field[0] == "'" and field[1] in "=+-@\t\r":
        return field[1:]
    return field


def num(s):
    return None if s == "" else float(s)


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a == b


def compare(name, data, js):
    rows = parse(data)
    check(rows and [f for f, _ in rows[0]] == columns,
          f"{name}: header {[f for f, _ in rows[0]] if rows else None} is not the spec's {columns}")
    want = []  # (cell, figure key, figure object) in the JSON's order, per section 5
    for c in js["cells"]:
        keys = [k for k in figure_order if k in c["figures"]]
        check(keys == ([ "prefill_tok_s"] if c["phase"] == "prefill" else figure_order[:6]),
              f"{name}: {c['id']}: figures {keys}")
        for k in keys:
            want.append((c, k, c["figures"][k]))
    check(len(rows) - 1 == len(want), f"{name}: {len(rows) - 1} rows, want {len(want)}")
    for r, (c, k, f) in zip(rows[1:], want):
        check(len(r) == len(columns), f"{name}: row of {len(r)} fields")
        for col, (field, quoted) in zip(columns, r):
            formula = col in TEXT and quoted and field[:1] == "'" and field[1:2] in ("=", "+", "-", "@", "\t", "\r")
            need = bool(re.search(r'[,"\r\n]', field)) or formula
            check(quoted == need, f"{name}: {col} {field!r} quoted={quoted}")
            if col in TEXT and not quoted:
                check(field[:1] not in ("=", "+", "-", "@", "\t", "\r"), f"{name}: {col} {field!r} not neutralised")
        v = {col: unneutralise(*r[i]) for i, col in enumerate(columns)}
        where = f"{name}: {c['id']} {k}"
        for col in INT:
            check(re.match(r"^(0|[1-9][0-9]*)$", v[col]) is not None, f"{where}: {col} {v[col]!r}")
        for col in NUM:
            check(v[col] == "" or NUM_RE.match(v[col]) is not None, f"{where}: {col} {v[col]!r}")
        check(v["cell"] == c["id"], f"{where}: cell {v['cell']}")
        check(v["phase"] == c["phase"], f"{where}: phase")
        check(int(v["context"]) == c["context"], f"{where}: context")
        check(int(v["concurrency"]) == c["concurrency"], f"{where}: concurrency")
        check(v["presence"] == c["presence"], f"{where}: presence")
        for col, jk in (("base_status", "base_status"), ("candidate_status", "candidate_status")):
            js_st = c[jk] or ""
            if js_st == "mixed":  # section 3: "mixed:" and the runs' keys in 4.3's order
                js_st = "mixed:" + "|".join(k for k in status_order if k in c[jk + "_runs"])
            check(v[col] == js_st, f"{where}: {col} {v[col]!r}, json {js_st!r}")
            for key in v[col].removeprefix("mixed:").split("|") if v[col] else []:
                check(key in statuses, f"{where}: {col} {key!r} not in 4.3")
        check(int(v["status_changed"]) == int(c["status_changed"]), f"{where}: status_changed")
        check(v["figure"] == k, f"{where}: figure {v['figure']}")
        ci = f["ci_pct"] or [None, None]
        for col, jv in (("base", f["base"]), ("candidate", f["candidate"]), ("ratio", f["ratio"]),
                        ("change_pct", f["change_pct"]), ("ci_lo_pct", ci[0]),
                        ("ci_hi_pct", ci[1]), ("z", f["z"])):
            check(same(num(v[col]), jv), f"{where}: {col} {v[col]!r}, json {jv!r}")
        check(v["verdict"] == f["verdict"] and v["verdict"] in verdicts,
              f"{where}: verdict {v['verdict']}, json {f['verdict']}")
        check(v["note"] == (f["note"] or ""), f"{where}: note {v['note']!r}, json {f['note']!r}")
    return rows


with tempfile.TemporaryDirectory() as tmp:
    def synth(profile, out, seed):
        run("synth", "--profile", os.path.join(src, "tests", "diff", profile), "-o",
            os.path.join(tmp, out), "--seed", str(seed), "-q")
        return os.path.join(tmp, out)

    base, base2 = synth("profile-base.csv", "b1", 1), synth("profile-base.csv", "b2", 2)
    slow, slow2 = synth("profile-slow.csv", "s1", 4), synth("profile-slow.csv", "s2", 5)
    seed = os.path.join(src, "fixtures", "foreign", "llm-inference-bench-report",
                        "speed-test-matrix-lfm2.5-350m-h200.txt")
    cases = [
        # the example of section 6 is without the run-to-run allowance
        ("synthetic", [base, slow, "--run-allowance", "0"]),
        ("synthetic, allowance", [base, slow]),
        ("replicates", ["--base", base, base2, "--candidate", slow, slow2]),
        ("mixed statuses", ["--base", base, slow, "--candidate", slow2, base2]),
        ("point/point", [seed, seed]),
        ("point/point tolerance", [seed, seed, "--tolerance", "5%"]),
    ]
    for name, args in cases:
        data = run("diff", *args, "--format", "csv", "-q")
        js = json.loads(run("diff", *args, "--format", "json", "-q"))
        rows = compare(name, data, js)
        if name == "synthetic":
            # section 6's example rows are the writer's, byte for byte
            example = spec.split("## 6. Example", 1)[1].split("```", 2)[1].strip("\n").split("\n")
            lines = data.decode().split("\n")
            for e in example:
                check(e in lines, f"example row not written: {e[:60]}")
        if name == "point/point":
            check(any(r[17][1] for r in rows[1:]), "point/point: a note with a comma is quoted")

print(f"{passed} passed, {fails} failed")
sys.exit(1 if fails else 0)
