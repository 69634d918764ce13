#!/usr/bin/env bash
# tokentrace diff as a user runs it: the gate's exit codes both ways, every
# format, replicates, matrices that differ, and clear errors (exit 2) for
# every malformed input.  The runs are synthetic: profile-slow.csv has 10 %
# fewer tok/s than profile-base.csv at 8K x 4 and 32K x 1, queues at 32K x 4,
# lacks 64K x 4 and adds 64K x 8.
#
# usage: test_cli_diff.sh TOKENTRACE DIR_OF_THIS_SCRIPT
set -u
tt=$1 here=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

ok() { n=$((n + 1)); echo "ok $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $1"; }

# expect NAME STATUS TEXT -- COMMAND...: exit status and a text on stderr
expect() {
	local name=$1 want=$2 text=$3 got
	shift 4
	"$@" > "$tmp/out" 2> "$tmp/err"
	got=$?
	if [ "$got" != "$want" ]; then
		bad "$name: exit $got, want $want: $(head -c 400 "$tmp/err")"
	elif [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/err"; then
		bad "$name: stderr lacks '$text': $(head -c 400 "$tmp/err")"
	else
		ok "$name"
	fi
}

synth() { "$tt" synth --profile "$here/$1" -o "$tmp/$2" --seed "$3" -q || exit 1; }
synth profile-base.csv base 1
synth profile-base.csv base2 2
synth profile-base.csv base3 3
synth profile-slow.csv slow 4
synth profile-slow.csv slow2 5

# The synthetic runs differ by their generator's seed only: no run-to-run
# drift.  The tests of the within-run statistics below turn the measured
# run-to-run allowance off (--run-allowance 0) and accept gating on one run
# per side (--allow-single-run); "one run per side" further down tests both.
one="--allow-single-run --run-allowance 0"
na="--run-allowance 0"

# --- the gate, both ways ---------------------------------------------------
expect "gate fails on a 10% slowdown" 1 "gate total_tok_s slower by > 5%: FAIL (2 cells)" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower 5% --format md $one
expect "gate passes above the slowdown" 0 "pass (0 cells)" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower 15% $one
expect "gate passes on noise only" 0 "gate total_tok_s slower by > 5%: pass" -- \
	"$tt" diff "$tmp/base" "$tmp/base2" --fail-if-slower 5 $one
expect "gate on another figure" 0 "gate ttft_p50_ms" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower 5% --figure ttft $one
expect "gate on time between tokens" 1 "gate tbt_p50_ms slower by > 5%: FAIL" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower 5% --figure tbt_p50_ms $one
expect "no gate: exit 0 even when slower" 0 "6 slower" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" $na
# --fail-on-status-change: 32K x 4 is Valid in the base and queues in slow;
# the other way round (queued to Valid) passes; so does noise, and a cell
# that becomes over capacity fails.
expect "status gate fails on Valid to queued" 1 "gate Valid to queued or over capacity: FAIL (1 cell)" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-on-status-change --format md
expect "status gate passes on queued to Valid" 0 "gate Valid to queued or over capacity: pass (0 cells)" -- \
	"$tt" diff "$tmp/slow" "$tmp/slow2" --fail-on-status-change
expect "status gate passes on noise" 0 "over capacity: pass (0 cells)" -- \
	"$tt" diff "$tmp/base" "$tmp/base2" --fail-on-status-change
sed 's/^decode,8K,1,Valid,959.9,972,47,1,1,,,4$/decode,8K,1,Over capacity,,,,,,,,/' \
	"$here/profile-base.csv" > "$tmp/profile-over.csv"
if grep -q 'Over capacity' "$tmp/profile-over.csv"; then ok "over-capacity profile"; else bad "over-capacity profile: the sed did not match"; fi
"$tt" synth --profile "$tmp/profile-over.csv" -o "$tmp/over" --seed 6 -q || exit 1
expect "status gate fails on Valid to over capacity" 1 "over capacity: FAIL (1 cell)" -- \
	"$tt" diff "$tmp/base" "$tmp/over" --fail-on-status-change
expect "status gate with the slowdown gate: both reported" 1 "gate total_tok_s slower by > 5%: FAIL (2 cells); gate Valid to queued or over capacity: FAIL (1 cell)" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-on-status-change --fail-if-slower 5% $one
sed 's/,Requests queued,/,Valid,/' "$here/profile-slow.csv" > "$tmp/profile-slow-valid.csv"
"$tt" synth --profile "$tmp/profile-slow-valid.csv" -o "$tmp/slowvalid" --seed 7 -q || exit 1
expect "status gate passes, slowdown gate fails: exit 1" 1 "FAIL (2 cells); gate Valid to queued or over capacity: pass (0 cells)" -- \
	"$tt" diff "$tmp/base" "$tmp/slowvalid" --fail-on-status-change --fail-if-slower 5% $one
"$tt" diff "$tmp/base" "$tmp/slow" --fail-on-status-change --format json -q -o "$tmp/sg.json"
if python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d['status_gate'] == {'failing_cells': 1, 'failed': True} and d['gate'] is None else 1)
" "$tmp/sg.json"; then ok "json: status_gate"; else bad "json: status_gate $(grep -A3 status_gate "$tmp/sg.json")"; fi
expect "quiet: no summary" 0 "" -- "$tt" diff "$tmp/base" "$tmp/slow" -q
if [ -s "$tmp/err" ]; then bad "quiet printed: $(cat "$tmp/err")"; else ok "quiet is quiet"; fi

