#!/bin/sh
# Open-loop benchmark (docs/capture.md "Open-loop load", tests/bench/README.md
# "Requests per second"): prints figures, asserts nothing.
#
# usage: tests/bench/openloop_bench.sh BUILD_DIR [DURATION] [RATES] [REPEATS]
#        defaults 10s, "4000 8000 10000", 3
#
# 1. Holding the schedule: tokentrace-capture --rates 2000/s against
#    tokentrace-sim (16-token prompts, 4-token outputs, up to 1024 requests
#    at once, 0.5 ms steps: far below the simulator's capacity), the send
#    lateness (send - due) p50, p99 and max over the window's requests.
# 2. The simulator's own ceiling: sim_ceiling (tests/bench/sim_ceiling.c),
#    the cheapest client we can write (256 keep-alive connections, raw
#    sockets, nothing parsed or recorded), sends the same requests closed
#    loop for DURATION: requests/s, and the simulator's CPU seconds per
#    1,000 requests (/proc/PID/stat), so its ceiling on one full core is
#    1,000 / that.
# 3. The capture at each of RATES until a cell is not sustained: status,
#    ended rate, send lateness p99, which side fell behind (the client:
#    lateness p99 > 50 ms; the server: ended < 0.9 x due), and the
#    capture's CPU seconds (user + sys, /usr/bin/time) per 1,000 requests
#    sent (warm-up and window: rate x (1 s + DURATION)).
# 4. Summary over REPEATS rounds of 2 and 3 (medians): the capture's
#    highest sustained rate as a ratio to the simulator's ceiling; the
#    capture's ceiling on one full core, estimated as 1 / (CPU seconds per
#    request) at its highest sustained rate, as a ratio to GuideLLM's
#    reported ~1,000 requests/s per process (REFERENCE.md section 2).
#
# The simulator is pinned to CPU 0 and the clients to CPU 1 (2 CPUs or
# more), all under nice.  RT=1 (the default when chrt can) runs the capture
# SCHED_FIFO in parts 1 and 3, so the figures are the capture's and not the
# time slices other programs take on a shared machine (an open-loop client
# that stalls sends a burst late, the burst needs new connections, and a
# server with thousands of connections slows down: RT=0 shows it).  Every
# load is bounded: DURATION at most 30 s, each capture under `timeout`, a
# stalled request cut after 3 s, loopback only.  Build with -DCMAKE_BUILD_TYPE=Release or RelWithDebInfo.
set -eu
B=$(cd "$1" && pwd)
D=${2:-10s}
RATES=${3:-"4000 8000 10000"}
REPEATS=${4:-3}
DS=$(python3 -c "import sys; d='$D'; print(float(d[:-1]) if d.endswith('s') else float(d))")
python3 -c "import sys; sys.exit(0 if 0 < $DS <= 30 else 1)" || { echo "DURATION must be 1s..30s"; exit 2; }
T=$(mktemp -d)
SRV=
trap 'kill $SRV 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
cap="$B/src/capture/tokentrace-capture"
sim="$B/src/sim/tokentrace-sim"
tt="$B/src/cli/tokentrace"
ceil="$B/tests/bench/sim_ceiling"
[ -x "$ceil" ] || { echo "build the benchmarks first: cmake --build $B --target bench"; exit 2; }
ON0= ON1=
if [ "$(nproc)" -ge 2 ]; then ON0="taskset -c 0" ON1="taskset -c 1"; fi
RT=${RT:-auto}
FIFO=
if [ "$RT" != 0 ] && chrt -f 50 true 2>/dev/null; then FIFO="chrt -f 50"; fi
HZ=$(getconf CLK_TCK)
echo "openloop bench: window $D x $REPEATS rounds, capture ${ON1:+on CPU 1}, simulator ${ON0:+on CPU 0}, nice; load: $(cut -d' ' -f1-3 /proc/loadavg)"

