#!/usr/bin/env python3
"""Inputs of the scale benchmark (tests/bench/scale_bench.sh, issue 20
points 4, 5 and 9): one file per case and size, written to DIR.

  lib_json N       llm-inference-bench matrix of N x N cells (contexts and
                   concurrency levels, no results: every cell rebuilt)
  vllm N           vLLM bench serve --save-detailed of N requests
  aiperf N         AIPerf profile_export.jsonl of N records, no summary
  guidellm N       GuideLLM benchmarks.json, one rate benchmark of N requests
  genai N          GenAI-Perf profile_export.json, one request-rate
                   experiment of N requests
Deterministic: the same N writes the same bytes."""
import json
import sys


def lib_json(n, out):
    doc = {"metadata": {"version": "0.4.17", "engine": "vllm", "model": "m",
                        "max_tokens": 256, "max_total_tokens": 1 << 40,
                        "context_lengths": [1024 * (i + 1) for i in range(n)],
                        "concurrency_levels": list(range(1, n + 1))},
           "results": []}
    json.dump(doc, out)


def vllm(n, out):
    starts, ttfts, itls, ins, outs, errs = [], [], [], [], [], []
    for i in range(n):
        starts.append(1000.0 + i * 0.01)
        ttfts.append(0.05)
        itls.append([0.01] * 15)
        ins.append(512)
        outs.append(16)
        errs.append("")
    doc = {"date": "20261203-080000", "backend": "vllm", "model_id": "m",
           "num_prompts": n, "request_rate": "inf", "max_concurrency": 8,
           "duration": n * 0.01 + 0.2, "completed": n, "failed": 0,
           "total_input_tokens": 512 * n, "total_output_tokens": 16 * n,
           "input_lens": ins, "output_lens": outs, "ttfts": ttfts, "itls": itls,
           "start_times": starts, "errors": errs}
    json.dump(doc, out)


def aiperf(n, out):
    t0 = 1759522419000000000
    for i in range(n):
        s = t0 + i * 10_000_000
        rec = {"metadata": {"x_request_id": "r%d" % i, "request_start_ns": s,
                            "request_end_ns": s + 200_000_000, "was_cancelled": False},
               "metrics": {"time_to_first_token": {"value": 50.0, "unit": "ms"},
                           "inter_chunk_latency": {"value": [10.0] * 15, "unit": "ms"},
                           "output_sequence_length": {"value": 16, "unit": "tokens"},
                           "input_sequence_length": {"value": 512, "unit": "tokens"}}}
        out.write(json.dumps(rec))
        out.write("\n")


def guidellm(n, out):
    t0 = 1759522419.0
    reqs = []
    for i in range(n):
        s = t0 + i * 0.01
        reqs.append({"type_": "generative_request_stats", "request_id": "r%d" % i,
                     "prompt_tokens": 512, "output_tokens": 16,
                     "info": {"timings": {"request_start": s, "first_token_iteration": s + 0.05,
                                          "last_token_iteration": s + 0.2,
                                          "request_end": s + 0.2}}})
    doc = {"metadata": {"version": 1, "guidellm_version": "0.5.0"},
           "args": {"model": "m", "target": "http://localhost:8000"},
           "benchmarks": [{"config": {"strategy": {"type_": "constant", "rate": 100}},
                           "start_time": t0, "end_time": t0 + n * 0.01 + 0.2,
                           "requests": {"successful": reqs, "incomplete": [], "errored": []}}]}
    json.dump(doc, out)


def genai(n, out):
    t0 = 1759522419000000000
    reqs = []
    for i in range(n):
        s = t0 + i * 10_000_000
        reqs.append({"timestamp": s,
                     "response_timestamps": [s + 50_000_000 + k * 10_000_000 for k in range(4)],
                     "response_outputs": [{"response": 'data: {"choices":[{"text":"a"}]}\n\n'}] * 4})
    doc = {"version": "0.0.8", "service_kind": "openai", "endpoint": "v1/completions",
           "experiments": [{"experiment": {"mode": "request_rate", "value": 100},
                            "requests": reqs}]}
    json.dump(doc, out)


if __name__ == "__main__":
    kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(path, "w") as f:
        globals()[kind](n, f)
