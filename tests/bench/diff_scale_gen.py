#!/usr/bin/env python3
"""Write a run of N decode cells with reported figures (no traces), as
tokentrace import writes them (formats/run-v1.md 2.3): a matrix of N cells
for timing the diff at scale (tests/bench/diff_scale.sh)."""
import json, os, sys

n, out = int(sys.argv[1]), sys.argv[2]
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
conc = list(range(1, 101))
ctxs = [1024 * (i + 1) for i in range((n + 99) // 100)]
cells = []
x = seed
for ctx in ctxs:
    for c in conc:
        if len(cells) == n:
            break
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        j = 1 + ((x >> 33) % 1000) / 1e5  # up to 1 % jitter
        r = {"total_tok_s": 100.0 * c * j, "per_request_tok_s_p50": 100.0 * j,
             "ttft_ms_p50": 50.0 * j, "ttft_ms_p90": 60.0 * j, "tbt_ms_p50": 10.0 / j,
             "tbt_ms_p90": 12.0 / j, "avg_active": c, "output_tokens": 3000 * c,
             "measured_s": 30, "requests": c, "errors": 0, "completed": c}
        cells.append({"id": "decode-%dx%d" % (ctx, c), "phase": "decode", "context": ctx,
                      "concurrency": c, "state": "done", "reported": r,
                      "reported_status": "valid"})
m = {"format": "tokentrace-run", "format_version": "1.1",
     "tool": {"name": "diff_scale generator", "version": "1"}, "origin_unix_ns": "0",
     "server": {"engine": "vllm"}, "model": {"id": "m", "served_name": "m"}, "notes": [],
     "settings": {"endpoint": "completions", "contexts": ctxs, "concurrency": conc,
                  "prefill_contexts": [], "duration_s": 30, "max_tokens": 2048,
                  "prompt": {"kind": "token_ids", "seed": 0}, "scrape_interval_s": 0,
                  "readiness_s": 3, "readiness_timeout_s": 60},
     "kv_capacity": {"tokens": -1, "source": "unknown"}, "unavailable": ["trace"],
     "cells": cells}
os.makedirs(os.path.join(out, "cells"), exist_ok=True)
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(m, f)