start_sim() {
	$ON0 nice "$sim" --port 0 --max-runtime 300 --max-num-seqs 1024 --step-base-ms 0.5 \
		--per-seq-ms 0 --per-ctx-token-ns 0 --prefill-tok-s 100000000 > "$T/sim.out" 2>/dev/null &
	SRV=$!
	i=0
	while ! grep -q listening "$T/sim.out" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
	URL=$(sed -n 's/.*listening on //p' "$T/sim.out")
}
stop_sim() { kill "$SRV" 2>/dev/null || true; wait "$SRV" 2>/dev/null || true; SRV=; }
# CPU seconds (user + sys) the simulator has used so far
sim_cpu() { awk -v hz="$HZ" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$SRV/stat"; }

# RATE -> "status due ended late_p50 late_p99 late_max cpu_share cpu_s sim_cpu_s"
one() {
	rm -rf "$T/run"
	s0=$(sim_cpu)
	$FIFO $ON1 nice /usr/bin/time -o "$T/time" -f "%U %S %e" timeout -s INT 90 "$cap" "$URL" \
		-o "$T/run" --contexts 16 --rates "$1/s" --max-tokens 4 --duration "$D" --warmup 1s \
		--drain 2s --scrape-interval 0 --request-timeout 3s -q || true
	s1=$(sim_cpu)
	"$tt" report "$T/run" --format json > "$T/r.json" 2>/dev/null || true
	python3 - "$T/r.json" "$T/time" "$s0" "$s1" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except ValueError:
    print("no_run nan nan nan nan nan nan nan nan")  # the capture failed: its message is above
    sys.exit(0)
u, s, w = (float(x) for x in open(sys.argv[2]).read().split()[-3:])
for c in j["cells"]:
    if c["phase"] == "rate":
        o = c["open_loop"]
        f = lambda v: "nan" if v is None else "%.3f" % v
        print(c["status_key"], f(o["scheduled_req_s"]), f(o["achieved_req_s"]),
              f(o["lateness_ms"]["p50"]), f(o["lateness_p99_ms"]), f(o["lateness_ms"]["max"]),
              "%.3f" % ((u + s) / w), "%.2f" % (u + s),
              "%.2f" % (float(sys.argv[4]) - float(sys.argv[3])))
PY
}

start_sim
echo
echo "1. holding the schedule at 2000 requests/s${FIFO:+ (capture SCHED_FIFO)}"
set -- $(one 2000)
echo "   status $1; due $2/s, ended $3/s; send lateness p50 $4 ms, p99 $5 ms, max $6 ms;"
echo "   capture CPU $8 s = $7 of one core over the run (warm-up, window, drain)"
stop_sim

: > "$T/ceil" ; : > "$T/cap"
round=1
while [ $round -le "$REPEATS" ]; do
	echo
	echo "round $round"
	start_sim
	s0=$(sim_cpu)
	set -- $($ON1 nice "$ceil" "$URL" 256 "$DS")
	s1=$(sim_cpu)
	simc=$(python3 -c "print('%.2f' % ($s1 - $s0))")
	echo "$6 $2 $simc $9" >> "$T/ceil"
	echo "   2. simulator ceiling (sim_ceiling, 256 connections): $6 requests/s; simulator CPU $simc s = $(python3 -c "print('%.3f' % (1000 * $simc / $2))") s per 1,000; client CPU $9 s"
	stop_sim
	start_sim
	for r in $RATES; do
		set -- $(one "$r")
		side=
		if [ "$1" != valid ]; then
			side=$(python3 -c "print('server' if float('$3') < 0.9 * float('$2') else 'client' if float('$5') > 50 else 'other: $1')")
		fi
		per=$(python3 -c "print('%.3f' % (1000 * $8 / ($r * (1 + $DS))))")
		echo "$round $r $1 $3 $5 $8 $per $9" >> "$T/cap"
		printf "   3. capture${FIFO:+ (SCHED_FIFO)} %6s/s: %-18s ended %9s/s lateness p99 %8s ms; capture CPU %s s = %s s per 1,000 requests; simulator CPU %s s %s\n" \
			"$r" "$1" "$3" "$5" "$8" "$per" "$9" "${side:+(behind: $side)}"
		[ "$1" = valid ] || break
	done
	stop_sim
	round=$((round+1))
done

echo
echo "4. summary (medians over $REPEATS rounds)"
python3 - "$T/ceil" "$T/cap" "$DS" <<'PY'
import statistics as st, sys
ceil = [l.split() for l in open(sys.argv[1]) if l.strip()]
cap = [l.split() for l in open(sys.argv[2]) if l.strip()]
rate = st.median(float(c[0]) for c in ceil)
sim_per = st.median(1000 * float(c[2]) / float(c[1]) for c in ceil)
best, valid = {}, {}
for c in cap:
    if c[2] == "valid":
        rd, r = int(c[0]), float(c[1])
        valid.setdefault(rd, []).append((r, float(c[5])))
        if r > best.get(rd, (0, 0))[0]:
            best[rd] = (r, float(c[6]))
# the marginal cost: CPU between the two highest sustained rates of a round
# over the requests between them (what the fixed costs of a run, start-up,
# the drain and the writer's flushes, do not blur)
dur = float(sys.argv[3])
marg = []
for v in valid.values():
    if len(v) >= 2:
        (r0, c0), (r1, c1) = sorted(v)[-2:]
        marg.append(1000 * (c1 - c0) / ((r1 - r0) * (1 + dur)))
highest = st.median(b[0] for b in best.values()) if best else 0
per = st.median(b[1] for b in best.values()) if best else float("nan")
est = 1000 / per if per == per and per > 0 else float("nan")
print("   simulator ceiling with the cheapest client: %.0f requests/s (its CPU %.3f s per 1,000: %.0f/s on one full core)" % (rate, sim_per, 1000 / sim_per))
print("   capture, highest rate sustained: %.0f requests/s = %.2f of the simulator's ceiling" % (highest, highest / rate))
print("   capture CPU at that rate: %.3f s per 1,000 requests -> estimated ceiling on one full core %.0f requests/s" % (per, est))
print("   = %.1f x GuideLLM's reported ~1,000 requests/s per process; %.1f x measured on this machine" % (est / 1000, highest / 1000))
if marg:
    m = st.median(marg)
    print("   marginal capture CPU per request between the two highest sustained rates: %.3f s per 1,000 (%.0f/s on one core)" % (m, 1000 / m if m > 0 else float("nan")))
PY
