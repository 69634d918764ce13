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
# --window 0 is the recorded window (report-json run.analysis.window_s).
"$tt" report "$tmp/R" --format csv --window 0 > "$tmp/w0.csv"
check cmp -s "$tmp/r.csv" "$tmp/w0.csv"
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
