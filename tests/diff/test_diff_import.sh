#!/usr/bin/env bash
# An imported run against a captured one (docs/diff.md "Runs without
# traces"): the seed report, imported, against a `tokentrace synth` run
# calibrated to it.  Every comparable figure is "no significant change" on
# the basis point/samples; a copy of the report with total tok/s 10 % lower
# in two cells is flagged slower there and nowhere else; report against
# report (point/point) is judged only with --tolerance, never as slower.
# usage: test_diff_import.sh TOKENTRACE FIXTURES
set -u
tt=$1; fx=$2
seed=$fx/foreign/llm-inference-bench-report/speed-test-matrix-lfm2.5-350m-h200.txt
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
fail() { echo "FAIL: $*"; exit 1; }

"$tt" synth --profile "$fx/profiles/seed-matrix.csv" -o "$tmp/syn" -q || fail "synth"
# The slowdown: total tok/s x 0.9 in 8K x 4 and 32K x 4, printed as the
# report prints it (one decimal, thousands grouped).
python3 - "$seed" "$tmp/slow.txt" <<'PY' || fail "writing the slowed report"
import re, sys
out = []
hit = 0
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"\| Sustained decode \| (8K|32K) \| 4 \| Valid \| ([0-9,.]+) \|", line)
    if m:
        v = float(m.group(2).replace(",", "")) * 0.9
        line = line.replace(f"| {m.group(2)} |", f"| {v:,.1f} |", 1)
        hit += 1
    out.append(line)
open(sys.argv[2], "w", encoding="utf-8").write("".join(out))
sys.exit(0 if hit == 2 else 1)
PY

check() { # check JSON EXPECT_SLOWER_CELLS MODE
python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = set(sys.argv[2].split(",")) if sys.argv[2] else set()
mode = sys.argv[3]
fail = []
if d["version"] != "1.3":
    fail.append(f"version {d['version']}")
judged = 0
flagged = set()
for c in d["cells"]:
    for k, f in c["figures"].items():
        v, b = f["verdict"], f["basis"]
        if mode == "samples":
            if v in ("same", "slower", "faster"):
                judged += 1
                if "point" not in b or "samples" not in b:
                    fail.append(f"{c['id']} {k}: basis {b}")
            if v == "faster" or (v == "slower" and k != "total_tok_s"):
                fail.append(f"{c['id']} {k}: {v} {f['change_pct']}")
            if v == "slower":
                flagged.add(c["id"])
                lo, hi = f["ci_pct"]
                if not lo <= -10 <= hi + 0.2:
                    fail.append(f"{c['id']} {k}: -10 % outside {lo}..{hi}")
            if v in ("within_tolerance", "beyond_tolerance"):
                fail.append(f"{c['id']} {k}: {v} with samples on a side")
        else:  # point against point
            if v in ("same", "slower", "faster"):
                fail.append(f"{c['id']} {k}: {v}: significance claimed between points")
            if v in ("within_tolerance", "beyond_tolerance"):
                judged += 1
                if b != "point/point":
                    fail.append(f"{c['id']} {k}: basis {b}")
            if v == "beyond_tolerance":
                flagged.add(c["id"])
if flagged != want:
    fail.append(f"flagged {sorted(flagged)}, expected {sorted(want)}")
if judged < 40:
    fail.append(f"only {judged} figures judged")
print(f"{mode}: {judged} judged, flagged {sorted(flagged)}")
for f in fail:
    print("FAIL:", f)
sys.exit(1 if fail else 0)
PY
}

# 1. The seed against the run calibrated to it: nothing changed.
"$tt" diff "$seed" "$tmp/syn" -f json -o "$tmp/same.json" -q; rc=$?
[ $rc -eq 0 ] || fail "diff seed vs synth: exit $rc"
check "$tmp/same.json" "" samples || exit 1
# and the other way round
"$tt" diff "$tmp/syn" "$seed" -f json -o "$tmp/same2.json" -q || fail "diff synth vs seed"
check "$tmp/same2.json" "" samples || exit 1
# The output says what the interval holds.
"$tt" diff "$seed" "$tmp/syn" -f md -q > "$tmp/same.md" || fail "md"
grep -q "run-to-run variance cannot be known" "$tmp/same.md" || fail "md does not say the run-to-run variance is unknown"
grep -q "no significant change \[point/samples\]" "$tmp/same.md" || fail "md does not show the basis"

# 2. The synth run against the slowed report: slower in the two cells only,
# and the gate fails on them.
"$tt" diff "$tmp/syn" "$tmp/slow.txt" -f json -o "$tmp/slow.json" -q --fail-if-slower 5% --allow-single-run; rc=$?
[ $rc -eq 1 ] || fail "gate on the slowed report: exit $rc, expected 1"
check "$tmp/slow.json" "decode-8192x4,decode-32768x4" samples || exit 1

# 3. Report against report: no variance on either side.  Without
# --tolerance nothing is judged; with it, the two cells are beyond 5 %.
"$tt" diff "$seed" "$tmp/slow.txt" -f json -o "$tmp/pp0.json" -q || fail "point/point"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
s = d['summary']
sys.exit(0 if s['same'] + s['slower'] + s['faster'] + s['within_tolerance'] + s['beyond_tolerance'] == 0 else 1)
" "$tmp/pp0.json" || fail "point/point without --tolerance was judged"
"$tt" diff "$seed" "$tmp/slow.txt" -f json -o "$tmp/pp.json" -q --tolerance 5%; rc=$?
[ $rc -eq 0 ] || fail "point/point: exit $rc"
check "$tmp/pp.json" "decode-8192x4,decode-32768x4" point || exit 1
"$tt" diff "$seed" "$tmp/slow.txt" -q --tolerance 5% --fail-if-slower 5% --allow-single-run -f md -o "$tmp/pp.md"; rc=$?
[ $rc -eq 1 ] || fail "gate between points beyond the tolerance: exit $rc, expected 1"
grep -q "Tolerance for two reported figures: 5%" "$tmp/pp.md" || fail "md does not state the tolerance"
# a tolerance wider than the change: within
"$tt" diff "$seed" "$tmp/slow.txt" -f json -o "$tmp/pp15.json" -q --tolerance 15% || fail "15%"
check "$tmp/pp15.json" "" point || exit 1
echo "ok"
