#!/bin/sh
# tokentrace-capture benchmarks: prints figures, asserts nothing.
#
# usage: tests/bench/capture_bench.sh BUILD_DIR [DURATION]
#
# 1. throughput: capture_firehose streams flat out (1 token per chunk, the
#    hardest case) to 256 streams; the capture's recorded tok/s in the
#    window and its CPU time.
# 2. timing: capture_firehose paces 128 streams at 1000 tok/s each and logs
#    the moment each chunk enters the kernel; capture_latency prints the
#    distribution of (recorded arrival - that moment).
# 3. the same timing against tokentrace-sim's ground truth (stamped before
#    the simulator's event loop writes, so it includes the simulator's own
#    write-out delay).
# Build with -DCMAKE_BUILD_TYPE=Release.  On a shared machine, check the
# load first: the timing figures are mostly scheduling delay when the CPUs
# are busy.
set -eu
B=$(cd "$1" && pwd)
D=${2:-5s}
T=$(mktemp -d)
trap 'kill $SRV 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
SRV=
cap="$B/src/capture/tokentrace-capture"
port() { [ -f "$1" ] && sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$1"; }
wait_port() { i=0; while [ -z "$(port "$1" 2>/dev/null)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; }
run_cap() { # URL C OUT
	/usr/bin/time -f "  capture CPU: user %U s + sys %S s over %e s wall (max RSS %M KB)" \
		"$cap" "$1" -o "$3" --contexts 128 --concurrency "$2" --cells "decode-128x$2" \
		--duration "$D" --max-tokens 4000 --readiness 0.3s --readiness-timeout 10s -q
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"

echo "1. throughput: 256 streams, flat out, 1 token per chunk"
"$B/tests/bench/capture_firehose" > "$T/fh1" & SRV=$!
wait_port "$T/fh1"
run_cap "http://127.0.0.1:$(port "$T/fh1")" 256 "$T/run1"
kill $SRV; wait $SRV 2>/dev/null || true; SRV=
"$B/tests/bench/capture_latency" "$T/run1" -

echo "2. timing: 128 streams x 1000 tok/s, truth at write()"
"$B/tests/bench/capture_firehose" --rate 1000 --truth "$T/truth2" > "$T/fh2" & SRV=$!
wait_port "$T/fh2"
run_cap "http://127.0.0.1:$(port "$T/fh2")" 128 "$T/run2"
kill $SRV; wait $SRV 2>/dev/null || true; SRV=
"$B/tests/bench/capture_latency" "$T/run2" "$T/truth2"

echo "3. timing against tokentrace-sim: 128 streams x 1000 tok/s"
"$B/src/sim/tokentrace-sim" --port 0 --truth "$T/truth3" --step-base-ms 1 --per-seq-ms 0 \
	--per-ctx-token-ns 0 --max-num-seqs 1024 --kv-capacity 100M --max-runtime 120 > "$T/sim3" & SRV=$!
wait_port "$T/sim3"
run_cap "http://127.0.0.1:$(port "$T/sim3")" 128 "$T/run3"
kill $SRV; wait $SRV 2>/dev/null || true; SRV=
"$B/tests/bench/capture_latency" "$T/run3" "$T/truth3"
