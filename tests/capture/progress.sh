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
grep -aEq 'cell 3/3 decode-1024x2 \| measuring [0-9]+s of 1s, [0-9]+ streaming, [0-9]+ waiting \| elapsed .* ETA .* tok/s \| 0 errors' tty1.txt ||
	fail "the live line lacks the phase, streams, elapsed, ETA, tok/s or errors"
grep -aq $'\r\033\[K' tty1.txt || fail "the live line is not redrawn in place"
grep -aq '3 of 3 cells done' tty1.txt || fail "no summary at the end"
# the start line: the KV capacity as tokens and where it came from
grep -aq "KV capacity 8912896 tokens (vllm:cache_config_info)" tty1.txt ||
	fail "the start line lacks the KV capacity: $(grep -a 'tokentrace-capture:' tty1.txt | head -1)"

# 2. not a terminal: no live line, the summary still
"$CAP" "$URL" -o run2 $ARGS 2> err2.txt > out2.txt || fail "capture without a terminal failed"
if grep -aq 'cell 1/3' err2.txt out2.txt; then fail "a live line without a terminal"; fi
grep -aq '3 of 3 cells done' err2.txt || fail "no summary without a terminal"

# 3. --quiet on a terminal: nothing but errors
script -qec "$CAP $URL -o run3 $ARGS --quiet" tty3.txt > /dev/null || fail "quiet capture failed"
if grep -aEq 'cell 1/3|cells done' tty3.txt; then fail "--quiet still printed progress"; fi
# 4. a readiness check that cannot pass (one sequence at a time, two
# workers): the line says so, counts the streams that have tokens, and its
# ETA stays above 0 s until the window; a server without a known KV
# capacity says "unknown", not "unknown 0 (unknown)"
kill "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null || true
"$SIM" --port 0 --max-runtime 60 --max-num-seqs 1 --flavor llamacpp > sim4.out 2>sim4.err &
SIMPID=$!
for _ in $(seq 100); do grep -q listening sim4.out 2>/dev/null && break; sleep 0.05; done
URL=$(sed -n 's/.*\(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' sim4.out)
script -qec "$CAP $URL -o run4 --contexts 1K --concurrency 2 --cells decode-1Kx2 --duration 1s --max-tokens 64 --readiness 0.2s --readiness-timeout 2s" tty4.txt > /dev/null ||
	fail "capture with a readiness timeout failed"
tr '\r' '\n' < tty4.txt > lines4.txt
grep -aEq 'readiness [0-9]+s of 2s \(cannot pass: [^)]*\), 1 of 2 streaming' lines4.txt ||
	fail "no readiness wait in the line: $(grep -a 'cell 1/1' lines4.txt | tail -2)"
if grep -a '| readiness ' lines4.txt | grep -aq 'ETA 0s'; then
	fail "ETA 0s while the readiness check waits"
fi
grep -aq 'KV capacity unknown, 1 slot of 8912896 tokens' tty4.txt ||
	fail "start line: $(grep -a 'tokentrace-capture:' tty4.txt | head -1)"
if grep -aq 'unknown 0' tty4.txt; then fail "'unknown 0' in the start line"; fi
echo "progress: ok"
