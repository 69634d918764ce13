#!/usr/bin/env bash
# The capture keeps itself on the CPU where it can (docs/capture.md "When
# a stamp is late"): as root its loop thread runs SCHED_FIFO 10 and nothing
# is said; --no-realtime keeps the normal policy; a user without the right
# gets a clear warning and the capture still runs.  Needs root and
# setpriv; exits 77 (skipped) without them.
# usage: realtime.sh SIM CAPTURE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 W=$3
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root"
command -v setpriv >/dev/null || skip "setpriv is not installed"
chrt -f 10 true 2>/dev/null || skip "real-time priority is not permitted here"
rm -rf "$W"
mkdir -p "$W"
chmod 777 "$W"
cd "$W"
"$SIM" --port 0 --max-runtime 60 >sim.out 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
for _ in $(seq 50); do
	url=$(grep -o 'http://[^ ]*' sim.out || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { echo "FAIL: the simulator did not start"; exit 1; }
args=(--contexts 64 --concurrency 1 --duration 3s --max-tokens 200 --readiness 0.2s
	--scrape-interval 0 -q)
fail=0
# root: SCHED_FIFO while it runs (its main thread), no warning
"$CAP" "$url" -o run-root "${args[@]}" 2>err-root &
cap=$!
sleep 1
policy=$(chrt -p "$cap" 2>/dev/null | head -1 || true)
wait "$cap" || { echo "FAIL: capture as root exited non-zero"; fail=1; }
echo "root: $policy"
case "$policy" in *SCHED_FIFO*) ;; *) echo "FAIL: the capture's loop is not SCHED_FIFO"; fail=1 ;; esac
if grep -q "real-time" err-root; then echo "FAIL: warned as root"; cat err-root; fail=1; fi
# --no-realtime: the normal policy
"$CAP" "$url" -o run-nort --no-realtime "${args[@]}" 2>err-nort &
cap=$!
sleep 1
policy=$(chrt -p "$cap" 2>/dev/null | head -1 || true)
wait "$cap" || { echo "FAIL: capture --no-realtime exited non-zero"; fail=1; }
echo "--no-realtime: $policy"
case "$policy" in *SCHED_OTHER*) ;; *) echo "FAIL: --no-realtime changed the policy"; fail=1 ;; esac
# a user without the right: warned, and the run is made all the same
if setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
	"$CAP" "$url" -o run-user "${args[@]}" 2>err-user; then
	:
else
	echo "FAIL: capture as an unprivileged user exited non-zero"; cat err-user; fail=1
fi
echo "user: $(head -c 200 err-user)"
grep -q "warning: cannot run at real-time priority" err-user ||
	{ echo "FAIL: no warning without the right"; fail=1; }
[ -f run-user/manifest.json ] || { echo "FAIL: no run written"; fail=1; }
exit $fail
