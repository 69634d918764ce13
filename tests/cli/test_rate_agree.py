#!/usr/bin/env python3
"""Open-loop (rate) cells: the cells export and the report's JSON agree on
every figure, column by column (formats/export-v1.md 2.4, issue 23.2), for
recorded open-loop runs, with and without --slo and a moved window; the
rows come in the report's order, with the report's phase and concurrency.

usage: test_rate_agree.py TOKENTRACE FIXTURES"""
import json
import os
import subprocess
import sys

tt, fx = sys.argv[1], sys.argv[2]
fails = 0
checked = 0


def check(ok, what):
    global fails
    if not ok:
        fails += 1
        print("FAIL:", what)


def run(*args):
    r = subprocess.run([tt, *args], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


def dig(obj, path):
    for k in path:
        if obj is None:
            return None
        obj = obj[k] if isinstance(k, int) else obj.get(k)
    return obj


# export column -> the report-json path of the same figure
COLS = {
    "phase": ["phase"], "context": ["context"], "concurrency": ["concurrency"],
    "status_key": ["status_key"], "status": ["status"],
    "total_tok_s": ["total_tok_s"], "per_request_tok_s": ["per_request_tok_s"],
    "ttft_ms_p50": ["ttft_ms", "p50"], "tbt_ms_p50": ["tbt_ms", "p50"],
    "avg_active": ["avg_active"], "avg_active_source": ["avg_active_source"],
    "avg_in_flight": ["avg_in_flight"], "completed": ["completed"],
    "output_tokens": ["output_tokens"], "measured_s": ["measured_s"],
    "requests": ["requests"], "errors": ["errors"], "cut": ["cut"], "chunks": ["chunks"],
    "multi_token_chunks": ["multi_token_chunks"], "prompt_tokens": ["prompt_tokens"],
    "scrapes": ["server", "scrapes"], "waiting_share": ["server", "waiting_share"],
    "kv_usage_max": ["server", "kv_usage_max"], "preemptions": ["server", "preemptions"],
    "longest_stall_ms": ["longest_stall_ms"], "gaps_over_share": ["gaps_over_share"],
    "damage": ["damage"], "tokens_per_chunk": ["tokens_per_chunk"],
    "queue_ms": ["ttft_parts", "queue_ms"], "prefill_ms": ["ttft_parts", "prefill_ms"],
    "ttft_rest_ms": ["ttft_parts", "rest_ms"],
    "spec_acceptance": ["spec_decode", "acceptance"],
    "spec_accepted_len": ["spec_decode", "accepted_len"],
    "cached_share": ["prefix_cache", "cached_share"],
    "server_cache_hit_rate": ["prefix_cache", "server_hit_rate"],
    "reasoning_tokens": ["reasoning", "reasoning_tokens"],
    "answer_tokens": ["reasoning", "answer_tokens"],
    "ttfr_ms_p50": ["reasoning", "ttfr_ms", "p50"],
    "ttfa_ms_p50": ["reasoning", "ttfa_ms", "p50"],
    "rate_req_s": ["open_loop", "rate_req_s"],
    "scheduled_req_s": ["open_loop", "scheduled_req_s"],
    "achieved_req_s": ["open_loop", "achieved_req_s"],
    "ended": ["open_loop", "ended"], "out_tok_s": ["open_loop", "out_tok_s"],
    "due": ["open_loop", "due"], "unanswered": ["open_loop", "unanswered"],
    "lateness_p99_ms": ["open_loop", "lateness_p99_ms"],
    "ttft_due_growth_ms": ["open_loop", "ttft_due_growth_ms"],
    "ttft_due_trend_ms_s": ["open_loop", "ttft_due_trend_ms_s"],
    "ttft_due_trend_se_ms_s": ["open_loop", "ttft_due_trend_se_ms_s"],
    "lateness_ms_p50": ["open_loop", "lateness_ms", "p50"],
    "ttft_due_ms_p50": ["open_loop", "ttft_due_ms", "p50"],
    "ttft_sent_ms_p50": ["open_loop", "ttft_sent_ms", "p50"],
    "e2e_due_ms_p50": ["open_loop", "e2e_due_ms", "p50"],
    "slo_due_judged": ["open_loop", "slo_due", "judged"],
    "slo_due_met": ["open_loop", "slo_due", "met"],
    "slo_due_share": ["open_loop", "slo_due", "share"],
    "goodput_due_req_s": ["open_loop", "slo_due", "goodput_req_s"],
    "slo_due_meets": ["open_loop", "slo_due", "meets"],
    "short_outputs": ["short_outputs"],
    # export 1.3 (issue 24.1): tails, E2E and req/s as report-json 1.5 has them
    "ttft_ms_p90": ["ttft_ms", "p90"], "ttft_ms_p99": ["ttft_ms", "p99"],
    "tbt_ms_p90": ["tbt_ms", "p90"], "tbt_ms_p99": ["tbt_ms", "p99"],
    "e2e_ms_p50": ["e2e_ms", "p50"], "e2e_ms_p90": ["e2e_ms", "p90"],
    "e2e_ms_p99": ["e2e_ms", "p99"], "req_s": ["req_s"],
    # the decode SLO columns: null on rate cells in both (judged from the due time)
    "slo_judged": ["slo", "judged"], "slo_met": ["slo", "met"], "slo_share": ["slo", "share"],
    "goodput_req_s": ["slo", "goodput_req_s"], "goodput_tok_s": ["slo", "goodput_tok_s"],
    "slo_meets": ["slo", "meets"],
}
# keys, the manifest's state (not in the report), and (export 1.3) run facts
# repeated on each row and the window's bounds, which the report does not print
SKIP = {"run", "cell", "state", "engine", "engine_version", "window_start_ns", "window_end_ns"}

runs = [os.path.join(fx, "runs", "openloop13.tar.zst"), os.path.join(fx, "runs", "openloop.tar.zst")]
variants = [[], ["--slo", "ttft=2ms,e2e=60ms"], ["--skip-first", "0.001s", "--window", "1.5s"]]
for path in runs:
    for opts in variants:
        rep = json.loads(run("report", path, "--format", "json", *opts))
        rows = [json.loads(l) for l in run("export", path, "--what", "cells", "--format", "jsonl",
                                           *opts).splitlines()]
        header = run("export", path, "--what", "cells", "--format", "csv", *opts).splitlines()[0]
        for col in header.split(","):
            check(col in COLS or col in SKIP, f"export column {col} has no report figure here")
        check([r["cell"] for r in rows] == [c["id"] for c in rep["cells"]],
              f"{path} {opts}: rows not in the report's order")
        phases = [c["phase"] for c in rep["cells"]]
        check(phases == sorted(phases, key=["prefill", "decode", "rate"].index),
              f"{path}: phases out of order {phases}")
        n_rate = 0
        for row, cell in zip(rows, rep["cells"]):
            if cell["phase"] != "rate":
                continue
            n_rate += 1
            check(cell["concurrency"] == 0, f"{cell['id']}: concurrency {cell['concurrency']}")
            for col, p in COLS.items():
                want = dig(cell, p)
                if col == "slo_due_meets" and want is not None:
                    want = "yes" if want else "no"
                if col == "slo_meets" and want is not None:
                    want = "yes" if want else "no"
                got = row[col]
                checked += 1
                check(got == want, f"{os.path.basename(path)} {opts} {cell['id']} {col}: "
                                   f"export {got!r}, report {want!r}")
            # figures that were null on rate cells before issue 23.2
            check(all(v is not None for v in cell["chunks_by_tokens"]),
                  f"{cell['id']}: chunks_by_tokens {cell['chunks_by_tokens']}")
        check(n_rate > 0, f"{path}: no rate cell")

print(f"{checked} rate-cell figures compared, {fails} failures")
sys.exit(1 if fails else 0)
