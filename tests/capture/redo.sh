#!/usr/bin/env bash
# Issue 24.4: --resume RUN --redo LIST measures finished cells again.
#  1. a cell with failed requests (the simulator answers every 5th request
#     with HTTP 500) is done, status Errors: --redo errors measures it again
#     against a server without the fault, and the report then counts no
#     failed request in it (a cell whose status shows Client overloaded
#     first, on a loaded machine, is redone for its errors too);
#     the cell without errors is not measured again;
#  2. --redo with a cell id in the capture's K notation (decode-1Kx1), and
#     the same notation in chart --cell and dump --cell;
#  3. a --redo item that is no state, status key or cell: exit 2, named;
#     --redo without --resume: exit 2.
# usage: redo.sh SIM CAPTURE TOKENTRACE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 TT=$3 W=$4
rm -rf "$W"
mkdir -p "$W"
cd "$W"
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
start_sim() {
	[ -n "$SIMPID" ] && { kill "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null || true; }
	"$SIM" --port 0 --max-runtime 90 "$@" > sim.out 2>&1 &
	SIMPID=$!
	for _ in $(seq 100); do grep -q listening sim.out 2>/dev/null && break; sleep 0.05; done
	URL=$(sed -n 's/.*\(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' sim.out)
	[ -n "$URL" ] || fail "the simulator did not start"
}
errors_of() { # errors_of RUN CELL: its failed requests in the JSON report
	# (its status may show Client overloaded first on a loaded machine)
	"$TT" report "$1" --format json 2>/dev/null | python3 -c 'import json,sys
r=json.load(sys.stdin)
print([c["errors"] for c in r["cells"] if c["id"]==sys.argv[1]][0])' "$2"
}
end_of() { python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/manifest.json"))
print([c["end_ns"] for c in m["cells"] if c["id"]==sys.argv[2]][0])' "$1" "$2"; }
ARGS="--contexts 1K --concurrency 1,2 --max-tokens 32 --duration 1.5s --readiness 0.2s --readiness-timeout 10s --no-realtime"

start_sim --fault 500@every=5
"$CAP" "$URL" -o run $ARGS 2> err1.txt || fail "first capture: $(tail -1 err1.txt)"
e1=$(errors_of run decode-1024x1); e2=$(errors_of run decode-1024x2)
[ "$e1" -gt 0 ] && [ "$e2" -gt 0 ] || fail "with the fault the cells have $e1, $e2 errors"
pre=$(end_of run prefill-1024)

start_sim
"$CAP" --resume run "$URL" --redo errors 2> err2.txt || fail "--redo errors: $(tail -2 err2.txt)"
grep -q -- "--redo errors: 2 finished cells to measure again" err2.txt ||
	fail "no count of cells to measure again: $(grep -- --redo err2.txt)"
grep -q "measuring cell 'decode-1024x2' again (--redo; it was done)" err2.txt ||
	fail "the cell measured again is not named"
[ "$(errors_of run decode-1024x1)" = 0 ] || fail "after --redo: $(errors_of run decode-1024x1) errors"
[ "$(errors_of run decode-1024x2)" = 0 ] || fail "after --redo: $(errors_of run decode-1024x2) errors"
[ "$(end_of run prefill-1024)" = "$pre" ] || fail "the prefill cell (no errors) was measured again"

# 2. by id, as the capture's options write it
e_before=$(end_of run decode-1024x1)
"$CAP" --resume run "$URL" --redo decode-1Kx1 2> err3.txt || fail "--redo ID: $(tail -2 err3.txt)"
[ "$(end_of run decode-1024x1)" != "$e_before" ] || fail "--redo decode-1Kx1 did not measure it again"
[ "$(end_of run prefill-1024)" = "$pre" ] || fail "--redo decode-1Kx1 measured the prefill cell"

# the same ids in the analyzer's commands (issue 24.4: one syntax)
"$TT" chart run timeline --cell decode-1Kx2 -o tl.svg 2> err6.txt ||
	fail "chart --cell decode-1Kx2: $(cat err6.txt)"
[ -s tl.svg ] || fail "chart --cell decode-1Kx2 drew nothing"
"$TT" dump run --cell decode-1Kx2 > dump.txt 2> err7.txt || fail "dump --cell: $(cat err7.txt)"
grep -q 'decode-1024x2' dump.txt || fail "dump --cell decode-1Kx2 printed no record of the cell"

# 3. bad items
st=0
"$CAP" --resume run "$URL" --redo decode-9Kx1 2> err4.txt || st=$?
[ "$st" = 2 ] || fail "--redo of no cell exited $st"
grep -q "'decode-9Kx1' is neither failed, interrupted, a status key" err4.txt || fail "$(cat err4.txt)"
st=0
"$CAP" "$URL" -o run2 --redo errors $ARGS 2> err5.txt || st=$?
[ "$st" = 2 ] && grep -q 'it needs --resume' err5.txt || fail "--redo without --resume: $st"
echo "redo: ok"
