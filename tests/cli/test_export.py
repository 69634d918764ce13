#!/usr/bin/env python3
"""tokentrace export as a user runs it (formats/export-v1.md): the exported
cells agree with the report's JSON on every shared figure, CSV and JSON
lines carry the same rows, requests agree with the trace, several runs go
into one file keyed by run, and a chunks export of a seed-scale run streams
in flat memory.

usage: test_export.py TOKENTRACE FIXTURES"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

tt, fx = sys.argv[1], sys.argv[2]
fails = 0
passed = 0


def check(ok, what):
    global fails, passed
    if ok:
        passed += 1
    else:
        fails += 1
        print("FAIL:", what)


def run(*args, **kw):
    return subprocess.run([tt, *args], capture_output=True, text=True, **kw)


with tempfile.TemporaryDirectory() as tmp:
    R = os.path.join(tmp, "R")
    r = run("synth", "--profile", os.path.join(fx, "profiles", "seed-matrix.csv"), "-o", R, "-q")
    assert r.returncode == 0, r.stderr
    # flat memory: ~400 MB of chunk rows through a pipe, the exporter's peak
    # memory stays far below it (first, while this script is small: a forked
    # child's peak counts the parent's pages it started with)
    p = subprocess.Popen([tt, "export", R, "--what", "chunks"], stdout=subprocess.PIPE)
    total = 0
    while True:
        b = p.stdout.read(1 << 20)
        if not b:
            break
        total += len(b)
    _, st, ru = os.wait4(p.pid, 0)  # this child's own peak, not synth's
    p.returncode = os.waitstatus_to_exitcode(st)
    peak_kb = ru.ru_maxrss
    check(p.returncode == 0 and total > 100 << 20, "chunks export wrote %d bytes" % total)
    # 64 MB for 400 MB of rows (11 MB measured); more under the sanitizers,
    # whose shadow memory is not the exporter's (CMakeLists.txt sets it)
    limit_mb = int(os.environ.get("TT_EXPORT_PEAK_MB", "64"))
    check(peak_kb < limit_mb * 1024,
          "chunks export peak memory %d KB (want < %d MB)" % (peak_kb, limit_mb))

    report = json.loads(run("report", R, "--format", "json").stdout)
    by_id = {c["id"]: c for c in report["cells"]}

    # cells: CSV and JSON lines agree with the report
    cells_csv = list(csv.DictReader(io.StringIO(run("export", R, "--what", "cells").stdout)))
    cells_jl = [json.loads(l) for l in
                run("export", R, "--what", "cells", "--format", "jsonl").stdout.splitlines()]
    check(len(cells_csv) == len(report["cells"]) == len(cells_jl), "one row per cell")
    pairs = {"total_tok_s": "total_tok_s", "per_request_tok_s": "per_request_tok_s",
             "avg_active": "avg_active", "avg_in_flight": "avg_in_flight",
             "completed": "completed", "output_tokens": "output_tokens",
             "measured_s": "measured_s", "requests": "requests", "errors": "errors",
             "cut": "cut", "chunks": "chunks", "multi_token_chunks": "multi_token_chunks",
             "prompt_tokens": "prompt_tokens", "longest_stall_ms": "longest_stall_ms",
             "gaps_over_share": "gaps_over_share", "avg_active_source": "avg_active_source",
             "status_key": "status_key"}
    bad = []
    for row, jl in zip(cells_csv, cells_jl):
        rep = by_id[row["cell"]]
        if jl["cell"] != row["cell"]:
            bad.append(("order", row["cell"], jl["cell"]))
        for k, rk in pairs.items():
            want = rep[rk]
            got_jl = jl[k]
            got_csv = row[k]
            if isinstance(want, (int, float)) and not isinstance(want, bool):
                ok = got_jl == want and float(got_csv) == want
            else:
                ok = got_jl == want and got_csv == ("" if want is None else want)
            if not ok:
                bad.append((row["cell"], k, want, got_jl, got_csv))
        for d, k in (("ttft_ms", "ttft_ms_p50"), ("tbt_ms", "tbt_ms_p50")):
            if jl[k] != rep[d]["p50"]:
                bad.append((row["cell"], k, rep[d]["p50"], jl[k]))
        if jl["scrapes"] != rep["server"]["scrapes"]:
            bad.append((row["cell"], "scrapes", rep["server"]["scrapes"], jl["scrapes"]))
    check(not bad, "exported cells agree with the report: %s" % bad[:5])

    # cells follow --skip-first/--window as the report does
    w_rep = json.loads(run("report", R, "--format", "json", "--window", "10s").stdout)
    w_exp = [json.loads(l) for l in run("export", R, "--what", "cells", "--format", "jsonl",
                                        "--window", "10s").stdout.splitlines()]
    check([c["output_tokens"] for c in w_rep["cells"]] == [c["output_tokens"] for c in w_exp],
          "--window reaches the exported cells")

    # goodput under SLOs reaches the exported cells as the report has it
    s_rep = json.loads(run("report", R, "--format", "json", "--slo", "ttft=300ms").stdout)
    s_exp = [json.loads(l) for l in run("export", R, "--what", "cells", "--format", "jsonl",
                                        "--slo", "ttft=300ms").stdout.splitlines()]
    got = [(c["cell"], c["slo_met"], c["goodput_req_s"], c["slo_meets"]) for c in s_exp]
    want = [(c["id"], c["slo"]["met"] if c["slo"] else None,
             c["slo"]["goodput_req_s"] if c["slo"] else None,
             (("yes" if c["slo"]["meets"] else "no") if c["slo"]["judged"] else None)
             if c["slo"] else None) for c in s_rep["cells"]]
    check(got == want and any(g[1] for g in got), "goodput agrees with the report")
    check(all(c["slo_met"] is None for c in cells_jl), "no --slo: no goodput")

    # requests: output tokens of measured requests of one cell add up to what
    # dump says, and every request is a row
    reqs = list(csv.DictReader(io.StringIO(run("export", R, "--what", "requests").stdout)))
    cell = "decode-8192x4"
    dump = [json.loads(l) for l in run("dump", R, "--cell", cell).stdout.splitlines()]
    check(len([q for q in reqs if q["cell"] == cell]) ==
          len([d for d in dump if d["type"] == "request"]) > 0, "a row per request")
    got = sum(int(q["output_tokens"]) for q in reqs if q["cell"] == cell)
    want = sum(sum(c[1] for c in d["chunks"]) for d in dump if d["cell"] == cell)
    check(got == want and got > 0, "requests' output tokens: %d vs dump %d" % (got, want))
    first = next(q for q in reqs if q["cell"] == cell and q["role"] == "measured")
    d0 = next(d for d in dump if d["cell"] == cell and d["role"] == "measured")
    check(int(first["first_token_ns"]) == d0["chunks"][0][0] and
          int(first["t_send_ns"]) == d0["send"], "first request's times as dump prints them")

    # several runs, one header, keyed by run
    r2 = run("export", R, R + "/", "--what", "cells", "-o", os.path.join(tmp, "two.csv"))
    two = list(csv.DictReader(open(os.path.join(tmp, "two.csv"))))
    check(r2.returncode == 0 and len(two) == 2 * len(report["cells"]) and
          {t["run"] for t in two} == {R, R + "/"}, "two runs in one file, keyed by run")

    # usage errors
    for args, text in ((["--what", "cells"], "at least one run"),
                       ([R], "needs --what"),
                       ([R, "--what", "tokens"], "unknown 'tokens'"),
                       ([R, "--what", "cells", "--format", "xml"], "unknown 'xml'")):
        e = run("export", *args)
        check(e.returncode == 2 and text in e.stderr, "usage error %s: %s" % (args, e.stderr))
    e = run("export", os.path.join(tmp, "nope"), "--what", "cells")
    check(e.returncode == 1, "missing run exits 1")

print("%d passed, %d failed" % (passed, fails))
sys.exit(1 if fails else 0)
