#!/usr/bin/env bash
# The progress line: live on a terminal (script(1) gives the capture a
# pseudo-terminal), silent when stderr is not a terminal or with --quiet;
# a summary at the end unless --quiet.
# usage: progress.sh SIM CAPTURE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 W=$3
rm -rf "$W"
mkdir -p "$W"
cd "$W"
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v script >/dev/null || fail "script(1) is not installed (bsdutils)"
"$SIM" --port 0 --max-runtime 60 > sim.out 2>sim.err &
SIMPID=$!
for _ in $(seq 100); do grep -q listening sim.out 2>/dev/null && break; sleep 0.05; done
URL=$(sed -n 's/.*\(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' sim.out)
[ -n "$URL" ] || fail "the simulator did not start"
ARGS="--contexts 1K --concurrency 1,2 --duration 1s --max-tokens 64 --readiness 0.2s --readiness-timeout 5s"

# 1. on a terminal: the live line, redrawn in place, then the summary
script -qec "$CAP $URL -o run1 $ARGS" tty1.txt > /dev/null || fail "capture on a terminal failed"
grep -aq 'cell 1/3 prefill-1024' tty1.txt || fail "no live line for cell 1/3"
grep -aEq 'cell 3/3 decode-1024x2 .*elapsed .* ETA .* tok/s \| 2 active \| 0 errors' tty1.txt ||
	fail "the live line lacks elapsed, ETA, tok/s, active or errors"
grep -aq $'\r\033\[K' tty1.txt || fail "the live line is not redrawn in place"
grep -aq '3 of 3 cells done' tty1.txt || fail "no summary at the end"

# 2. not a terminal: no live line, the summary still
"$CAP" "$URL" -o run2 $ARGS 2> err2.txt > out2.txt || fail "capture without a terminal failed"
if grep -aq 'cell 1/3' err2.txt out2.txt; then fail "a live line without a terminal"; fi
grep -aq '3 of 3 cells done' err2.txt || fail "no summary without a terminal"

# 3. --quiet on a terminal: nothing but errors
script -qec "$CAP $URL -o run3 $ARGS --quiet" tty3.txt > /dev/null || fail "quiet capture failed"
if grep -aEq 'cell 1/3|cells done' tty3.txt; then fail "--quiet still printed progress"; fi
echo "progress: ok"
