#!/usr/bin/env bash
# Issue 24.1, 24.5, 24.6 as a user meets them: the default report shows
# p50/p90/p99 of TTFT, TBT and E2E with req/s in every human format and the
# cells export, while the seed's tables stay as they were; open-loop cells
# are named by their rate, not "Sustained decode, 0 concurrency"; an
# imported run's wording comes from the tool that measured it.
set -u
tt=$1; fx=$2; fail=0; n=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { n=$((n + 1)); if "$@"; then :; else echo "FAIL: $*"; fail=$((fail + 1)); fi; }
"$tt" synth --profile "$fx/profiles/small.csv" -o "$tmp/R" -q || { echo "synth failed"; exit 1; }
"$tt" report "$tmp/R" --format md > "$tmp/r.md"
check grep -qF '## Latency and request rate' "$tmp/r.md"
check grep -qF '| Context | Requests at once | Status | Req/s | TTFT p50 | TTFT p90 | TTFT p99 | TBT p50 | TBT p90 | TBT p99 | E2E p50 | E2E p90 | E2E p99 | Errors |' "$tmp/r.md"
# the seed's all-measurements table keeps its twelve columns
check grep -qF '| Phase | Context | Requests at once | Status | Total tok/s | Per request tok/s | TTFT | Time between tokens | Average active requests | Completed requests | Output tokens | Measured for |' "$tmp/r.md"
"$tt" report "$tmp/R" --format term --no-color > "$tmp/r.term"
check grep -qE '^Latency \(' "$tmp/r.term"
check grep -qF 'E2E p50' "$tmp/r.term"
"$tt" report "$tmp/R" --format html > "$tmp/r.html"
check grep -qF '<h2>Latency and request rate</h2>' "$tmp/r.html"
"$tt" report "$tmp/R" --format json > "$tmp/r.json"
check grep -qF '"version":	"1.5"' "$tmp/r.json"
check grep -qF '"e2e_ms":' "$tmp/r.json"
check grep -qF '"req_s":' "$tmp/r.json"
if "$tt" report "$tmp/R" --format pdf -o "$tmp/r.pdf" && command -v pdftotext > /dev/null; then
	pdftotext "$tmp/r.pdf" "$tmp/r.txt"
	check grep -qF 'Latency and request rate' "$tmp/r.txt"
fi
"$tt" export "$tmp/R" --what cells > "$tmp/cells.csv"
for col in ttft_ms_p90 ttft_ms_p99 tbt_ms_p99 e2e_ms_p50 e2e_ms_p99 req_s engine engine_version window_start_ns window_end_ns; do
	check grep -q "\(^\|,\)$col\(,\|$\)" <(head -1 "$tmp/cells.csv")
done
# a decode row has its E2E median and req/s (not empty)
python3 - "$tmp/cells.csv" <<'PY' || { echo "FAIL: cells export e2e/req_s"; fail=$((fail + 1)); }
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["phase"] == "decode" and r["status_key"] == "valid"]
assert rows and all(r["e2e_ms_p50"] and float(r["req_s"]) > 0 for r in rows), rows[:1]
assert all(int(r["window_end_ns"]) > int(r["window_start_ns"]) >= 0 for r in rows)
PY
n=$((n + 1))
# open loop: rows named by rate; no decode matrix, no "Fixed duration"
"$tt" report "$fx/runs/openloop.tar.zst" --format md > "$tmp/ol.md"
check grep -qF '| Open loop | 64 | 120/s | Rate not sustained |' "$tmp/ol.md"
check grep -qF -- '- **Decode test:** Open loop (requests sent at a rate)' "$tmp/ol.md"
check test "$(grep -c -e '## Sustained decode' -e 'too large to print' -e '| Sustained decode | 64 | 0 |' "$tmp/ol.md")" = 0
check grep -qF '## Open-loop cells' "$tmp/ol.md"
"$tt" report "$fx/runs/openloop.tar.zst" --format term --no-color > "$tmp/ol.term"
check grep -qE '^  rate +64 +120/s ' "$tmp/ol.term"
# imported: the tool's own wording
"$tt" report "$fx/foreign/guidellm/qwen3-4b-sanity-benchmarks.json" --format md > "$tmp/g.md" 2> /dev/null
check grep -qF 'TTFT is as GuideLLM measured it' "$tmp/g.md"
check test "$(grep -c "warms the server's prompt cache" "$tmp/g.md")" = 0
"$tt" report "$fx/foreign/guidellm/qwen3-4b-sanity-benchmarks.json" --format csv > "$tmp/g.csv" 2> /dev/null
check grep -qF 'no readiness check (measured by GuideLLM)' "$tmp/g.csv"
check test "$(grep -c 'judged from the readiness check only' "$tmp/g.csv")" = 0
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