# --- formats ----------------------------------------------------------------
"$tt" diff "$tmp/base" "$tmp/slow" --format md -q $na > "$tmp/d.md"
s=$(grep -n '^## Status changes' "$tmp/d.md" | cut -d: -f1)
d=$(grep -n '^## Decode' "$tmp/d.md" | cut -d: -f1)
if [ -n "$s" ] && [ -n "$d" ] && [ "$s" -lt "$d" ]; then ok "md: status changes first"; else bad "md: status changes not first"; fi
if grep -q '| 8K x 4 | Valid | -10.[0-9]% slower' "$tmp/d.md"; then ok "md: slowed cell marked"; else bad "md: 8K x 4 not marked slower: $(grep '8K x 4' "$tmp/d.md" | head -2)"; fi
if grep -q '^## Cells in one side only' "$tmp/d.md" && grep -q '| 64K x 8 | candidate |' "$tmp/d.md"; then ok "md: one-side cells listed"; else bad "md: one-side cells missing"; fi

"$tt" diff "$tmp/base" "$tmp/slow" --format csv -o "$tmp/d.csv" -q $na
if head -1 "$tmp/d.csv" | grep -q '^cell,phase,context,concurrency,presence,base_status,candidate_status,status_changed,figure,base,candidate,ratio,change_pct,ci_lo_pct,ci_hi_pct,z,verdict,note$'; then ok "csv: header"; else bad "csv: header $(head -1 "$tmp/d.csv")"; fi
# 1 prefill cell x 1 figure + 6 decode cells x 6 figures, plus the header
rows=$(wc -l < "$tmp/d.csv")
if [ "$rows" = 38 ]; then ok "csv: one row per figure"; else bad "csv: $rows lines, want 38"; fi
if grep -q '^decode-8192x4,decode,8192,4,both,valid,valid,0,total_tok_s,.*,slower,' "$tmp/d.csv"; then ok "csv: verdict"; else bad "csv: no slower total at 8K x 4"; fi

"$tt" diff "$tmp/base" "$tmp/slow" --format json --fail-if-slower 5% -o "$tmp/d.json" -q $one
if python3 - "$tmp/d.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "tokentrace-diff" and d["version"] == "1.3"
for k in ("base", "candidate", "method", "summary", "gate", "cells"):
    assert k in d, k
for k in ("alpha", "replicates", "slices", "seed", "tail", "min_change_pct", "comparisons", "level_each",
          "tolerance_pct", "point_comparisons", "runs_base", "runs_candidate", "resampling",
          "single_run", "run_allowance_pct", "run_allowance_comparisons"):
    assert k in d["method"], k
