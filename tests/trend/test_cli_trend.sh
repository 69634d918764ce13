#!/bin/bash
# tokentrace trend as a user runs it (docs/trend.md "Validation"):
# 32 synthetic runs (different seeds) of fixtures/profiles/small.csv, from
# the 21st on 10 % slower in decode-8192x4 and decode-32768x1 only (total and
# per request tok/s x 0.9, time between tokens / 0.9): every change point is
# at run 21, in exactly those cells; 32 runs of noise only: none.  Also the
# order by key, a folder of runs, a damaged run left out with a warning
# (exit 3), the gate, and usage errors.
set -u
T=$1
FIX=$2
W=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$W"
mkdir -p "$W/slow" "$W/noise" || exit 1
cd "$W" || exit 1
base=$FIX/profiles/small.csv
# the slowed profile: 10 % slower in two decode cells
awk -F, 'BEGIN{OFS=","} /^decode,(8K,4|32K,1),/ {$5=$5*0.9; $6=$6*0.9; $8=$8/0.9} {print}' \
  "$base" > slow.csv
grep -q '^decode,8K,4,Valid,3077.64,780.21' slow.csv || fail "slow.csv: $(cat slow.csv)"
for i in $(seq 1 32); do
  p=$base
  [ "$i" -ge 21 ] && p=slow.csv
  "$T" synth -q --profile "$p" -o "slow/r$i" --seed "$i" --note "build=2.0.$i" || fail "synth $i"
  "$T" synth -q --profile "$base" -o "noise/r$i" --seed "$((i + 100))" --note "build=2.0.$i" ||
    fail "synth noise $i"
done

# the folder, ordered by the build note (r10 sorts before r9 by name, not by key)
"$T" trend slow --key build -f json -o slow.json -q; rc=$?
[ $rc -eq 0 ] || fail "trend slow: exit $rc"
python3 - slow.json <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "tokentrace-trend", d["schema"]
assert [r["key"] for r in d["runs"]] == ["2.0.%d" % i for i in range(1, 33)], d["runs"]
cps = d["change_points"]
assert cps, "no change points"
cells = sorted({c["cell"] for c in cps})
assert cells == ["decode-32768x1", "decode-8192x4"], cells
for c in cps:
    assert c["run"] == "slow/r21", c
    assert c["key"] == "2.0.21", c
    assert c["regression"], c
    assert c["p_value"] <= 0.01, c
for cell in cells:
    tot = [c for c in cps if c["cell"] == cell and c["figure"] == "total_tok_s"]
    assert len(tot) == 1 and abs(tot[0]["change_pct"] + 10) < 0.5, tot
    tbt = [c for c in cps if c["cell"] == cell and c["figure"] == "tbt_p50_ms"]
    assert len(tbt) == 1 and abs(tbt[0]["change_pct"] - 11.1) < 0.5, tbt
print("slow: %d change points, all at slow/r21 in %s" % (len(cps), cells))
PY

# noise only: no change point, the gate passes
"$T" trend noise/r* -f json -o noise.json --fail-if-regressed 5% -q; rc=$?
[ $rc -eq 0 ] || fail "trend noise: exit $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["change_points"] == [], d["change_points"]; assert len(d["series"]) == 26; assert d["partial_cells"] == 0' noise.json ||
  fail "noise: change points found"

# the gate: the newest runs are 10 % slower
"$T" trend slow --key build --fail-if-regressed 5% -f md -o slow.md 2> gate.err; rc=$?
[ $rc -eq 1 ] || fail "gate at 5 %: exit $rc, want 1"
grep -q "gate FAILED" gate.err || fail "gate message: $(cat gate.err)"
grep -q '| decode-8192x4 | Total tok/s | -10.0% |' slow.md || fail "md table: $(cat slow.md)"
"$T" trend slow --key build --fail-if-regressed 20% -f csv -o slow.csv.out -q; rc=$?
[ $rc -eq 0 ] || fail "gate at 20 %: exit $rc, want 0"
[ "$(head -1 slow.csv.out)" = "cell,figure,run_number,run,engine_version,key,before,after,change_pct,p_value,kind" ] ||
  fail "csv header: $(head -1 slow.csv.out)"
[ "$(grep -c ',21,slow/r21,' slow.csv.out)" = 8 ] || fail "csv rows: $(cat slow.csv.out)"

# html: one chart per series that changed, each naming the run
"$T" trend slow --key build -f html -o slow.html -q || fail "html"
[ "$(grep -c '<svg' slow.html)" = 8 ] || fail "html: $(grep -c '<svg' slow.html) charts, want 8"
grep -q '#21 slow/r21 (0.1.0) -10.0%' slow.html || fail "html: change point not named"
grep -qi '<script' slow.html && fail "html: a script"

