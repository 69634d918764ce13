#!/usr/bin/env bash
# tokentrace-capture against a server on IPv6 loopback ([::1]): the run
# completes, reads back, and its chunks carry kernel receive stamps with no
# fallback (the socket of each transfer is found by family and local port).
# Exits 77 (skipped) when this machine has no IPv6 loopback.
# usage: ipv6.sh SIM CAPTURE TOKENTRACE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 TT=$3 W=$4
rm -rf "$W"
mkdir -p "$W"
cd "$W"
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SIM" --host ::1 --port 0 --max-runtime 60 > sim.out 2> sim.err &
SIMPID=$!
for _ in $(seq 100); do grep -q listening sim.out 2>/dev/null && break; kill -0 "$SIMPID" 2>/dev/null || break; sleep 0.05; done
URL=$(sed -n 's/.*\(http:\/\/\[::1\]:[0-9]*\).*/\1/p' sim.out)
if [ -z "$URL" ]; then echo "SKIP: no IPv6 loopback here: $(cat sim.err)"; exit 77; fi
"$CAP" "$URL" -o run --contexts 1K --concurrency 4 --cells decode-1Kx4 --duration 1s \
	--max-tokens 64 --readiness 0.2s --readiness-timeout 5s -q 2> err || { cat err; fail "capture over IPv6 failed"; }
"$TT" report run --format csv > report.csv || fail "report of the IPv6 run failed"
grep -q "decode" report.csv || { cat report.csv; fail "no decode row"; }
grep -q '"http://\[::1\]:' run/manifest.json || fail "the manifest does not keep the IPv6 URL"
grep -Eq '"kernel": [1-9]' run/capture-info.json || { cat run/capture-info.json; fail "no kernel stamps over IPv6"; }
grep -q '"miscounted": 0, "unknown": 0' run/capture-info.json || { cat run/capture-info.json; fail "fallbacks over IPv6"; }
echo "ipv6: ok"
