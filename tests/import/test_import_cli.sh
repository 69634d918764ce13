#!/usr/bin/env bash
# Every foreign fixture imports, reports and charts, read as an imported run
# and directly; provenance and unavailable figures are recorded; a failed
# import leaves nothing behind.
# usage: test_import_cli.sh TOKENTRACE FIXTURES
set -u
tt=$1; fx=$2/foreign; fail=0; n=0; here=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { n=$((n + 1)); if "$@"; then :; else echo "FAIL: $*"; fail=$((fail + 1)); fi; }
export TMPDIR=$tmp/t; mkdir -p "$TMPDIR"

# name|file|a row the markdown report must hold
cases=(
  'lib-early|llm-inference-bench/rtx6kpro-vllm_awq_mtp.json|| Sustained decode | 128K | 128 | Requests queued | 645.8 |'
  'lib-0417|llm-inference-bench/glm51-dcp1-mtp0-decode-matrix.json|| Sustained decode | 0 | 32 | Valid | 318.1 | 10.8 | 19,799 ms | 92.9 ms | 32.0 | 0 | 9,536 | 30.0 s |'
  'vllm-agg|vllm-bench/bench_serve_v0.25.1.json|| Sustained decode | 32 | 2 | Valid | 82.9 | — | 56 ms | 11.2 ms | — | 8 | 128 | 1.5 s |'
  'vllm-spec|vllm-bench/bench_serve_speculative_v0.25.1.json|| Sustained decode | 313 | 2 | Valid | 122.3 | — | 425 ms | 14.4 ms | — | 8 | 3,983 | 32.6 s |'
  'vllm-detail|vllm-bench/detailed-c4.json|| Sustained decode | 512 | 4 | Errors | 327.4 | 83.9 | 47 ms | 11.8 ms | 3.7 | 12 | 768 | 2.3 s |'
  'genai|genai-perf/llama3-8b-concurrency1-profile_export.json|| Sustained decode | 189 | 1 | Valid | 73.6 | 76.1 | 25 ms | 13.2 ms | 0.9 | 53 | 2,650 | 36.0 s |'
  'aiperf|aiperf/run1-profile_export.jsonl|| Sustained decode | 550 | 100 | Valid | 2,320.7 | 36.2 | 2,369 ms | 22.7 ms |'
  'aiperf-new|aiperf/newer-schema-docs-example.jsonl|| Sustained decode | 550 | 1 | Too few samples | 0.0 | 192.1 | 256 ms | 5.2 ms |'
  'guidellm|guidellm/qwen3-4b-sanity-benchmarks.json|| Sustained decode | 99 | 4 | Valid | 164.4 | 41.4 | 172 ms | 24.2 ms | 4.0 | 4 | 4,096 | 24.9 s |'
  'genai-summary|genai-perf/llama3-8b-concurrency1-profile_export_genai_perf.json|| Sustained decode | 200 | 1 | Valid | 86.4 | — | 25 ms | — | — | — | — | — |'
  'aiperf-summary|aiperf/run1-profile_export_aiperf.json|| Sustained decode | 550 | 100 | Valid | 2,320.7 | 36.2 | 2,369 ms | — | — | 89 | 21,624 | 9.3 s |'
  'guidellm-warm|guidellm/warmup-cooldown-constructed.json|| Sustained decode | 100 | 4 | Valid | 158.5 | 40.0 | 105 ms | 24.8 ms | 3.9 | 107 | 15,809 | 99.7 s |'
)
for c in "${cases[@]}"; do
  IFS='|' read -r name file row <<< "$c"
  row="|${c#*||}"
  f=$fx/$file
  check "$tt" import "$f" -o "$tmp/$name" -q
  [ -f "$tmp/$name/manifest.json" ] || { echo "FAIL: $name: no run"; fail=$((fail + 1)); continue; }
  "$tt" report "$tmp/$name" --format md > "$tmp/$name.md"
  check grep -qF -- "$row" "$tmp/$name.md"
  # The same file read directly gives the same report, bar the source line.
  "$tt" report "$f" --format csv > "$tmp/$name.direct.csv"
  "$tt" report "$tmp/$name" --format csv > "$tmp/$name.csv"
  check cmp -s "$tmp/$name.csv" "$tmp/$name.direct.csv"
  # Provenance: the file's name and its SHA-256.
  sum=$(sha256sum "$f" | cut -d' ' -f1)
  check grep -q "\"sha256\":[[:space:]]*\"$sum\"" "$tmp/$name/manifest.json"
  check grep -q '"format_version":[[:space:]]*"1.1"' "$tmp/$name/manifest.json"
  check "$tt" chart "$f" heatmap -o "$tmp/$name.svg"
  check test -s "$tmp/$name.svg"
  check "$tt" chart "$tmp/$name" throughput -o "$tmp/$name.png"