assert d["method"]["single_run"] is True and d["method"]["resampling"] == "within_run"
assert d["method"]["run_allowance_comparisons"] == 0, "--run-allowance 0 applied one"
for k in ("slower", "faster", "same", "unjudged", "status_changes", "base_only", "candidate_only",
          "within_tolerance", "beyond_tolerance"):
    assert isinstance(d["summary"][k], int), k
g = d["gate"]
assert g == {"figure": "total_tok_s", "threshold_pct": 5, "failing_cells": 2, "failed": True}, g
assert d["status_gate"] is None
assert d["method"]["tolerance_pct"] is None and d["method"]["point_comparisons"] == 0
run = d["base"]["runs"][0]
for k in ("source", "engine", "engine_version", "model", "created", "tool", "tool_version", "notes"):
    assert k in run, k
cells = d["cells"]
assert cells[0]["status_changed"] and cells[0]["candidate_status"] == "requests_queued", cells[0]["id"]
assert cells[-1]["presence"] == "candidate" and cells[-1]["id"] == "decode-65536x8"
assert cells[-1]["base_status"] is None
keys = {"base", "candidate", "ratio", "change_pct", "ci_pct", "z", "df", "critical",
        "se_log_base", "se_log_candidate", "verdict", "worse", "note", "basis",
        "run_allowance", "precision_base", "precision_candidate"}
slow = 0
for c in cells:
    for k in ("id", "phase", "context", "concurrency", "presence", "base_status",
              "candidate_status", "base_status_mixed", "candidate_status_mixed",
              "base_status_runs", "candidate_status_runs", "status_changed", "figures"):
        assert k in c, (c["id"], k)
    want = {"prefill_tok_s"} if c["phase"] == "prefill" else {
        "total_tok_s", "per_request_tok_s", "ttft_p50_ms", "ttft_tail_ms", "tbt_p50_ms", "tbt_tail_ms"}
    assert set(c["figures"]) == want, c["id"]
    for f, v in c["figures"].items():
        assert set(v) == keys, (c["id"], f, set(v) ^ keys)
        assert v["verdict"] in ("faster", "slower", "same", "unjudged")
        if v["verdict"] in ("faster", "slower", "same"):
            lo, hi = v["ci_pct"]
            assert lo <= v["change_pct"] <= hi, (c["id"], f)
        if f == "total_tok_s" and v["verdict"] == "slower":
            slow += 1
            assert -11 < v["change_pct"] < -9 and v["worse"], (c["id"], v["change_pct"])
assert slow == 2, slow
EOF
then ok "json: schema of formats/diff-json.md"; else bad "json: schema"; fi
"$tt" diff "$tmp/base" "$tmp/slow" --format json --fail-if-slower 5% -q > "$tmp/d2.json" $one
if cmp -s "$tmp/d.json" "$tmp/d2.json"; then ok "json: same inputs, same output"; else bad "json: not deterministic"; fi
expect "term" 0 "" -- "$tt" diff "$tmp/base" "$tmp/slow" --format term --no-color
if grep -q 'Changes found' "$tmp/out" && ! grep -q $'\x1b\[' "$tmp/out"; then ok "term: changes, no colour"; else bad "term output"; fi

# --- html, pdf, charts ---------------------------------------------------------
expect "html" 0 "" -- "$tt" diff "$tmp/base" "$tmp/slow" --format html -o "$tmp/d.html" --cell decode-8192x4
for id in facts status-changes one-side figures chart-heatmap chart-throughput chart-per-request \
	chart-tradeoff chart-ttft chart-prefill chart-tbt-cdf; do
	if grep -q "id=\"$id\"" "$tmp/d.html"; then ok "html: $id"; else bad "html: no $id"; fi
done
# the facts differ in the model's start time? no: synth runs share it; the
# rows that differ are highlighted, the others not
if grep -q '<tr class="differs"><td>Cells</td><td class="l">6</td><td class="l">6</td>' "$tmp/d.html"; then
	bad "html: equal facts highlighted"
