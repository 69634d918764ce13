#!/usr/bin/env python3
"""Compare a captured run's chunk times with tokentrace-sim's ground truth
(formats/sim-truth-log.md) and with what the report says about each cell.

usage: timing_truth.py RUN TRUTH DUMP.jsonl REPORT.json [--expect-clean|--expect-starved]

Per measured request of each decode cell (M-ttft's population): its TTFT
as recorded (first chunk - send) against the truth (the simulator's emit
time of the first token - the same send time), and whether
the report could know the request's TTFT is doubtful (docs/metrics.md
M-timing: its first chunk's stamp shared, or the capture waited >= 1 ms for
a CPU before it).  Per cell: the median TTFT and per-request tok/s from the
report against the same medians of the true times, and the cell's status.

Fails (exit 1) when a request's TTFT is off by more than 1 ms and the run
does not flag it, or when a cell is Valid with a median off by more than
1 % and 0.1 ms (M-timing's rule); with --expect-clean also when any request is off by more than 1 ms
or any cell is not Valid; with --expect-starved also when no request is
off by more than 1 ms (the starvation did not happen, so nothing was
tested).  Prints the figures either way.  A run without the capture's
timing (before run format 1.4) counts every request as not flagged."""
import json
import os
import struct
import sys

LIMIT_NS = 1_000_000
WAIT_NS = 1_000_000  # M-timing: a wait this long makes a time doubtful
FLOOR_MS = 0.1  # M-timing: TT_TIMING_MOVE_FLOOR_MS


def read_truth(path):
    data = open(path, "rb").read()
    if data[:8] != b"TTSIMTR1":
        sys.exit("not a truth log: " + path)
    reqs, chunks = {}, {}
    p = 16
    while p < len(data):
        t = data[p]
        if t == 1:
            if p + 27 > len(data):
                break
            sim_id, arrival = struct.unpack_from("<QQ", data, p + 1)
            (idlen,) = struct.unpack_from("<H", data, p + 25)
            cid = data[p + 27:p + 27 + idlen].decode()
            reqs[cid] = (sim_id, arrival)
            p += 27 + idlen
        elif t == 2:
            if p + 25 > len(data):
                break
            sim_id, emit = struct.unpack_from("<QQ", data, p + 1)
            first, count = struct.unpack_from("<II", data, p + 17)
            chunks.setdefault(sim_id, []).append((emit, count))
            p += 25 + 8 * count
        elif t == 3:
            p += 32
        elif t == 4:  # QUEUE (truth log version 2, formats/sim-truth-log.md)
            p += 21
        else:
            break
    return reqs, chunks


def median(v):
    """M-pct: linear interpolation between order statistics."""
    v = sorted(v)
    if not v:
        return float("nan")
    pos = 0.5 * (len(v) - 1)
    i = int(pos)
    if i + 1 >= len(v):
        return v[i]
    return v[i] + (v[i + 1] - v[i]) * (pos - i)


