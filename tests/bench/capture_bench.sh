#!/bin/sh
# tokentrace-capture benchmarks: prints figures, asserts nothing.
#
# usage: tests/bench/capture_bench.sh BUILD_DIR [DURATION] [REPS]
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
# 4. the machine's floor for 2 and 3: loopback_floor, a receiver that does
#    nothing but epoll_wait + recvmsg + clock_gettime, against the same
#    servers under the same load; it also prints the kernel's own receive
#    stamps.  Runs 2-4 alternate REPS times (default 3) and end with the
#    median p99 of the capture, of the floor, and their ratio.
# The throughput run pins the capture to CPU 1 and the firehose to CPU 0:
# "one core" is then literal (the writer thread shares it).  PIN=1 pins the
# timing runs the same way (servers on CPU 0, capture and floor on CPU 1).
# Build with -DCMAKE_BUILD_TYPE=Release.  On a shared machine, check the
# load first: the timing figures are mostly scheduling delay when the CPUs
# are busy.
set -eu
B=$(cd "$1" && pwd)
D=${2:-5s}
REPS=${3:-3}
T=$(mktemp -d)
trap 'kill $SRV 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
SRV=
cap="$B/src/capture/tokentrace-capture"
floor="$B/tests/bench/loopback_floor"
secs=$(echo "$D" | tr -d s)
port() { [ -f "$1" ] && sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$1"; }
wait_port() { i=0; while [ -z "$(port "$1" 2>/dev/null)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; }
PIN=${PIN:-0}
ON0= ON1= PIN0= PIN1=
if [ "$(nproc)" -ge 2 ]; then ON0="taskset -c 0" ON1="taskset -c 1"; fi
if [ "$PIN" = 1 ]; then PIN0=$ON0 PIN1=$ON1; fi
run_cap() { # URL C OUT [PREFIX]: PREFIX (taskset -c N) pins the capture
	$4 /usr/bin/time -f "  capture CPU: user %U s + sys %S s over %e s wall (max RSS %M KB)" \
		"$cap" "$1" -o "$3" --contexts 128 --concurrency "$2" --cells "decode-128x$2" \
		--duration "$D" --max-tokens 4000 --readiness 0.3s --readiness-timeout 10s -q
}
start_fh() { # NAME: a paced firehose with a truth log
	$PIN0 "$B/tests/bench/capture_firehose" --rate 1000 --truth "$T/$1.truth" > "$T/$1.srv" & SRV=$!
	wait_port "$T/$1.srv"
}
start_sim() { # NAME: the simulator at 1 ms steps, 1000 tok/s per stream
	$PIN0 "$B/src/sim/tokentrace-sim" --port 0 --truth "$T/$1.truth" --step-base-ms 1 --per-seq-ms 0 \
		--per-ctx-token-ns 0 --max-num-seqs 1024 --kv-capacity 100M --max-runtime 120 \
		> "$T/$1.srv" 2>/dev/null & SRV=$!
	wait_port "$T/$1.srv"
}
stop_srv() { kill $SRV; wait $SRV 2>/dev/null || true; SRV=; }
p99() { sed -n "s/^$2 - emission .* p99 \([0-9.]*\) us.*/\1/p" "$1"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"

echo "1. throughput: 256 streams, flat out, 1 token per chunk, the capture on one core (CPU 1)"
$ON0 "$B/tests/bench/capture_firehose" > "$T/fh1" & SRV=$!
wait_port "$T/fh1"
run_cap "http://127.0.0.1:$(port "$T/fh1")" 256 "$T/run1" "$ON1"
stop_srv
"$B/tests/bench/capture_latency" "$T/run1" -

for src in fh sim; do
	if [ $src = fh ]; then what="firehose, truth at write()"; else what="tokentrace-sim's truth log"; fi
	: > "$T/$src.cap.p99"
	: > "$T/$src.floor.p99"
	: > "$T/$src.kernel.p99"
	r=1
	while [ $r -le "$REPS" ]; do
		echo "2/3. capture, 128 streams x 1000 tok/s, $what (rep $r)"
		start_$src c$r
		run_cap "http://127.0.0.1:$(port "$T/c$r.srv")" 128 "$T/run.$src.$r" "$PIN1"
		grep -o '"chunk_times": {[^}]*}' "$T/run.$src.$r/capture-info.json" | sed 's/^/  /' 
		stop_srv
		"$B/tests/bench/capture_latency" "$T/run.$src.$r" "$T/c$r.truth" | tee "$T/out"
		p99 "$T/out" arrival >> "$T/$src.cap.p99"
		rm -rf "$T/run.$src.$r" "$T/c$r.truth"
		echo "4. floor (loopback_floor), same load, $what (rep $r)"
		start_$src f$r
		$PIN1 "$floor" recv "$(port "$T/f$r.srv")" 128 "$secs" "$T/obs" --max-tokens 100000
		stop_srv
		"$floor" report "$T/obs" "$T/f$r.truth" | tee "$T/out"
		p99 "$T/out" user >> "$T/$src.floor.p99"
		p99 "$T/out" kernel >> "$T/$src.kernel.p99"
		rm -f "$T/obs" "$T/f$r.truth"
		r=$((r + 1))
	done
	c=$(median < "$T/$src.cap.p99")
	f=$(median < "$T/$src.floor.p99")
	k=$(median < "$T/$src.kernel.p99")
	echo "== $what, median p99 of $REPS runs (PIN=$PIN):"
	echo "   capture $c us; floor: kernel delivery $k us, user-space reader $f us"
	echo "   capture / kernel delivery $(awk "BEGIN {printf \"%.2f\", $c / $k}")," \
		"capture / user-space reader $(awk "BEGIN {printf \"%.2f\", $c / $f}")"
	echo "   runs: capture $(tr '\n' ' ' < "$T/$src.cap.p99"); kernel $(tr '\n' ' ' < "$T/$src.kernel.p99"); reader $(tr '\n' ' ' < "$T/$src.floor.p99")"
done
