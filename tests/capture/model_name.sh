#!/usr/bin/env bash
# Issue 20.7: a served model name with control characters and escape
# sequences (a title change, BEL, clear screen) is printed cleaned on the
# capture's start line, as the engine version is.  The simulator refuses to
# serve such a name, so it comes in through --model, the other way the
# served name is set; the start line is printed before any request.
# usage: model_name.sh SIM CAPTURE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 W=$3
rm -rf "$W"
mkdir -p "$W"
cd "$W"
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
NAME=$'m\e]0;pwn\a\e[2Jx'
"$SIM" --port 0 --max-runtime 60 > sim.out 2>sim.err &
SIMPID=$!
for _ in $(seq 100); do grep -q listening sim.out 2>/dev/null && break; sleep 0.05; done
URL=$(sed -n 's/.*\(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' sim.out)
[ -n "$URL" ] || fail "the simulator did not start"
"$CAP" "$URL" -o run --model "$NAME" --contexts 1K --concurrency 1 --duration 1s --max-tokens 16 \
	--readiness 0.2s --readiness-timeout 5s 2> err.txt > out.txt || true
start=$(grep -a "model '" err.txt | head -1)
[ -n "$start" ] || fail "no start line"
if printf '%s' "$start" | grep -aq $'[\x01-\x08\x0b-\x1f\x7f]'; then
	fail "the start line carries control characters: $(printf '%s' "$start" | od -c | head -3)"
fi
printf '%s' "$start" | grep -aq "model 'm.*pwn.*x'" || fail "the model name is not shown: $start"
echo "ok: $start"
