#!/bin/bash
# A/A and sensitivity of `tokentrace diff` on real captures of the
# simulator (docs/diff.md "Measured on real captures"): prints figures,
# asserts nothing.  Run on demand; bounded (about 15 minutes of captures at
# the defaults, under nice, loopback only).
#
# usage: tests/bench/diff_aa.sh BUILD_DIR [WORK_DIR] [PAIRS]
#        WORK_DIR keeps the captures (default: a temporary directory,
#        removed at the end); captures already in WORK_DIR are reused, so
#        ANALYSE_ONLY=1 re-runs the diffs on them.  PAIRS default 20.
#
# Setup: tokentrace-sim with its default engine (base) and with every
# decode-step cost 10 % higher (--step-base-ms 0.99 --per-seq-ms 0.022
# --per-ctx-token-ns 2.2: "slow").  Each capture is `tokentrace-capture
# --repeat 3` of contexts 1K, concurrency 1 and 4, 2 s windows, 0.5 s
# readiness, 128 output tokens (the slow ones concurrency 1 only), one
# after another: 2 x PAIRS base captures, PAIRS slow ones.
#
# A/A: pair i is base capture 2i against base capture 2i+1, with 1, 2 and
# 3 runs per side (rep-1; rep-1,2; rep-1,2,3), default options: the share
# of pairs with any faster or slower verdict, and with a status change.
# Sensitivity: base capture 2i against slow capture i, 1, 2 and 3 runs per
# side: the share of pairs whose decode-1024x1 is judged slower in TBT p50
# and in total tok/s.  One run per side is also judged without the
# run-to-run allowance (--run-allowance 0), to show what it is for.  With one run per side the diff refuses to gate, so
# the A/A figures are the verdicts the output shows.
set -u
B=$(cd "$1" && pwd)
W=${2:-}
PAIRS=${3:-20}
tt="$B/src/cli/tokentrace"
cap="$B/src/capture/tokentrace-capture"
sim="$B/src/sim/tokentrace-sim"
KEEP=1
if [ -z "$W" ]; then W=$(mktemp -d); KEEP=0; fi
mkdir -p "$W"
SRV=
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; [ $KEEP = 1 ] || rm -rf "$W"; }
trap cleanup EXIT INT TERM

start_sim() { # $1 name, rest: simulator options
	local name=$1; shift
	nice -n 10 "$sim" --port 0 --max-runtime 3600 "$@" >"$W/$name.sim.out" 2>&1 &
	SRV=$!
	for _ in $(seq 50); do
		URL=$(grep -o 'http://[0-9.:]*' "$W/$name.sim.out" 2>/dev/null) && [ -n "$URL" ] && return 0
		sleep 0.1
	done
	echo "simulator did not start"; exit 1
}
stop_sim() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; SRV=; }

capture() { # $1 dir, $2 concurrency
	[ -f "$1/rep-3/manifest.json" ] && return 0
	rm -rf "$1"
	timeout 120 nice -n 10 "$cap" "$URL" -o "$1" --repeat 3 --contexts 1K --concurrency "$2" \
		--duration 2s --readiness 0.5s --max-tokens 128 -q ||
		echo "capture $1 failed: $?"
}

if [ "${ANALYSE_ONLY:-0}" != 1 ]; then
	t0=$(date +%s)
	start_sim base
	for i in $(seq 0 $((2 * PAIRS - 1))); do capture "$W/base-$i" 1,4; done
	stop_sim
	start_sim slow --step-base-ms 0.99 --per-seq-ms 0.022 --per-ctx-token-ns 2.2
	for i in $(seq 0 $((PAIRS - 1))); do capture "$W/slow-$i" 1; done
	stop_sim
	echo "captures: $((3 * PAIRS)) x 3 repeats in $(( $(date +%s) - t0 )) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
fi
[ "${CAPTURE_ONLY:-0}" = 1 ] && exit 0