else ok "html: equal facts not highlighted"; fi
expect "pdf" 0 "" -- "$tt" diff "$tmp/base" "$tmp/slow" --format pdf -o "$tmp/d.pdf"
pages=$(grep -ac '/Type /Page$\|/Type /Page[^s]' "$tmp/d.pdf")
if head -c 5 "$tmp/d.pdf" | grep -q '%PDF-' && [ "$pages" -ge 9 ]; then ok "pdf: $pages pages"; else bad "pdf: $pages pages"; fi
expect "pdf needs -o" 2 "--format pdf needs -o" -- "$tt" diff "$tmp/base" "$tmp/slow" --format pdf
expect "unknown cell" 2 "tbt-cdf: no decode cell 'decode-1x1'" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --format html --cell decode-1x1
expect "charts" 0 "" -- "$tt" diff "$tmp/base" "$tmp/slow" --charts "$tmp/charts" --chart-format png -q
n_png=$(ls "$tmp/charts"/diff-*.png 2> /dev/null | wc -l)
if [ "$n_png" = 7 ]; then ok "charts: 7 files"; else bad "charts: $n_png files"; fi
expect "cell without a page" 2 "--cell chooses the cell" -- "$tt" diff "$tmp/base" "$tmp/slow" --cell decode-8192x4
expect "chart format without charts" 2 "it needs --charts" -- "$tt" diff "$tmp/base" "$tmp/slow" --chart-format png
expect "bad chart format" 2 "--chart-format: 'gif'" -- "$tt" diff "$tmp/base" "$tmp/slow" --charts "$tmp/c2" --chart-format gif

# --- replicates --------------------------------------------------------------
expect "replicates" 1 "FAIL (2 cells)" -- "$tt" diff --base "$tmp/base" "$tmp/base2" "$tmp/base3" \
	--candidate "$tmp/slow" "$tmp/slow2" --fail-if-slower 5% --format md
if grep -q 'runs per side 3 and 2' "$tmp/out"; then ok "replicates: counted"; else bad "replicates: not counted"; fi
# Statuses with replicates (docs/diff.md "Status with replicates"): a side's
# status is what all its runs say, else mixed; a change is a change of the
# set of statuses; the gate needs a base Valid in every run and fails when
# any candidate run queues.  32K x 4 is Valid in base*, slowvalid, and
# queued in slow*.
expect "status gate: one candidate replicate of two queues" 1 \
	"gate Valid to queued or over capacity: FAIL (1 cell)" -- \
	"$tt" diff --base "$tmp/base" "$tmp/base2" --candidate "$tmp/slowvalid" "$tmp/slow" \
	--fail-on-status-change --format md
if grep -q '| 32K x 4 | Valid | Mixed: 1 Valid, 1 Requests queued |' "$tmp/out"; then ok "replicates: mixed status listed"; else bad "replicates: mixed status: $(grep '32K x 4' "$tmp/out" | head -2)"; fi
expect "status gate: a mixed base is no Valid baseline" 0 \
	"gate Valid to queued or over capacity: pass (0 cells)" -- \
	"$tt" diff --base "$tmp/base" "$tmp/slow" --candidate "$tmp/slow2" "$tmp/slow" --fail-on-status-change
if grep -q '; 1 status change;' "$tmp/err"; then ok "replicates: mixed to queued is a status change"; else bad "replicates: $(cat "$tmp/err")"; fi
expect "status gate: the same mix on both sides" 0 "pass (0 cells)" -- \
	"$tt" diff --base "$tmp/base" "$tmp/slow" --candidate "$tmp/slow2" "$tmp/base2" --fail-on-status-change
