#!/usr/bin/env python3
"""The imported figures of a run against the tool's own summary of it.

usage: check_summary.py genai-perf|aiperf|guidellm REPORT.json SUMMARY.json

(for guidellm, SUMMARY.json is the benchmarks.json itself: each benchmark's
`metrics` is GuideLLM's summary of it; the first benchmark is checked)

REPORT.json is `tokentrace report --format json` of the imported run.
Figures defined the same way must agree within 1 %; those defined
differently must differ exactly as formats/import-NAME.md explains (the
explanation is recomputed here, so a wrong explanation fails).  Prints one
line per figure; exit 1 on any failure."""
import json
import sys

kind, rep, summ = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
cell = rep["cells"][0]
fail = 0


def close(name, ours, theirs, tol=0.01):
    global fail
    if ours is None:
        # a TTFT quantile our report leaves out for too few samples
        # (docs/metrics.md M-pct: p90 needs 10, p99 100): theirs is printed
        need = {"TTFT p90": 10, "TTFT p99": 100}.get(name)
        ok = need is not None and cell["ttft_ms"]["n"] < need
        fail += not ok
        print(f"{'info' if ok else 'FAIL'} {name}: ours null ({cell['ttft_ms']['n']} samples), "
              f"theirs {theirs:.6g}")
        return
    rel = abs(ours - theirs) / abs(theirs) if theirs else abs(ours)
    ok = rel <= tol
    fail += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: ours {ours:.6g}, theirs {theirs:.6g} ({rel * 100:.3f} %)")


if kind == "genai-perf":
    s = summ
    for k, q in (("avg", "mean"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99")):
        close(f"TTFT {k}", cell["ttft_ms"][q], s["time_to_first_token"][k])
    # Output tokens: GenAI-Perf re-tokenizes the text with its --tokenizer
    # (a Llama-2 one here); we count the server's usage.  Its ITL is
    # (latency - TTFT) / (OSL - 1): with its OSL replaced by ours it must
    # equal our mean time between tokens.
    n = cell["completed"]
    ours_osl = cell["output_tokens"] / n
    their_osl = s["output_sequence_length"]["avg"]
    print(f"info output tokens per request: ours {ours_osl:.2f} (server usage), theirs {their_osl:.2f} (tokenizer)")
    close("ITL avg x (OSL - 1), theirs with their OSL",
          cell["tbt_ms"]["mean"] * (ours_osl - 1), s["inter_token_latency"]["avg"] * (their_osl - 1))
    # Throughput: theirs is their token total over their duration (first
    # request to last response, n / request_throughput); ours our tokens
    # over the span of the measurement windows.  Scaled by the token count
    # and the duration, ours must give theirs.
    their_dur = n / s["request_throughput"]["avg"]
    print(f"info duration: ours {cell['measured_s']:.3f} s (window_boundaries), theirs {their_dur:.3f} s")
    close("output tok/s, scaled by their tokens and duration",
          cell["total_tok_s"] * (their_osl / ours_osl) * (cell["measured_s"] / their_dur),
          s["output_token_throughput"]["avg"])
elif kind == "aiperf":
    r = summ["records"]
    for k, q in (("avg", "mean"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99")):
        close(f"TTFT {k}", cell["ttft_ms"][q], r["ttft"][k])
    close("output token throughput", cell["total_tok_s"], r["output_token_throughput"]["avg"])
    close("total output tokens", cell["output_tokens"], r["total_osl"]["avg"])
    close("benchmark duration", cell["measured_s"], r["benchmark_duration"]["avg"])
    close("completed requests", cell["completed"], r["request_count"]["avg"])
    for k, q in (("p50", "p50"), ("p90", "p90"), ("avg", "mean")):
        close(f"output tok/s per user {k}", cell["per_request_tok_s_dist"][q],
              r["output_token_throughput_per_user"][k])
    # ITL: AIPerf's is per request (latency - TTFT) / (OSL - 1), then its
    # statistic over requests; ours is over every token gap.  Their means
    # agree (each token gap weighs the same in both when requests are of
    # similar length); their medians differ by definition.
    close("ITL mean (per request vs per token)", cell["tbt_ms"]["mean"],
          r["inter_token_latency"]["avg"])
elif kind == "guidellm":
    # GuideLLM's statistics cover the requests of its measured span
    # (warm-up and cool-down left out): the import counts the same ones.
    m = summ["benchmarks"][0]["metrics"]
    t = m["time_to_first_token_ms"]["successful"]
    close("TTFT mean", cell["ttft_ms"]["mean"], t["mean"])
    close("TTFT median", cell["ttft_ms"]["p50"], t["median"])
    close("TTFT p99", cell["ttft_ms"]["p99"], t["percentiles"]["p99"])
    # its inter-token latency is (last - first) / (tokens - 1) per request,
    # weighted by tokens - 1: our mean time between tokens, by definition
    close("ITL mean", cell["tbt_ms"]["mean"], m["inter_token_latency_ms"]["successful"]["mean"])
    close("completed requests", cell["completed"], m["request_totals"]["successful"], tol=0)
    close("requests with a first token", cell["ttft_ms"]["n"], t["count"], tol=0)
else:
    sys.exit(f"unknown kind {kind}")
sys.exit(1 if fail else 0)