# the same answer twice (seeded)
"$T" trend slow --key build -f json -q | cmp -s - slow.json || fail "not deterministic"

# a damaged run is left out, named, exit 3
printf 'not a run' > junk.tar
"$T" trend slow junk.tar --key build -f json -o dmg.json 2> dmg.err; rc=$?
[ $rc -eq 3 ] || fail "damaged run: exit $rc, want 3"
grep -q "junk.tar" dmg.err || fail "damaged run not named: $(cat dmg.err)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["runs"]) == 32' dmg.json ||
  fail "damaged: runs"

# runs as the report takes them: damaged cells kept and named, a folder
# that is no run left out, imported files read (exit 3: warnings)
D=$FIX/damaged
"$T" trend slow/r1 slow/r2 "$D/truncated-frame" "$D/missing-manifest" "$D/cut.tar.gz" \
  "$FIX/foreign/vllm-bench/bench_serve_v0.25.1.json" --order given -f json -o mixed.json 2> mixed.err; rc=$?
[ $rc -eq 3 ] || fail "damaged and imported runs: exit $rc, want 3"
grep -q "truncated-frame'.*decode-8192x4" mixed.err || fail "damaged cell not named: $(cat mixed.err)"
grep -q "missing-manifest' left out" mixed.err || fail "not-a-run not named: $(cat mixed.err)"
python3 - mixed.json <<'PY' || fail "mixed runs"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert len(runs) == 5, [r["path"] for r in runs]
assert [r["imported"] for r in runs] == [False] * 4 + [True], runs
# the imported run's matrix is another one: its cells are series of their own
assert any(s["cell"] == "decode-32x2" and s["run_index"] == [4] for s in d["series"]), d["series"]
assert d["partial_cells"] > 0, d["partial_cells"]
PY

# the catalog: the folder's default one was filled by the first call above;
# from it, the same answer, no run analysed again
[ -f slow/tokentrace-catalog.sqlite ] || fail "no default catalog beside the runs"
"$T" trend slow --key build -f json -o cat.json 2> cat.err; rc=$?
[ $rc -eq 0 ] || fail "trend from the catalog: exit $rc"
grep -q "32 from the catalog" cat.err || fail "catalog not used: $(cat cat.err)"
cmp -s cat.json slow.json || fail "the catalog changed the answer"
"$T" trend slow --key build -f json --no-catalog -o nocat.json 2> nocat.err; rc=$?
cmp -s nocat.json slow.json || fail "--no-catalog changed the answer"
grep -q "from the catalog" nocat.err && fail "--no-catalog used it: $(cat nocat.err)"
[ -f noise/tokentrace-catalog.sqlite ] && fail "noise/r* (not a folder) got a default catalog"
# an explicit catalog; a copy of a run elsewhere is found by its content
# hash, a new run (another hash) is analysed
"$T" trend slow/r* --catalog own.sqlite -f json -o own1.json -q || fail "--catalog"
cp -r slow/r5 r5copy && "$T" synth -q --profile "$base" -o r5new --seed 555 || fail "synth r5new"
"$T" trend slow/r* r5copy r5new --catalog own.sqlite -f json -o own2.json 2> own2.err ||
  fail "--catalog 2"
grep -q "trend: 34 runs.*; 33 from the catalog" own2.err || fail "own catalog: $(cat own2.err)"
# not a catalog: warned, exit 3, the same answer without it
printf 'SQLite format 3 but not really' > bad.sqlite
"$T" trend slow/r* --catalog bad.sqlite -f json -o bad.json 2> bad.err; rc=$?
[ $rc -eq 3 ] || fail "a broken catalog: exit $rc, want 3"
grep -q "catalog not used" bad.err || fail "broken catalog message: $(cat bad.err)"
cmp -s bad.json own1.json || fail "a broken catalog changed the answer"

# usage errors: exit 2 with a message
expect2() {
  "$T" trend "$@" > /dev/null 2> err.txt; rc=$?
  [ $rc -eq 2 ] || fail "trend $*: exit $rc, want 2"
  grep -q "^tokentrace: error: " err.txt || fail "trend $*: message $(cat err.txt)"
}
expect2 slow --order sideways
expect2 slow --order key
expect2 slow --alpha 2
expect2 slow --min-size 1
expect2 slow/r1
expect2 --key build
expect2 slow -f pdf
expect2 slow --catalog x.sqlite --no-catalog
echo "cli-trend: ok"