done
# The early schema has no time between tokens: unavailable, shown as a dash.
check grep -q '"tbt_ms_p50"' "$tmp/lib-early/manifest.json"
check grep -qF '| Sustained decode | 0 | 1 | Valid | 147.2 | — | 50 ms | — |' "$tmp/lib-early.md"
# vLLM with detail: traces, so the timeline and TBT distribution draw; the
# chunks of 1-3 tokens are counted as multi-token chunks and said so.
check "$tt" chart "$fx/vllm-bench/detailed-c4.json" timeline -o "$tmp/vllm-tl.png"
check "$tt" chart "$fx/vllm-bench/detailed-c4.json" tbt-cdf -o "$tmp/vllm-cdf.png"
"$tt" report "$tmp/vllm-detail" --format json > "$tmp/vllm-detail.json"
check python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cells'][0]; assert c['multi_token_chunks'] > 0 and c['output_tokens'] == 768, c" "$tmp/vllm-detail.json"
check grep -q '"key":[[:space:]]*"tokens_per_chunk"' "$tmp/vllm-detail/manifest.json"
"$tt" dump "$tmp/vllm-detail" | grep -c '"type":"request"' > "$tmp/nreq"
check test "$(cat "$tmp/nreq")" = 13
# The tools' own summaries of the same runs agree, or differ as explained.
"$tt" report "$tmp/genai" --format json > "$tmp/genai.json"
check python3 "$here/check_summary.py" genai-perf "$tmp/genai.json" "$fx/genai-perf/llama3-8b-concurrency1-profile_export_genai_perf.json"
"$tt" report "$tmp/aiperf" --format json > "$tmp/aiperf.json"
check python3 "$here/check_summary.py" aiperf "$tmp/aiperf.json" "$fx/aiperf/run1-profile_export_aiperf.json"
# Issue 25.1: GuideLLM's statistics leave out its warm-up and cool-down
# requests; the import counts the requests GuideLLM counted (before: TTFT
# mean +77 %, p99 +635 %, completed 119 of 107 on the constructed file).
for g in guidellm:qwen3-4b-sanity-benchmarks guidellm-warm:warmup-cooldown-constructed; do
  "$tt" report "$tmp/${g%%:*}" --format json > "$tmp/${g%%:*}.json"
  check python3 "$here/check_summary.py" guidellm "$tmp/${g%%:*}.json" "$fx/guidellm/${g#*:}.json"
done
check grep -q '"key":[[:space:]]*"guidellm_measured"' "$tmp/guidellm-warm/manifest.json"
# Issue 25.6: the tools' summaries alone import as aggregate runs, said so
# (before: "not a result file ... use --from"), with the endpoint they name.
for s in genai-summary aiperf-summary; do
  check grep -q '"key":[[:space:]]*"summary_only"' "$tmp/$s/manifest.json"
  check grep -q '"endpoint":[[:space:]]*"chat"' "$tmp/$s/manifest.json"
  check grep -q 'summary\\_only' "$tmp/$s.md"