def main():
    run, truth_path, dump_path, report_path = sys.argv[1:5]
    clean = "--expect-clean" in sys.argv[5:]
    starved = "--expect-starved" in sys.argv[5:]
    man = json.load(open(os.path.join(run, "manifest.json")))
    origin = json.load(open(os.path.join(run, "capture-info.json")))["origin_monotonic_ns"]
    index = {c["id"]: i for i, c in enumerate(man["cells"])}
    cells = {c["id"]: c for c in man["cells"]}
    report = {c["id"]: c for c in json.load(open(report_path))["cells"]}
    treqs, tchunks = read_truth(truth_path)
    roles = {"measured": 0, "warmup": 1, "scout": 2}
    per_cell = {}
    bad = 0
    for line in open(dump_path):
        r = json.loads(line)
        if r.get("type") != "request" or r["role"] != "measured":
            continue
        c = cells.get(r["cell"])
        if not c or c["phase"] != "decode" or "window_end_ns" not in c:
            continue
        ch = [x for x in r["chunks"] if x[1] > 0]
        if not ch or ch[0][0] >= c["window_end_ns"]:
            continue
        cid = "tt-%d-%d-%d-%d" % (index[r["cell"]], r["slot"], r["seq"], roles[r["role"]])
        if cid not in treqs:
            sys.exit("request %s is not in the truth log" % cid)
        sim_id, arrival = treqs[cid]
        tc = tchunks.get(sim_id, [])
        if len(tc) < len(ch) or [n for _, n in tc[:len(ch)]] != [n for _, n in ch]:
            sys.exit("request %s: chunks differ from the truth log" % cid)
        # the simulator's arrival time is when its own loop read the request
        # (late on a busy machine: up to 2 ms seen), so the truth is the
        # emission against the capture's own send time
        ttft = ch[0][0] - r["send"]
        true_ttft = tc[0][0] - origin - r["send"]
        tm = r.get("timing")
        # M-timing's doubtful TTFT: the capture waited >= 1 ms (or unknown)
        wait = tm["cpu_wait_first_ns"] if tm else 0
        flagged = tm is not None and (wait is None or wait >= WAIT_NS)
        s = per_cell.setdefault(r["cell"], {"ttft": [], "true_ttft": [], "rate": [], "span": [],
                                            "true_rate": [], "off": 0, "off_flagged": 0,
                                            "flagged": 0, "n": 0, "worst": 0})
        s["n"] += 1
        s["ttft"].append(ttft)
        s["true_ttft"].append(true_ttft)
        s["flagged"] += flagged
        err = ttft - true_ttft
        s["worst"] = max(s["worst"], abs(err))
        if abs(err) > LIMIT_NS:
            s["off"] += 1
            s["off_flagged"] += flagged
        if len(ch) >= 2 and ch[-1][0] >= c["window_start_ns"]:
            toks = sum(n for _, n in ch) - ch[0][1]
            if ch[-1][0] > ch[0][0]:
                s["rate"].append(toks / ((ch[-1][0] - ch[0][0]) / 1e9))
                s["span"].append(ch[-1][0] - ch[0][0])
            te = [e for e, _ in tc[:len(ch)]]
            if te[-1] > te[0]:
                s["true_rate"].append(toks / ((te[-1] - te[0]) / 1e9))
    for cell in sorted(per_cell):
        s = per_cell[cell]
        rc = report[cell]
        t_med = rc["ttft_ms"]["p50"]
        true_t = median(s["true_ttft"]) / 1e6
        r_med = rc["per_request_tok_s"]
        true_r = median(s["true_rate"])
        e_t = (t_med - true_t) / true_t if true_t else float("nan")
        e_r = (r_med - true_r) / true_r if true_r else float("nan")
        status = rc["status_key"]
        print("%-18s %-18s requests %4d off>1ms %4d flagged-of-those %4d flagged %4d "
              "worst %.2f ms | TTFT p50 %.3f ms true %.3f (%+.2f %%) | tok/s p50 %.2f "
              "true %.2f (%+.2f %%)" % (cell, status, s["n"], s["off"], s["off_flagged"],
                                        s["flagged"], s["worst"] / 1e6, t_med, true_t,
                                        100 * e_t, r_med, true_r, 100 * e_r))
        if s["off"] > s["off_flagged"]:
            print("  FAIL: %d requests off by > 1 ms are not flagged" % (s["off"] - s["off_flagged"]))
            bad = 1
        # M-timing: Client overloaded needs a move of more than 1 % and of
        # at least FLOOR_MS (the rate's move as the median span's change)
        span_ms = median(s["span"]) / 1e6 if s["span"] else 0.0
        off_t = abs(e_t) > 0.01 and abs(t_med - true_t) >= FLOOR_MS
        off_r = abs(e_r) > 0.01 and abs(e_r) * span_ms >= FLOOR_MS
        if status == "valid" and (off_t or off_r):
            print("  FAIL: Valid with a median off by more than 1 % and %.1f ms" % FLOOR_MS)
            bad = 1
        if clean and (s["off"] or status != "valid"):
            print("  FAIL: expected a clean, Valid cell")
            bad = 1
    if not per_cell:
        print("FAIL: no decode cell measured")
        bad = 1
    if starved and not any(s["off"] for s in per_cell.values()):
        print("FAIL: no request was off by more than 1 ms: the capture was not starved")
        bad = 1
    sys.exit(bad)


main()
