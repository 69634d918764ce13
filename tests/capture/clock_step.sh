#!/usr/bin/env bash
# A wall-clock step during a capture is recorded (issue 23.1, formats/run-v1.md
# 3.5 `clock_steps`, docs/metrics.md M-timing): while a decode cell is
# measured, the wall clock is set to its own current value a few times
# (a step of microseconds: the kernel still cancels every
# TFD_TIMER_CANCEL_ON_SET timer, which is what the capture watches).  The
# requests in flight must carry clock_steps > 0 in the trace (dump), the
# cell's timing quality must count them, and the status evidence must
# list the warning.  Setting the clock needs CAP_SYS_TIME: without it the
# test is skipped (exit 77).
# usage: clock_step.sh SIM CAPTURE TOKENTRACE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 TT=$3 W=$4
skip() { echo "SKIP: $*"; exit 77; }
step() {
	python3 -c 'import time; time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME))'
}
step 2>/dev/null || skip "the wall clock cannot be set here (CAP_SYS_TIME)"
rm -rf "$W"
mkdir -p "$W"
cd "$W"
"$SIM" --port 0 --max-runtime 60 >sim.out 2>&1 &
simpid=$!
trap 'kill $simpid 2>/dev/null || true' EXIT
url=
for _ in $(seq 50); do
	url=$(grep -o 'http://[^ ]*' sim.out || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { echo "FAIL: the simulator did not start"; exit 1; }
# one cell of long requests (1024 tokens at ~1 ms a step: each request
# spans about a second), 4 s window after 0.5 s readiness
timeout 60 "$CAP" "$url" -o run --contexts 1K --concurrency 2 --duration 4s \
	--max-tokens 1024 --readiness 0.5s -q &
cap=$!
sleep 2.5
for _ in 1 2 3; do step; sleep 0.3; done
wait $cap || { echo "FAIL: the capture exited $?"; exit 1; }
"$TT" dump run >dump.jsonl
"$TT" report run --format json -o report.json
python3 - <<'PY'
import json, sys
reqs = [json.loads(l) for l in open("dump.jsonl") if l.strip()]
stepped = [r for r in reqs if (r.get("timing") or {}).get("clock_steps", 0) > 0]
print("requests %d, with a clock step %d" % (len(reqs), len(stepped)))
rep = json.load(open("report.json"))
cell = [c for c in rep["cells"] if c["phase"] == "decode"][0]
t = cell.get("timing") or {}
ev = [e for e in cell.get("evidence", []) if "wall-clock step" in e.get("signal", "")]
print("cell %s: timing.clock_steps %s, evidence %s, status %s"
      % (cell["id"], t.get("clock_steps"), ev, cell["status_key"]))
bad = 0
if not stepped:
    print("FAIL: no request recorded the clock step"); bad = 1
if not t.get("clock_steps"):
    print("FAIL: the cell's timing quality does not count it"); bad = 1
if not ev or not ev[0].get("triggered"):
    print("FAIL: the status evidence does not warn of it"); bad = 1
sys.exit(bad)
PY
echo PASS