if grep -q '; 0 status changes;' "$tmp/err"; then ok "replicates: the same mix is no change"; else bad "replicates: same mix: $(cat "$tmp/err")"; fi
"$tt" diff --base "$tmp/base" "$tmp/slow" --candidate "$tmp/slow2" "$tmp/base2" --format json -q -o "$tmp/mix.json"
"$tt" diff --base "$tmp/base" "$tmp/slow" --candidate "$tmp/slow2" "$tmp/base2" --format csv -q -o "$tmp/mix.csv"
if python3 - "$tmp/mix.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["cells"] if c["id"] == "decode-32768x4"][0]
want = {"valid": 1, "requests_queued": 1}
assert c["base_status"] == "mixed" and c["candidate_status"] == "mixed", c
assert c["base_status_mixed"] and c["candidate_status_mixed"], c
assert c["base_status_runs"] == want and c["candidate_status_runs"] == want, c
assert not c["status_changed"], c
o = [c for c in d["cells"] if c["id"] == "decode-8192x4"][0]
assert o["base_status"] == "valid" and o["base_status_runs"] == {"valid": 2}, o
EOF
then ok "json: mixed statuses"; else bad "json: mixed statuses"; fi
if grep -q '^decode-32768x4,decode,32768,4,both,mixed:valid|requests_queued,mixed:valid|requests_queued,0,' "$tmp/mix.csv"; then ok "csv: mixed statuses"; else bad "csv: mixed: $(grep 32768x4 "$tmp/mix.csv" | head -1)"; fi

# --- one run per side (docs/diff.md "One run per side") ----------------------
# The gate refuses single runs; --allow-single-run accepts them; the output
# says in words what one run per side cannot tell and that the measured
# run-to-run allowance was added; a set of repeats counts as its runs.
expect "gate refuses one run per side" 2 "refuses to gate on one run per side" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower 5%
if grep -q "allow-single-run" "$tmp/err"; then ok "refusal names --allow-single-run"; else bad "refusal: $(cat "$tmp/err")"; fi
expect "gate refuses one run per side, run sets too" 2 "refuses to gate" -- \
	"$tt" diff --base "$tmp/base" --candidate "$tmp/slow" --fail-if-slower 5%
expect "--allow-single-run gates" 1 "FAIL (2 cells)" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower 5% --allow-single-run --run-allowance 0
expect "--allow-single-run needs a gate" 2 "needs --fail-if-slower" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --allow-single-run
expect "bad --run-allowance" 2 "--run-allowance: 'x' is not a percentage" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --run-allowance x
for f in md term; do
	"$tt" diff "$tmp/base" "$tmp/slow" --format $f --no-color -q > "$tmp/one.$f"
	if grep -q "One run per side: the verdicts cover the noise within each run only and cannot tell a version change from run-to-run drift" "$tmp/one.$f" &&
		grep -q "A run-to-run allowance (0.5 % to 125 % by figure, measured on repeated captures" "$tmp/one.$f"; then
		ok "$f: one run per side said, allowance said"
	else bad "$f: no single-run wording: $(grep -i 'run' "$tmp/one.$f" | head -3)"; fi
done
"$tt" diff "$tmp/base" "$tmp/slow" --format md -q --run-allowance 0 > "$tmp/one0.md"
if grep -q "No run-to-run allowance was applied" "$tmp/one0.md"; then ok "md: no allowance said"; else bad "md: --run-allowance 0 not said"; fi
"$tt" diff "$tmp/base" "$tmp/slow" --format html -q -o "$tmp/one.html"
if grep -q "One run per side: the verdicts cover the noise within each run only" "$tmp/one.html"; then ok "html: one run per side said"; else bad "html: no single-run wording"; fi
"$tt" diff "$tmp/base" "$tmp/slow" --format json -q -o "$tmp/one.json"
if python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
m = d['method']
assert m['single_run'] is True and m['runs_base'] == 1 and m['resampling'] == 'within_run', m
assert m['run_allowance_pct']['total_tok_s'] == 3.5 and m['run_allowance_comparisons'] > 0, m
assert any(v['run_allowance'] for c in d['cells'] for v in c['figures'].values())
" "$tmp/one.json"; then ok "json: single_run, allowance"; else bad "json: single run members"; fi
# with the allowance, the 10 % slowdown of total tok/s in synthetic runs
# with 4 s windows is no longer called on one run per side; TBT still is
"$tt" diff "$tmp/base" "$tmp/slow" --format json -q -o "$tmp/one.json"
if python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d['cells'] if c['id'] == 'decode-8192x4'][0]['figures']
assert c['tbt_p50_ms']['verdict'] == 'slower', c['tbt_p50_ms']
" "$tmp/one.json"; then ok "allowance: TBT slowdown still found"; else bad "allowance: TBT slowdown lost"; fi
# a set of repeats (capture --repeat) as BASE and CANDIDATE: its runs
mkdir -p "$tmp/setb" "$tmp/setc"
cp -r "$tmp/base" "$tmp/setb/rep-1"; cp -r "$tmp/base2" "$tmp/setb/rep-2"
cp -r "$tmp/slow" "$tmp/setc/rep-1"; cp -r "$tmp/slow2" "$tmp/setc/rep-2"
expect "run sets gate without --allow-single-run" 1 "FAIL" -- \
	"$tt" diff "$tmp/setb" "$tmp/setc" --fail-if-slower 5% --format md
