#!/usr/bin/env python3
"""Cell statuses against the simulator's truth (issue 22.2, docs/metrics.md
M-status, formats/sim-truth-log.md QUEUE records).

usage: status_truth.py SIM CAPTURE TOKENTRACE WORKDIR [--only NAME]

Each scenario starts tokentrace-sim with --truth, captures a small matrix
from it (short windows), reports it as JSON and compares each decode cell's
status with what the truth log says happened to the cell's measured
requests in the window:

- truth "queued": at least a quarter of them waited for capacity (a step
  start found them waiting and did not admit them: passed_steps >= 1);
- truth "not queued": none did (each was admitted by the first step that
  could take it: at most one step after it arrived, turnover included);
- in between: either status is accepted, and the cell is counted apart.

A cell the capture judged over capacity before running it is compared
with the arithmetic instead: its status must be Over capacity.  The script
prints one line per cell and the agreement; it fails on any disagreement.
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

SIM, CAPTURE, TOKENTRACE, WORK = sys.argv[1:5]
ONLY = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "--only" else None

# name, simulator flags, capture flags, expected truth by cell id (None:
# any), as the scenario is built to give.  Parametric model, 2 ms steps.
STEP = ["--step-base-ms", "2", "--per-seq-ms", "0", "--per-ctx-token-ns", "0"]
COMMON = ["--contexts", "256", "--duration", "2s", "--readiness", "0.5s",
          "--readiness-timeout", "2s", "--seed", "7", "-q"]
SCENARIOS = [
    # max-num-seqs 4: under, at and over; short outputs (turnover every
    # 34 ms per stream) and long ones; 250 ms and 1 s scrapes
    ("seqs-short-250ms", ["--max-num-seqs", "4"] + STEP,
     ["--concurrency", "2,4,8", "--max-tokens", "16", "--scrape-interval", "250ms"],
     {"decode-256x2": "no", "decode-256x4": "no", "decode-256x8": "yes"}),
    ("seqs-long-250ms", ["--max-num-seqs", "4"] + STEP,
     ["--concurrency", "2,4,8", "--max-tokens", "256", "--scrape-interval", "250ms"],
     {"decode-256x2": "no", "decode-256x4": "no", "decode-256x8": "yes"}),
    ("seqs-short-1s", ["--max-num-seqs", "4"] + STEP,
     ["--concurrency", "2,4,8", "--max-tokens", "16", "--scrape-interval", "1s"],
     {"decode-256x2": "no", "decode-256x4": "no", "decode-256x8": "yes"}),
    ("seqs-long-1s", ["--max-num-seqs", "4"] + STEP,
     ["--concurrency", "4,5", "--max-tokens", "256", "--scrape-interval", "1s"],
     {"decode-256x4": "no", "decode-256x5": "yes"}),
    # many streams, short outputs: the waiting gauge is often > 0 from
    # turnover alone, and no request waits for capacity
    ("turnover-64", ["--max-num-seqs", "256"] + STEP,
     ["--concurrency", "64", "--max-tokens", "8", "--scrape-interval", "250ms"],
     {"decode-256x64": "no"}),
    # KV capacity: 4 x (1024 + 64) tokens fit exactly, 8 do not (the
    # capture does not run that cell: Over capacity)
    ("kv", ["--kv-capacity", "4352", "--max-model-len", "2048"] + STEP,
     ["--contexts", "1024", "--concurrency", "4,8", "--max-tokens", "64",
      "--scrape-interval", "250ms"],
     {"decode-1024x4": "no", "decode-1024x8": "over"}),
    # llama.cpp slots (4 of 2048 tokens), with and without metrics
    # (--silent-close 0: the capture's lost races with the flavor's silent
    # closes are not what this test is about)
    ("slots-metrics", ["--flavor", "llamacpp", "--silent-close", "0", "--max-num-seqs", "4",
                       "--kv-capacity", "8192",
                       "--max-model-len", "8192"] + STEP,
     ["--concurrency", "4,8", "--max-tokens", "64", "--scrape-interval", "250ms"],
     {"decode-256x4": "no", "decode-256x8": "yes"}),
    ("slots-no-metrics", ["--flavor", "llamacpp", "--silent-close", "0", "--max-num-seqs", "4",
                          "--kv-capacity", "8192",
                          "--max-model-len", "8192"] + STEP,
     ["--concurrency", "4,8", "--max-tokens", "64", "--scrape-interval", "0"],
     {"decode-256x4": "no", "decode-256x8": "yes"}),
]


def read_truth(path):
    """{client_id: (arrival_ns, end_ns, passed_steps)} from a version 2 log."""
    data = open(path, "rb").read()
    if data[:8] != b"TTSIMTR1" or struct.unpack_from("<I", data, 8)[0] != 2:
        sys.exit(f"FAILED: {path} is not a version 2 truth log")
    p, reqs, by_id = 16, {}, {}
    while p < len(data):
        t = data[p]
        if t == 1:
            sid, arrival, _, _, n = struct.unpack_from("<QQIIH", data, p + 1)
            cid = data[p + 27:p + 27 + n].decode()
            by_id[sid] = cid
            reqs[cid] = [arrival, None, 0]
            p += 27 + n
        elif t == 2:
            (n,) = struct.unpack_from("<I", data, p + 21)
            p += 25 + 8 * n
        elif t == 3:
            sid, end = struct.unpack_from("<QQ", data, p + 1)
            if sid in by_id:
                reqs[by_id[sid]][1] = end
            p += 32
        elif t == 4:
            sid, _, passed = struct.unpack_from("<QQI", data, p + 1)
            if sid in by_id:
                reqs[by_id[sid]][2] = passed
            p += 21
        else:
            sys.exit(f"FAILED: unknown record type {t} at {p} in {path}")
    return reqs


def run_scenario(name, sim_flags, cap_flags):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    truth = os.path.join(d, "truth.bin")
    sim = subprocess.Popen([SIM, "--port", "0", "--max-runtime", "120", "--truth", truth] +
                           sim_flags, stdout=subprocess.PIPE, stderr=open(d + "/sim.log", "w"),
                           text=True)
    line = sim.stdout.readline()
    if "listening on" not in line:
        sim.kill()
        sys.exit(f"FAILED: {name}: the simulator did not start: {open(d + '/sim.log').read()}")
    url = line.split()[-1]
    run = os.path.join(d, "run")
    cap = subprocess.run([CAPTURE, url, "-o", run] + COMMON + cap_flags, capture_output=True,
                         text=True, timeout=150)
    sim.send_signal(signal.SIGTERM)
    sim.wait(timeout=30)
    if cap.returncode != 0:
        sys.exit(f"FAILED: {name}: capture exited {cap.returncode}: {cap.stderr[-600:]}")
    rep = subprocess.run([TOKENTRACE, "report", run, "--format", "json"], capture_output=True,
                         text=True, timeout=60)
    if rep.returncode != 0:
        sys.exit(f"FAILED: {name}: report exited {rep.returncode}: {rep.stderr}")
    return run, json.loads(rep.stdout), read_truth(truth)


def judge(name, run, report, truth, want):
    manifest = json.load(open(os.path.join(run, "manifest.json")))
    origin = json.load(open(os.path.join(run, "capture-info.json")))["origin_monotonic_ns"]
    cells = {c["id"]: (i, c) for i, c in enumerate(manifest["cells"])}
    status = {c["id"]: c for c in report["cells"]}
    rows = []
    for cid, expect in want.items():
        idx, mc = cells[cid]
        st = status[cid]["status"]
        if mc["state"] == "over_capacity":
            rows.append((name, cid, "over", None, st, st == "Over capacity", expect, None))
            continue
        ws = origin + mc["window_start_ns"]
        we = origin + mc["window_end_ns"]
        prefix = f"tt-{idx}-"
        mine = [v for k, v in truth.items()
                if k.startswith(prefix) and k.endswith("-0")  # measured
                and v[0] < we and (v[1] is None or v[1] >= ws)]
        waited = sum(1 for v in mine if v[2] >= 1)
        share = waited / len(mine) if mine else 0.0
        t = "yes" if share >= 0.25 else "no" if waited == 0 else "some"
        queued = st == "Requests queued"
        ev = {e["signal"]: e["value"] for e in status[cid]["evidence"]}
        figs = (status[cid]["server"]["waiting_share"],
                ev.get("mean queue time, decode steps", ev.get("mean wait per request, decode steps")),
                ev.get("share of window over the slots"))
        ok = (t == "yes" and queued) or (t == "no" and not queued) or t == "some"
        rows.append((name, cid, t, (waited, len(mine)), st, ok, expect, figs))
    return rows


def main():
    os.makedirs(WORK, exist_ok=True)
    rows = []
    t0 = time.monotonic()
    for name, sim_flags, cap_flags, want in SCENARIOS:
        if ONLY and name != ONLY:
            continue
        run, rep, truth = run_scenario(name, sim_flags, cap_flags)
        rows += judge(name, run, rep, truth, want)
    bad = 0
    def num(x):
        return "-" if x is None else f"{x:.2f}"
    for name, cid, t, counts, st, ok, expect, figs in rows:
        c = f"{counts[0]} of {counts[1]} waited" if counts else "not run"
        f = (f"; waiting share {num(figs[0])}, wait {num(figs[1])} steps, over slots "
             f"{num(figs[2])}") if figs else ""
        print(f"{'ok  ' if ok else 'BAD '} {name:18} {cid:15} truth {t:4} ({c}); status {st}{f}"
              f"{'' if expect == t else f'  [scenario meant {expect}]'}")
        bad += not ok
        # each scenario is built to give its truth: a scenario that does not
        # test what it says is a failure too
        if expect != t:
            bad += 1
    decided = [r for r in rows if r[2] != "some"]
    agree = sum(1 for r in decided if r[5])
    print(f"agreement: {agree} of {len(decided)} cells with a clear truth "
          f"({len(rows) - len(decided)} in between), {time.monotonic() - t0:.0f} s")
    sys.exit(1 if bad else 0)


main()
