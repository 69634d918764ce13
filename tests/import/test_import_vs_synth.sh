#!/usr/bin/env bash
# The imported seed report against a run of our own format calibrated to it
# (`tokentrace synth` of the seed's profile): the same 46 cells with the
# same statuses, and every figure within 1 %: the two reports' CSV compared
# cell by cell.  The same pair through `tokentrace diff`, with its
# statistics, is tests/diff/test_diff_import.sh.
# usage: test_import_vs_synth.sh TOKENTRACE FIXTURES
set -u
tt=$1; fx=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
"$tt" synth --profile "$fx/profiles/seed-matrix.csv" -o "$tmp/syn" -q || exit 1
"$tt" report "$tmp/syn" --format csv > "$tmp/syn.csv" || exit 1
"$tt" report "$fx/foreign/llm-inference-bench-report/speed-test-matrix-lfm2.5-350m-h200.txt" \
  --format csv > "$tmp/imp.csv" || exit 1
python3 - "$tmp/syn.csv" "$tmp/imp.csv" <<'PY'
import csv, sys
key = lambda r: (r["phase"], r["context"], r["concurrency"])
syn = {key(r): r for r in csv.DictReader(open(sys.argv[1]))}
imp = {key(r): r for r in csv.DictReader(open(sys.argv[2]))}
fail = []
if set(syn) != set(imp) or len(imp) != 46:
    fail.append(f"cells differ: {sorted(set(syn) ^ set(imp))}, {len(imp)} imported")
worst = 0.0
for k in sorted(set(syn) & set(imp)):
    a, b = syn[k], imp[k]
    if a["status"] != b["status"]:
        fail.append(f"{k}: status {a['status']} vs {b['status']}")
    for f in ("total_tok_s", "per_request_tok_s", "ttft_ms", "tbt_ms", "avg_active",
              "completed", "output_tokens", "measured_s"):
        if (a[f] == "") != (b[f] == ""):
            fail.append(f"{k}: {f} '{a[f]}' vs '{b[f]}'")
        elif a[f]:
            d = abs(float(a[f]) - float(b[f])) / max(abs(float(b[f])), 1e-9)
            worst = max(worst, d)
            if d > 0.01:
                fail.append(f"{k}: {f} {a[f]} vs {b[f]} ({d * 100:.2f} %)")
print(f"{len(imp)} cells, largest difference {worst * 100:.2f} %")
for f in fail:
    print("FAIL:", f)
sys.exit(1 if fail else 0)
PY
