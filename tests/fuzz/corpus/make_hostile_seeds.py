#!/usr/bin/env python3
"""Hostile seeds for the importers' fuzz corpora (issue 20): huge and
negative times (1e300, -1.7e18, 9.3e18), values beyond the run reader's
limits (contexts, concurrency, chunks, tokens per chunk), many records and
deep nesting.  Written beside make_import_corpus.py's seeds as
tests/fuzz/corpus/import-NAME/hostile-*.  Deterministic; run from the
source tree's root.  tests/import/test_import_hostile.c imports every seed
and holds that what imports, reads."""
import json
import os

OUT = "tests/fuzz/corpus"
HUGE = [1e300, -1.7e18, 9.3e18]


def write(name, fname, data):
    d = os.path.join(OUT, "import-" + name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "hostile-" + fname), "w") as f:
        f.write(data)


def aiperf_rec(start=1759522419000000000, end=None, ttft=50.0, icl=(10.0, 10.0), osl=3,
               isl=512, code=None):
    md = {"request_start_ns": start, "request_end_ns": end if end is not None else start + 100000000}
    rec = {"metadata": md,
           "metrics": {"time_to_first_token": {"value": ttft, "unit": "ms"},
                       "inter_chunk_latency": {"value": list(icl), "unit": "ms"},
                       "output_sequence_length": {"value": osl, "unit": "tokens"},
                       "input_sequence_length": {"value": isl, "unit": "tokens"}}}
    if code is not None:
        rec["error"] = {"code": code, "type": "X", "message": "m"}
    return json.dumps(rec)


def aiperf():
    for i, h in enumerate(HUGE):
        write("aiperf", "start-%d.jsonl" % i, aiperf_rec(start=h) + "\n")
        write("aiperf", "end-%d.jsonl" % i, aiperf_rec(end=h) + "\n")
        write("aiperf", "ttft-%d.jsonl" % i, aiperf_rec(ttft=h) + "\n")
        write("aiperf", "gap-%d.jsonl" % i, aiperf_rec(icl=(10.0, abs(h))) + "\n")
        write("aiperf", "isl-%d.jsonl" % i, aiperf_rec(isl=h) + "\n")
        write("aiperf", "code-%d.jsonl" % i, aiperf_rec(code=h) + "\n")
    # two records 9e18 ns apart: each in range, their difference not
    write("aiperf", "far-apart.jsonl", aiperf_rec(start=-3.9e18) + "\n" + aiperf_rec(start=3.9e18) + "\n")
    # gaps that sum past 2^60 ns
    write("aiperf", "gap-sum.jsonl", aiperf_rec(icl=[6e11] * 4) + "\n")
    # a chunk of 2^20 + 1 tokens (two chunks, the second carries the rest)
    write("aiperf", "chunk-tokens.jsonl", aiperf_rec(icl=[1.0], osl=(1 << 20) + 2) + "\n")
    # many records without a summary (most in flight), 1 ms apart
    write("aiperf", "many.jsonl", "".join(
        aiperf_rec(start=1759522419000000000 + i * 1000000) + "\n" for i in range(3000)))
    # raw export with a perf_ns far from start_perf_ns
    raw = {"metadata": {"request_start_ns": 1759522419000000000}, "start_perf_ns": -1.7e18,
           "responses": [{"perf_ns": 9.3e18, "text": "data: {}\n\n"}], "status": 1e300}
    write("aiperf", "raw-perf.jsonl", json.dumps(raw) + "\n")
    write("aiperf", "deep.jsonl", "{\"metadata\":" + "[" * 5000 + "]" * 5000 + "}\n")


def vllm_doc(n=2, **over):
    doc = {"model_id": "m", "backend": "vllm", "max_concurrency": 2, "completed": n, "failed": 0,
           "duration": 1.0, "total_input_tokens": 512 * n, "total_output_tokens": 3 * n,
           "start_times": [1000.0 + i for i in range(n)], "ttfts": [0.05] * n,
           "itls": [[0.01, 0.01]] * n, "output_lens": [3] * n, "input_lens": [512] * n,
           "errors": [""] * n}
    doc.update(over)
    return json.dumps(doc)


def vllm():
    for i, h in enumerate(HUGE):
        write("vllm", "start-%d.json" % i, vllm_doc(start_times=[1000.0, h]))
        write("vllm", "ttft-%d.json" % i, vllm_doc(ttfts=[0.05, abs(h)]))
        write("vllm", "gap-%d.json" % i, vllm_doc(itls=[[0.01], [abs(h)]]))
        write("vllm", "input-%d.json" % i, vllm_doc(input_lens=[512, h]))
        write("vllm", "inputs-total-%d.json" % i, vllm_doc(total_input_tokens=h))
        write("vllm", "conc-%d.json" % i, vllm_doc(max_concurrency=h))
    write("vllm", "conc-1e9.json", vllm_doc(max_concurrency=1e9))
    write("vllm", "chunk-tokens.json", vllm_doc(itls=[[0.01]] * 2, output_lens=[3, 5e6]))
    n = 3000
    write("vllm", "many.json", vllm_doc(n=n))
    write("vllm", "deep.json", "{\"ttfts\":" + "[" * 5000 + "]" * 5000 + "}")


def lib_json_doc(results=None, **md):
    meta = {"version": "0.4.17", "context_lengths": [0, 1024], "concurrency_levels": [1, 2]}
    meta.update(md)
    return json.dumps({"metadata": meta, "results": results if results is not None else [
        {"concurrency": 1, "context_tokens": 0, "aggregate_tps": 50.0}]})