if grep -q "Runs per side 2 and 2: each interval comes from a hierarchical resampling" "$tmp/out"; then ok "run sets: hierarchical said"; else bad "run sets: $(grep -i 'runs per side' "$tmp/out" | head -2)"; fi

# --- malformed inputs: a clear message, exit 2 --------------------------------
mkdir -p "$tmp/broken"
printf '{"format_major": 1, "cells": [' > "$tmp/broken/manifest.json"
printf 'not an archive' > "$tmp/garbage.tar.zst"
expect "missing run" 2 "base run '$tmp/nope'" -- "$tt" diff "$tmp/nope" "$tmp/slow"
expect "malformed manifest" 2 "candidate run '$tmp/broken'" -- "$tt" diff "$tmp/base" "$tmp/broken"
expect "garbage archive" 2 "garbage.tar.zst" -- "$tt" diff "$tmp/garbage.tar.zst" "$tmp/slow"
expect "one run" 2 "needs a base and a candidate" -- "$tt" diff "$tmp/base"
expect "three runs" 2 "got a third" -- "$tt" diff "$tmp/base" "$tmp/slow" "$tmp/base2"
expect "mixed forms" 2 "either as BASE CANDIDATE or with --base" -- \
	"$tt" diff "$tmp/base" --candidate "$tmp/slow"
expect "base list only" 2 "needs a base and a candidate" -- "$tt" diff --base "$tmp/base" "$tmp/base2"
expect "bad threshold" 2 "--fail-if-slower: 'five' is not a percentage" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower five
expect "negative threshold" 2 "is not a percentage" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower -5%
expect "unknown figure" 2 "--figure: unknown figure 'speed'" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --fail-if-slower 5% --figure speed
expect "figure without gate" 2 "it needs --fail-if-slower" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --figure ttft
expect "bad format" 2 "unknown format 'docx' for diff" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --format docx
expect "bad tail" 2 "--tail: '30' is not a percentile in (50, 100)" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" --tail 30
expect "bad alpha" 2 "--alpha" -- "$tt" diff "$tmp/base" "$tmp/slow" --alpha 2
expect "bad replicates" 2 "--replicates" -- "$tt" diff "$tmp/base" "$tmp/slow" --replicates 10
expect "bad tolerance" 2 "--tolerance: 'x' is not a percentage" -- "$tt" diff "$tmp/base" "$tmp/slow" --tolerance x
expect "bad seed" 2 "--seed: 'x' is not a whole number" -- "$tt" diff "$tmp/base" "$tmp/slow" --seed x
expect "unknown option" 2 "unknown option '--nope'" -- "$tt" diff "$tmp/base" "$tmp/slow" --nope
expect "missing value" 2 "option '--tail' needs a value" -- "$tt" diff "$tmp/base" "$tmp/slow" --tail
expect "unwritable output" 2 "cannot create '$tmp/no/such/dir/d.md'" -- \
	"$tt" diff "$tmp/base" "$tmp/slow" -o "$tmp/no/such/dir/d.md"

echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