# The run-to-run allowance (docs/diff.md "One run per side"), estimated on
# other runs than those judged below: rep-2 of base capture 2i against
# rep-2 of base capture 2i+1, and the same for rep-3 (2 x PAIRS pairs of
# independent captures), diffed with --run-allowance 0.  Per figure, d =
# ln(candidate / base) and w = se_b^2 + se_c^2 (the bootstrap's within-run
# variances): the allowance a is the standard deviation one run adds,
# a^2 = (mean d^2 - mean w) / 2, printed in % with the pairs' count.
for k in 2 3; do
	for i in $(seq 0 $((PAIRS - 1))); do
		a="$W/base-$((2 * i))/rep-$k" b="$W/base-$((2 * i + 1))/rep-$k"
		[ -f "$a/manifest.json" ] && [ -f "$b/manifest.json" ] || continue
		"$tt" diff "$a" "$b" --run-allowance 0 -f json -o "$W/est-$k-$i.json" -q 2>/dev/null
	done
done
python3 - "$W" <<'PY'
import glob, json, math, sys
acc = {}
for p in sorted(glob.glob(sys.argv[1] + "/est-*.json")):
    d = json.load(open(p))
    for c in d["cells"]:
        for f, v in c["figures"].items():
            if v["verdict"] in ("unjudged",) or v["ratio"] is None or v["se_log_base"] is None:
                continue
            key = (c["id"], f)
            acc.setdefault(key, []).append((math.log(v["ratio"]), v["se_log_base"] ** 2 + v["se_log_candidate"] ** 2))
print("run-to-run allowance estimate (pairs of rep-2 and rep-3 runs, --run-allowance 0):")
byfig = {}
for (cell, f), xs in sorted(acc.items()):
    n = len(xs)
    md2 = sum(x * x for x, _ in xs) / n
    mw = sum(w for _, w in xs) / n
    a2 = (md2 - mw) / 2
    byfig.setdefault(f, []).append(a2)
    print("  %-16s %-18s pairs %2d  rms ln ratio %6.2f %%  within sd %6.2f %%  allowance %6.2f %%"
          % (cell, f, n, 100 * math.sqrt(md2), 100 * math.sqrt(mw), 100 * math.sqrt(max(a2, 0))))
for f, v in sorted(byfig.items()):
    print("  %-18s allowance, largest over cells: %.2f %%" % (f, 100 * math.sqrt(max(max(v), 0))))
PY

side() { # $1 capture dir, $2 runs
	local k out=""
	for k in $(seq 1 "$2"); do out="$out $1/rep-$k"; done
	echo "$out"
}

for spec in "1 --run-allowance 0" 1 2 3; do
	read -r n extra <<<"$spec"
	aa=0 aas=0 sens_tbt=0 sens_tot=0 total=0 allow=0
	for i in $(seq 0 $((PAIRS - 1))); do
		a="$W/base-$((2 * i))" b="$W/base-$((2 * i + 1))" s="$W/slow-$i"
		[ -f "$a/rep-3/manifest.json" ] && [ -f "$b/rep-3/manifest.json" ] &&
			[ -f "$s/rep-3/manifest.json" ] || continue
		total=$((total + 1))
		"$tt" diff --base $(side "$a" $n) --candidate $(side "$b" $n) $extra -f json -o "$W/aa-$n-$i.json" -q 2>/dev/null
		"$tt" diff --base $(side "$a" $n) --candidate $(side "$s" $n) $extra -f json -o "$W/sens-$n-$i.json" -q 2>/dev/null
		read -r v st al < <(python3 - "$W/aa-$n-$i.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
print(s["faster"] + s["slower"], s["status_changes"], 1 if d["method"].get("run_allowance_comparisons") else 0)
PY
)
		[ "$v" -gt 0 ] && aa=$((aa + 1))
		[ "$st" -gt 0 ] && aas=$((aas + 1))
		allow=$((allow + al))
		read -r tb to < <(python3 - "$W/sens-$n-$i.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cells"]:
    if c["id"] == "decode-1024x1":
        f = c["figures"]
        print(int(f["tbt_p50_ms"]["verdict"] == "slower"), int(f["total_tok_s"]["verdict"] == "slower"))
        break
else:
    print(0, 0)
PY
)
		sens_tbt=$((sens_tbt + tb)) sens_tot=$((sens_tot + to))
	done
	echo "runs per side $n${extra:+ ($extra)}: A/A pairs with any verdict $aa of $total; with a status change $aas of $total; run-to-run allowance applied in $allow; 10 % slower decode step flagged slower at 1K x 1: TBT p50 $sens_tbt of $total, total tok/s $sens_tot of $total"
done
