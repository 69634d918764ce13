#!/usr/bin/env bash
# Issue 24.3: fail fast.
#  1. the server dies mid-window (tokentrace-sim --max-runtime): the capture
#     stops within 3 s of its death (3 refused connections in a row: the
#     rule, docs/capture.md "Failures"), names the rule and the --resume
#     command, exits 1, and the cut cell is failed, the next one pending
#     (before: the cell finished its window as done, the next waited out
#     its 60 s readiness timeout);
#  2. the server dies in the last cell: exit status not 0 (before: 0, with
#     the cell done);
#  3. --resume against a live server measures the failed cell again: exit 0;
#  4. a --model the server does not list gets a warning on the start line.
# usage: fail_fast.sh SIM CAPTURE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 W=$3
rm -rf "$W"
mkdir -p "$W"
cd "$W"
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
start_sim() { # start_sim OUT ARGS...
	local out=$1
	shift
	"$SIM" --port 0 "$@" > "$out" 2>&1 &
	SIMPID=$!
	for _ in $(seq 100); do grep -q listening "$out" 2>/dev/null && break; sleep 0.05; done
	URL=$(sed -n 's/.*\(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' "$out")
	[ -n "$URL" ] || fail "the simulator did not start"
}
state() { # state RUN CELL
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/manifest.json"))
print([c["state"] for c in m["cells"] if c["id"]==sys.argv[2]][0])' "$1" "$2"
}
ARGS="--contexts 1K --max-tokens 64 --duration 6s --readiness 0.2s --readiness-timeout 60s --no-realtime"

# 1. dies mid-window of the first decode cell
start_sim sim1.out --max-runtime 3
st=0
timeout 30 "$CAP" "$URL" -o run1 --concurrency 2,4 $ARGS 2> err1.txt || st=$?
end=$(date +%s.%N)
wait "$SIMPID" 2>/dev/null || true
SIMPID=
[ "$st" = 1 ] || fail "exit status $st, not 1: $(tail -2 err1.txt)"
grep -q 'refused [0-9]* connections in a row (the rule: 3 generation requests refused' err1.txt ||
	fail "the rule is not stated: $(tail -1 err1.txt)"
grep -q -- '--resume run1' err1.txt || fail "no --resume command: $(tail -1 err1.txt)"
[ "$(state run1 decode-1024x2)" = failed ] || fail "the cut cell is $(state run1 decode-1024x2)"
[ "$(state run1 decode-1024x4)" = pending ] || fail "the next cell is $(state run1 decode-1024x4)"
# the capture ended within 3 s of the simulator's exit (it runs 3 s, the
# window 6 s: before, the window ran out and the next cell waited 60 s)
started=$(stat -c %Y sim1.out)
python3 - "$started" "$end" <<'PY' || fail "the capture did not stop within 3 s of the server's death"
import sys
start, end = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if end - start < 3 + 3 + 1 else 1)  # sim start + 3 s runtime + 3 s (+1 s stat rounding)
PY

# 2. dies in the last cell: not exit 0
start_sim sim2.out --max-runtime 3
st=0
timeout 30 "$CAP" "$URL" -o run2 --concurrency 2 --cells decode-1Kx2 $ARGS 2> err2.txt || st=$?
wait "$SIMPID" 2>/dev/null || true
SIMPID=
[ "$st" != 0 ] || fail "exit 0 although the last cell's server died: $(tail -1 err2.txt)"
[ "$(state run2 decode-1024x2)" = failed ] || fail "the last cell is $(state run2 decode-1024x2)"

# 3. a resume measures the failed cell again
start_sim sim3.out --max-runtime 60
st=0
timeout 60 "$CAP" --resume run1 "$URL" 2> err3.txt || st=$?
[ "$st" = 0 ] || fail "the resume exited $st: $(tail -2 err3.txt)"
grep -q "retrying cell 'decode-1024x2' (failed before: the server refused" err3.txt ||
	fail "the resume does not say it retries the failed cell"
[ "$(state run1 decode-1024x2)" = done ] || fail "after the resume: $(state run1 decode-1024x2)"

# 4. a model the server does not list
st=0
timeout 30 "$CAP" "$URL" -o run4 --model not-served --cells prefill-1K $ARGS 2> err4.txt || st=$?
grep -q "warning: --model 'not-served' is not a model '$URL/v1/models' lists (its first is 'sim')" err4.txt ||
	fail "no warning for a model the server does not list: $(head -3 err4.txt)"
st=0
timeout 30 "$CAP" "$URL" -o run5 --model sim --cells prefill-1K $ARGS 2> err5.txt || st=$?
if grep -q 'warning: --model' err5.txt; then fail "a warning for a listed model"; fi
echo "fail fast: ok"
