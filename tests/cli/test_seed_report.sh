#!/usr/bin/env bash
# The foundation issue's check, as a user runs it: synth the seed profile,
# report it as markdown, CSV and JSON, and from a tar.zst archive.
set -u
tt=$1; fx=$2; fail=0; n=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { n=$((n + 1)); if "$@"; then :; else echo "FAIL: $*"; fail=$((fail + 1)); fi; }
"$tt" synth --profile "$fx/profiles/seed-matrix.csv" -o "$tmp/R" -q || { echo "synth failed"; exit 1; }
"$tt" report "$tmp/R" --format md > "$tmp/r.md" || { echo "report failed"; exit 1; }
# Rows of the seed's all-measurements table, in its number style.
for row in \
  '| Prefill | 8K | 1 | Valid | 143.1K | — | 57 ms |' \
  '| Prefill | 120K | 1 | Valid | 116.6K | — | 1,036 ms |' \
  '| Sustained decode | 8K | 2 | Valid | 1,819.' \
  '| Sustained decode | 8K | 128 | Valid | 24.3K |' \
  '| Sustained decode | 120K | 2 | Requests queued |' \
  '| Sustained decode | 120K | 128 | Over capacity | — |' ; do
  check grep -qF -- "$row" "$tmp/r.md"
done
check grep -qF 'Over capacity: not run because this many requests at this context would exceed' "$tmp/r.md"
# The same figures in JSON and CSV.
"$tt" report "$tmp/R" --format json > "$tmp/r.json"
check grep -q '"status":[[:space:]]*"Requests queued"' "$tmp/r.json"
check grep -q '"ttft_ms":[[:space:]]*{' "$tmp/r.json"
"$tt" report "$tmp/R" --format csv > "$tmp/r.csv"
check test "$(head -1 "$tmp/r.csv" | cut -d, -f1-12)" = "$(head -1 "$fx/profiles/seed-matrix.csv")"
check test "$(wc -l < "$tmp/r.csv")" = "$(wc -l < "$fx/profiles/seed-matrix.csv")"
# An archive of the run reports exactly what the directory does.
tar -C "$tmp" --zstd -cf "$tmp/R.tar.zst" R
"$tt" report "$tmp/R.tar.zst" --format csv > "$tmp/a.csv"
check cmp -s "$tmp/r.csv" "$tmp/a.csv"
# Re-windowing from the raw trace changes the window, not the run.
"$tt" report "$tmp/R" --format csv --skip-first 5s --window 10s > "$tmp/w.csv"
check grep -q ',10,' "$tmp/w.csv"
# Goodput with a known answer: the profile's TTFTs (seed-matrix.csv) put the
# highest concurrency with TTFT <= 300 ms at 8K x 64 (290 ms; 128 has 521),
# 16K x 32 (136; 64 has 432), 32K x 16, 64K x 16, and none at 120K (443 at 1).
"$tt" report "$tmp/R" --format md --slo ttft=300ms > "$tmp/slo.md"
check grep -qF 'Highest concurrency meeting the SLOs: 8K: 64 · 16K: 32 · 32K: 16 · 64K: 16 · 120K: none.' "$tmp/slo.md"
check grep -qF '| 8K | 128 | Valid | 128 | 0 | 0% |' "$tmp/slo.md"
# The default report is unchanged by the new tables' code: no Tails, no Goodput.
check test "$(grep -c -e '## Tails' -e 'Goodput' -e 'Where TTFT' "$tmp/r.md")" = 0
"$tt" report "$tmp/R" --format md --quantiles 50,90,99 > "$tmp/q.md"
check grep -qF '| Context | Requests at once | TTFT p50 | TTFT p90 | TTFT p99 | TBT p50 | TBT p90 | TBT p99 | Longest stall | Gaps > 100 ms |' "$tmp/q.md"
"$tt" report "$tmp/R" --slo ttft=fast > /dev/null 2> "$tmp/e.txt"; check test $? = 2
check grep -qF "SLO 'ttft=fast': not a positive duration" "$tmp/e.txt"
# --window 0 is the recorded window (report-json run.analysis.window_s).
"$tt" report "$tmp/R" --format csv --window 0 > "$tmp/w0.csv"
check cmp -s "$tmp/r.csv" "$tmp/w0.csv"
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