done
# Issue 25.6: GenAI-Perf's model is the one its requests name, and its
# slots follow time: by file order, requests of one slot overlapped (here
# the third request, sent at 3.5 s, went to the slot of the first, busy
# until 10 s).
python3 - "$tmp/gp-slots.json" <<'PY'
import json, sys
T = 1730397254000000000
def req(s, e):
    s, e = T + int(s * 1e9), T + int(e * 1e9)
    return {"timestamp": s, "request_inputs": {"payload": json.dumps({"model": "m/slots", "max_tokens": 8, "messages": []})},
            "response_timestamps": [s + 100000000, e], "response_outputs": [
                {"response": 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'},
                {"response": 'data: {"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}\n\n'}]}
doc = {"endpoint": "v1/chat/completions", "experiments": [{"experiment": {"mode": "concurrency", "value": 2},
       "requests": [req(0, 10), req(0.01, 3), req(3.5, 6), req(10.5, 12)]}]}
json.dump(doc, open(sys.argv[1], "w"))
PY
check "$tt" import "$tmp/gp-slots.json" -o "$tmp/gp-slots" -q
check grep -q '"id":[[:space:]]*"m/slots"' "$tmp/gp-slots/manifest.json"
"$tt" dump "$tmp/gp-slots" > "$tmp/gp-slots.dump"
check python3 - "$tmp/gp-slots.dump" <<'PY'
import json, sys
by = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "request":
        by.setdefault(r["slot"], []).append((r["send"], r["end"]))
assert len(by) == 2, by
for s in by.values():
    s.sort()
    assert all(a[1] <= b[0] for a, b in zip(s, s[1:])), by
PY
# Issue 25.5: two runs with no cell in common were "No significant change"
# after 0 comparisons; now they say nothing was compared.
"$tt" diff "$tmp/guidellm" "$tmp/guidellm-warm" > "$tmp/nocommon.txt" 2>&1
check grep -q '^Nothing compared: no figure of a cell that both sides have' "$tmp/nocommon.txt"
check test "$(grep -c 'No significant change' "$tmp/nocommon.txt")" = 0
# Their figures are the full import's where the definitions agree.
"$tt" report "$tmp/aiperf-summary" --format json > "$tmp/aiperf-summary.json"
check python3 - "$tmp/aiperf-summary.json" "$tmp/aiperf.json" <<'PY'
import json, sys
s, f = (json.load(open(p))["cells"][0] for p in sys.argv[1:3])
pairs = [(s["ttft_ms"][q], f["ttft_ms"][q]) for q in ("mean", "p50")]
pairs += [(s[k], f[k]) for k in ("total_tok_s", "completed", "output_tokens", "measured_s")]
pairs += [(s["tbt_ms"]["mean"], f["tbt_ms"]["mean"])]
pairs += [(s["per_request_tok_s_dist"][q], f["per_request_tok_s_dist"][q]) for q in ("mean", "p50")]
bad = [(a, b) for a, b in pairs if a is None or abs(a - b) > 0.01 * abs(b)]
assert not bad, bad
PY
"$tt" dump "$tmp/guidellm-warm" | grep -c '"role":"warmup"' > "$tmp/nwarm"
check test "$(cat "$tmp/nwarm")" = 21
# AIPerf's cancelled requests are aborted on purpose, not errors.
check python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cells'][0]; assert c['errors'] == 0 and c['requests'] == 100, c" "$tmp/aiperf.json"
check grep -q '"key":[[:space:]]*"aiperf_summary"' "$tmp/aiperf/manifest.json"
# AIPerf's raw export (constructed from the GenAI-Perf fixture's first four
# requests): each response a chunk, tokens counted from its SSE text or
# packets; the same requests give the same TTFT and tokens as the GenAI-Perf
# import, and the refused request is an HTTP failure.
"$tt" dump "$fx/aiperf/raw-export-constructed.jsonl" > "$tmp/raw.dump"
"$tt" dump "$tmp/genai" > "$tmp/genai.dump"
check python3 - "$tmp/raw.dump" "$tmp/genai.dump" <<'PY'
import json, sys
def reqs(p):
    out = []
    for l in open(p):
        r = json.loads(l)
        first = next((t for t, k in r["chunks"] if k > 0), None)
        out.append((None if first is None else first - r["send"], sum(k for _, k in r["chunks"]), r["fail"]))
    return out
raw, genai = reqs(sys.argv[1]), reqs(sys.argv[2])
# Equal to the trace's 1 us unit (each run rounds from its own origin).
assert all(abs(a[0] - b[0]) <= 1000 and a[1:] == b[1:] for a, b in zip(raw[:4], genai[:4])), (raw[:4], genai[:4])
assert raw[4] == (None, 0, "http"), raw[4]
PY

# Several files of a sweep make one run.
check "$tt" import "$fx"/vllm-bench/*.json -o "$tmp/vllm-all" -q
check test "$(grep -c '"phase":' "$tmp/vllm-all/manifest.json")" = 3

# Over-capacity cells left out of the JSON are rebuilt from its metadata.
check grep -qF '| Sustained decode | 128K | 1 | Over capacity | — |' "$tmp/lib-0417.md"
check grep -qF '1 x (131072 + 2048) = 133120 > 85376 KV tokens' "$tmp/lib-0417.md"

# The seed report: every row of its All measurements table comes back as printed.
seed=$fx/llm-inference-bench-report/speed-test-matrix-lfm2.5-350m-h200.txt
check "$tt" import "$seed" -o "$tmp/seed" -q
"$tt" report "$tmp/seed" --format md > "$tmp/seed.md"
rows=0
while IFS= read -r r; do
  rows=$((rows + 1))
  check grep -qF -- "$r" "$tmp/seed.md"
done < <(grep -E '^\| (Prefill|Sustained decode) \|' "$seed")
check test "$rows" = 46
check grep -qF -- '- **Benchmark tool:** llm-inference-bench v0.4.29' "$tmp/seed.md"
check grep -qF -- '--api-key <redacted>' "$tmp/seed.md"
check "$tt" chart "$seed" heatmap -o "$tmp/seed.svg"
# Markdown as our own renderer writes it imports to the same rows.
check "$tt" import "$tmp/seed.md" -o "$tmp/seed2" -q
"$tt" report "$tmp/seed2" --format md > "$tmp/seed2.md"
check test "$(grep -E '^\| (Prefill|Sustained)' "$tmp/seed2.md")" = "$(grep -E '^\| (Prefill|Sustained)' "$tmp/seed.md")"

# Errors: nothing is written, the message names the file.
check test -z "$(ls "$TMPDIR")"
printf '{"metadata": {"concurrency_levels": [1], "context_lengths": [0]}, "results": [{"concurrency": 1, "context_tokens": "x", "aggregate_tps": 1}]}' > "$tmp/bad.json"
"$tt" import "$tmp/bad.json" -o "$tmp/bad" 2> "$tmp/bad.err"; rc=$?
check test "$rc" = 1
check test ! -e "$tmp/bad"
check grep -qF "bad.json': results[0].context_tokens: a finite number expected, found a string" "$tmp/bad.err"
check test -z "$(ls "$tmp" | grep importing)"
head -c 500 "$fx/llm-inference-bench/rtx6kpro-vllm_awq_mtp.json" > "$tmp/cut.json"
"$tt" report "$tmp/cut.json" > /dev/null 2> "$tmp/cut.err"; rc=$?
check test "$rc" != 0
check grep -q "cut.json': JSON ends early: truncated at line" "$tmp/cut.err"
check test -z "$(ls "$TMPDIR")"
# A run already there is never overwritten.
"$tt" import "$fx/llm-inference-bench/rtx6kpro-vllm_awq_mtp.json" -o "$tmp/lib-early" 2> "$tmp/exists.err"
check test $? = 1
check grep -q "exists and is not an empty directory" "$tmp/exists.err"
# Two files with the same cells cannot make one run.
"$tt" import "$fx/llm-inference-bench/rtx6kpro-vllm_awq_mtp.json" "$fx/llm-inference-bench/rtx6kpro-vllm_awq_mtp.json" -o "$tmp/twice" 2> "$tmp/twice.err"
check test $? = 1
check grep -q "appears twice (an earlier file of this import has it too)" "$tmp/twice.err"
# --from names a format; an unknown one is a usage error.
"$tt" import --from nosuch "$tmp/bad.json" -o "$tmp/x" 2> /dev/null
check test $? = 2
# Issue 20.6: credentials in a foreign file's server URL or launch command
# (user:password@, ?api_key=, --api-key) are redacted as the capture
# redacts; md, json and html show none of them.
python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
json.dump({"metadata": {"version": "0.4.17", "context_lengths": [0], "concurrency_levels": [1],
                        "server": "http://alice:pa55w0rd@gpu1:8000/v1?api_key=SEKRET1&x=1"},
           "results": [{"concurrency": 1, "context_tokens": 0, "aggregate_tps": 50.5}]},
          open(t + "/cred-lib.json", "w"))
PY
python3 - "$tmp" "$fx/guidellm/qwen3-4b-sanity-benchmarks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
d["args"]["target"] = "https://bob:hunter2@api.example:443/v1?token=SEKRET2"
json.dump(d, open(sys.argv[1] + "/cred-guidellm.json", "w"))
PY
printf '%s\n' '# Speed test matrix' '' 'm on g' '' '- **Launch command:** vllm serve m -k SEKRET3 --api-key "SEKRET4 q4"' '' \
  '| Phase | Context | Requests at once | Status | Total tok/s |' '|---|---|---|---|---|' \
  '| Sustained decode | 1K | 1 | Valid | 1.0 |' > "$tmp/cred-report.md"
for f in cred-lib.json cred-guidellm.json cred-report.md; do
  check "$tt" import "$tmp/$f" -o "$tmp/run-$f" -q
  for fmt in md json html; do
    "$tt" report "$tmp/run-$f" --format $fmt -o "$tmp/$f.$fmt" 2> /dev/null
    check test -s "$tmp/$f.$fmt"
    check test -z "$(grep -oE 'pa55w0rd|alice|SEKRET[0-9]|hunter2|bob:|q4' "$tmp/$f.$fmt")"
    check grep -q "redacted" "$tmp/$f.$fmt"
  done
  check test -z "$(grep -oE 'pa55w0rd|SEKRET[0-9]|hunter2|q4' "$tmp/run-$f/manifest.json")"
done
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