def lib_json():
    for i, h in enumerate(HUGE + [-1]):
        write("lib_json", "ctx-%d.json" % i, lib_json_doc([
            {"concurrency": 1, "context_tokens": h, "aggregate_tps": 1.0}]))
        write("lib_json", "max-tokens-%d.json" % i, lib_json_doc(max_tokens=h))
        write("lib_json", "kv-%d.json" % i, lib_json_doc(max_total_tokens=h))
        write("lib_json", "context-lengths-%d.json" % i, lib_json_doc(context_lengths=[h]))
    write("lib_json", "conc-1e9.json", lib_json_doc([
        {"concurrency": 1e9, "context_tokens": 0, "aggregate_tps": 1.0}]))
    write("lib_json", "levels-1e9.json", lib_json_doc(concurrency_levels=[1e9]))
    write("lib_json", "ttft-inf.json", lib_json_doc([
        {"concurrency": 1, "context_tokens": 0, "aggregate_tps": 1.0, "ttft_p50": 1e308}]))
    doc = json.loads(lib_json_doc())
    doc["prefill"] = {"99999999999999999999": {"ttft_seconds": 1.0}}
    write("lib_json", "prefill-key.json", json.dumps(doc))
    write("lib_json", "matrix.json", lib_json_doc(
        [], context_lengths=list(range(0, 60 * 1024, 1024)), concurrency_levels=list(range(1, 61)),
        max_tokens=256, max_total_tokens=1 << 40))
    write("lib_json", "deep.json", "{\"metadata\":" + "{\"a\":" * 5000 + "1" + "}" * 5000 + "}")


def lib_report():
    head = ("# Speed test matrix\n\nm on gpu\n\n| Phase | Context | Requests at once | Status | "
            "Total tok/s |\n|---|---|---|---|---|\n")
    for i, v in enumerate(["1e300", "99999999999999999999K", "-1.7e18"]):
        write("lib_report", "ctx-%d.md" % i, head + "| Sustained decode | %s | 1 | Valid | 1.0 |\n" % v)
    write("lib_report", "conc-1e9.md", head + "| Sustained decode | 1K | 1000000000 | Valid | 1.0 |\n")
    write("lib_report", "max-output.md", "- **Max output:** 1e300\n\n" + head +
          "| Sustained decode | 1K | 1 | Valid | 1.0 |\n")
    write("lib_report", "many.md", head + "".join(
        "| Sustained decode | %dK | %d | Valid | 1.0 |\n" % (c, k) for c in range(1, 41)
        for k in range(1, 41)))


def genai_doc(ts=1759522419000000000, resp=None, wb=None, mode="concurrency", value=1, n=1):
    reqs = [{"timestamp": ts + i * 1000000,
             "response_timestamps": resp if resp is not None else [ts + i * 1000000 + 5e7],
             "response_outputs": [{"response": "data: {\"choices\":[{\"text\":\"a\"}]}\n\n"}] *
             (len(resp) if resp is not None else 1)} for i in range(n)]
    x = {"experiment": {"mode": mode, "value": value}, "requests": reqs}
    if wb is not None:
        x["window_boundaries"] = wb
    return json.dumps({"version": "0.0.8", "experiments": [x]})


def genai():
    for i, h in enumerate(HUGE):
        write("genai_perf", "ts-%d.json" % i, genai_doc(ts=h))
        write("genai_perf", "resp-%d.json" % i, genai_doc(resp=[h]))
        write("genai_perf", "window-%d.json" % i, genai_doc(wb=[1759522419000000000, h]))
        write("genai_perf", "conc-%d.json" % i, genai_doc(value=h))
    write("genai_perf", "conc-1e9.json", genai_doc(value=1e9))
    write("genai_perf", "many-rate.json", genai_doc(mode="request_rate", value=10, n=3000))
    write("genai_perf", "deep.json", "{\"experiments\":" + "[" * 5000 + "]" * 5000 + "}")


def guidellm_doc(reqs, strategy=None):
    return json.dumps({"metadata": {"version": 1}, "args": {"model": "m"},
                       "benchmarks": [{"config": {"strategy": strategy or {"type_": "synchronous"}},
                                       "start_time": 1759522419.0, "end_time": 1759522429.0,
                                       "requests": {"successful": reqs, "incomplete": [],
                                                    "errored": []}}]})


def greq(start=1759522419.0, first=None, last=None, end=None, out=3, prompt=512):
    return {"prompt_tokens": prompt, "output_tokens": out,
            "info": {"timings": {"request_start": start,
                                 "first_token_iteration": first if first is not None else start + 0.05,
                                 "last_token_iteration": last if last is not None else start + 0.1,
                                 "request_end": end if end is not None else start + 0.1}}}


def guidellm():
    for i, h in enumerate(HUGE):
        write("guidellm", "start-%d.json" % i, guidellm_doc([greq(start=h)]))
        write("guidellm", "end-%d.json" % i, guidellm_doc([greq(end=h)]))
        write("guidellm", "last-%d.json" % i, guidellm_doc([greq(last=abs(h))]))
        write("guidellm", "prompt-%d.json" % i, guidellm_doc([greq(prompt=h)]))
    write("guidellm", "chunk-tokens.json", guidellm_doc([greq(out=5e6)]))
    write("guidellm", "many-rate.json", guidellm_doc(
        [greq(start=1759522419.0 + i * 0.001) for i in range(3000)],
        {"type_": "constant", "rate": 1000}))
    write("guidellm", "deep.json", "{\"benchmarks\":" + "[" * 5000 + "]" * 5000 + "}")


if __name__ == "__main__":
    for f in (aiperf, vllm, lib_json, lib_report, genai, guidellm):
        f()
