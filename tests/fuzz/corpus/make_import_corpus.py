#!/usr/bin/env python3
"""Write the importers' fuzz corpora (tests/fuzz/corpus/import-NAME/) from
fixtures/foreign/: a small valid file of each format and its broken
variants (truncated, wrong types, missing members, mismatched arrays,
newer schema).  Deterministic; run from the source tree's root."""
import copy
import json
import os

FX = "fixtures/foreign"
OUT = "tests/fuzz/corpus"


def write(name, fname, data):
    d = os.path.join(OUT, "import-" + name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, fname), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def variants(name, doc, breakers):
    text = json.dumps(doc)
    write(name, "valid.json", text)
    write(name, "truncated.json", text[: len(text) // 2])
    write(name, "empty.json", "")
    write(name, "not-object.json", "[1, 2, 3]")
    for label, fn in breakers.items():
        d = copy.deepcopy(doc)
        fn(d)
        write(name, label + ".json", json.dumps(d))


# llm-inference-bench: the early file as it is, the 0.4.17 one cut to 3 results.
lib = json.load(open(f"{FX}/llm-inference-bench/glm51-dcp1-mtp0-decode-matrix.json"))
lib = {k: lib[k] for k in ("metadata", "prefill", "results")}
lib["results"] = lib["results"][:3]
for r in lib["results"]:
    r.pop("request_samples", None)
lib_prefill = {"8192": {"ttft_seconds": 0.5, "tok_per_sec": 16000.0}}
variants("lib_json", lib, {
    "wrong-type": lambda d: d["results"][0].__setitem__("aggregate_tps", "fast"),
    "missing-concurrency": lambda d: d["results"][1].pop("concurrency"),
    "bad-matrix": lambda d: d["metadata"].__setitem__("concurrency_levels", [0, "x"]),
    "newer": lambda d: d["metadata"].__setitem__("version", "0.9.0"),
    "prefill": lambda d: d.__setitem__("prefill", lib_prefill),
    "bad-prefill-key": lambda d: d.__setitem__("prefill", {"8k": {"ttft_seconds": 1}}),
    "duplicate": lambda d: d["results"].append(d["results"][0]),
})
early = open(f"{FX}/llm-inference-bench/rtx6kpro-vllm_awq_mtp.json").read()
write("lib_json", "early.json", early)

# The printed report: the seed, cut, with a bad number, a bad status.
seed = open(f"{FX}/llm-inference-bench-report/speed-test-matrix-lfm2.5-350m-h200.txt").read()
write("lib_report", "seed.txt", seed)
write("lib_report", "truncated.txt", seed[: len(seed) // 2])
write("lib_report", "bad-number.txt", seed.replace("| 959.9 |", "| 9x9.9 |"))
write("lib_report", "bad-status.txt", seed.replace("| Requests queued |", "| Queued?? |"))
write("lib_report", "short-row.txt", seed.replace("| 1.0 ms | 1.0 | 7 | 28,796 | 30.0 s |", "|"))
write("lib_report", "no-table.txt", "Speed test matrix\nmodel on gpu\n")

# vLLM: aggregate and detailed.
agg = json.load(open(f"{FX}/vllm-bench/bench_serve_v0.25.1.json"))
det = json.load(open(f"{FX}/vllm-bench/detailed-c4.json"))
variants("vllm", det, {
    "wrong-type": lambda d: d["itls"].__setitem__(2, "slow"),
    "mismatched": lambda d: d["output_lens"].pop(),
    "negative-gap": lambda d: d["itls"][0].__setitem__(0, -1),
    "no-start-times": lambda d: d.pop("start_times"),
    "missing-completed": lambda d: d.pop("completed"),
})
write("vllm", "aggregate.json", json.dumps(agg))

# GenAI-Perf: the first 3 requests of the fixture.
g = json.load(open(f"{FX}/genai-perf/llama3-8b-concurrency1-profile_export.json"))
g["experiments"][0]["requests"] = g["experiments"][0]["requests"][:3]
for q in g["experiments"][0]["requests"]:
    q["request_inputs"] = {"payload": "{\"max_tokens\": 50}"}
variants("genai_perf", g, {
    "wrong-type": lambda d: d["experiments"][0]["requests"][1].__setitem__("timestamp", "now"),
    "mismatched": lambda d: d["experiments"][0]["requests"][0]["response_outputs"].pop(),
    "missing-mode": lambda d: d["experiments"][0]["experiment"].pop("mode"),
    "rate-mode": lambda d: d["experiments"][0].__setitem__("experiment", {"mode": "request_rate", "value": 2}),
    "garbage-sse": lambda d: d["experiments"][0]["requests"][0]["response_outputs"].__setitem__(1, {"response": "data: {\"choices\": [{\"delta\": {\"content\": \"x\"}}], \"usage\": {\"completion_tokens\": -5}}\n\ndata: {bad\n\n"}),
})

# AIPerf: the first 12 lines (cancelled and completed records).
lines = open(f"{FX}/aiperf/run1-profile_export.jsonl").read().splitlines()[:12]
write("aiperf", "valid.jsonl", "\n".join(lines) + "\n")
write("aiperf", "truncated.jsonl", "\n".join(lines)[: len("\n".join(lines)) // 2])
ok = [json.loads(x) for x in lines if '"ttft"' in x]
bad = copy.deepcopy(ok[0]); bad["metrics"]["ttft"]["value"] = "soon"
write("aiperf", "wrong-type.jsonl", json.dumps(bad) + "\n")
bad = copy.deepcopy(ok[0]); bad.pop("metadata")
write("aiperf", "missing-metadata.jsonl", json.dumps(bad) + "\n")
new = copy.deepcopy(ok[0]); md = new["metadata"]
md["request_start_ns"] = md.pop("timestamp_ns"); md["request_end_ns"] = md["request_start_ns"] + 8_000_000_000
md["was_cancelled"] = False
write("aiperf", "newer-schema.jsonl", json.dumps(new) + "\n")
write("aiperf", "garbage-line.jsonl", lines[0] + "\n{not json\n")

# GuideLLM: the fixture as it is (one benchmark, 4 requests).
gl = json.load(open(f"{FX}/guidellm/qwen3-4b-sanity-benchmarks.json"))
for b in gl["benchmarks"]:  # keep what the importer reads
    for k in ("metrics", "scheduler_state", "scheduler_metrics"):
        b.pop(k, None)
    for q in b["requests"]["successful"]:
        q["output"] = q["output"][:40]
        q["request_args"] = ""
variants("guidellm", gl, {
    "wrong-type": lambda d: d["benchmarks"][0]["requests"]["successful"][0].__setitem__("output_tokens", "many"),
    "missing-start": lambda d: d["benchmarks"][0]["requests"]["successful"][1]["info"].pop("timings"),
    "newer": lambda d: d["metadata"].__setitem__("version", 7),
    "rate": lambda d: d["benchmarks"][0]["config"].__setitem__("strategy", {"type_": "constant", "rate": 2.0}),
    "requests-not-object": lambda d: d["benchmarks"][0].__setitem__("requests", []),
})

# AIPerf raw export: two constructed records (one text, one packets), broken.
raw = [json.loads(x) for x in open(f"{FX}/aiperf/raw-export-constructed.jsonl")]
for r in raw:
    r["responses"] = r["responses"][:6]
write("aiperf", "raw-valid.jsonl", "".join(json.dumps(r) + "\n" for r in (raw[0], raw[3], raw[4])))
bad = copy.deepcopy(raw[0]); bad["responses"][2]["perf_ns"] = "later"
write("aiperf", "raw-wrong-type.jsonl", json.dumps(bad) + "\n")
bad = copy.deepcopy(raw[0]); bad["responses"][3]["perf_ns"] = 0
write("aiperf", "raw-backwards.jsonl", json.dumps(bad) + "\n")
