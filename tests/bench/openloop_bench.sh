#!/bin/sh
# Open-loop benchmark (docs/capture.md "Open-loop load"): prints figures,
# asserts nothing.
#
# usage: tests/bench/openloop_bench.sh BUILD_DIR [DURATION] [RATES]
#
# 1. Holding the schedule: tokentrace-capture --rates 2000/s against
#    tokentrace-sim (16-token prompts, 4-token outputs, up to 1024 requests
#    at once, 0.5 ms steps: far below the simulator's capacity), the send
#    lateness (send - due) p50, p99 and max over the window's requests.
# 2. The highest rate one capture process sustains: the same at each of
#    RATES (default 1000 2000 4000 8000 16000 32000 requests/s) until a cell
#    is not sustained; for each, the capture's CPU (user + sys over wall, from
#    /usr/bin/time) and which side fell behind: the client (lateness p99 >
#    50 ms) or the server (ended < 0.9 x due).  The result is the highest
#    Valid rate and its ratio to GuideLLM's reported single-process limit
#    (about 1,000 requests/s, REFERENCE.md section 2).
#
# The simulator is pinned to CPU 0 and the capture to CPU 1 (2 CPUs or
# more).  RT=1 (the default when chrt can) runs the capture SCHED_FIFO, so
# the lateness is the capture's, not the other programs' time slices on a
# shared machine; RT=0 shows the difference.  Build with
# -DCMAKE_BUILD_TYPE=Release.
set -eu
B=$(cd "$1" && pwd)
D=${2:-4s}
RATES=${3:-"1000 2000 4000 8000 16000 32000"}
T=$(mktemp -d)
SRV=
trap 'kill $SRV 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
cap="$B/src/capture/tokentrace-capture"
sim="$B/src/sim/tokentrace-sim"
tt="$B/src/cli/tokentrace"
ON0= ON1=
if [ "$(nproc)" -ge 2 ]; then ON0="taskset -c 0" ON1="taskset -c 1"; fi
RT=${RT:-auto}
FIFO=
if [ "$RT" != 0 ] && chrt -f 50 true 2>/dev/null; then FIFO="chrt -f 50"; fi
echo "openloop bench: window $D, capture ${FIFO:+SCHED_FIFO }${ON1:+on CPU 1}, simulator ${ON0:+on CPU 0}; load: $(cut -d' ' -f1-3 /proc/loadavg)"

start_sim() {
	$ON0 "$sim" --port 0 --max-runtime 600 --max-num-seqs 1024 --step-base-ms 0.5 \
		--per-seq-ms 0 --per-ctx-token-ns 0 --prefill-tok-s 100000000 > "$T/sim.out" 2>/dev/null &
	SRV=$!
	i=0
	while ! grep -q listening "$T/sim.out" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
	URL=$(sed -n 's/.*listening on //p' "$T/sim.out")
}

# RATE -> prints "status due ended late_p50 late_p99 late_max cpu_share"
one() {
	rm -rf "$T/run"
	$FIFO $ON1 /usr/bin/time -o "$T/time" -f "%U %S %e" "$cap" "$URL" -o "$T/run" \
		--contexts 16 --rates "$1/s" --max-tokens 4 --duration "$D" --warmup 1s \
		--drain 2s --scrape-interval 0 --request-timeout 10s -q || true
	"$tt" report "$T/run" --format json > "$T/r.json" || true
	python3 - "$T/r.json" "$T/time" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except ValueError:
    print("no_run nan nan nan nan nan nan nan")  # the capture failed: its message is above
    sys.exit(0)
u, s, w = (float(x) for x in open(sys.argv[2]).read().split()[-3:])
for c in j["cells"]:
    if c["phase"] == "rate":
        o = c["open_loop"]
        f = lambda v: "nan" if v is None else "%.3f" % v
        print(c["status_key"], f(o["scheduled_req_s"]), f(o["achieved_req_s"]),
              f(o["lateness_ms"]["p50"]), f(o["lateness_p99_ms"]), f(o["lateness_ms"]["max"]),
              "%.3f" % ((u + s) / w), "%.2f" % (u + s))
PY
}

start_sim
echo
echo "1. holding the schedule at 2000 requests/s"
set -- $(one 2000)
echo "   status $1; due $2/s, ended $3/s; send lateness p50 $4 ms, p99 $5 ms, max $6 ms;"
echo "   capture CPU $8 s = $7 of one core over the run (warm-up, window, drain)"

echo
echo "2. the highest rate one capture process sustains"
best=0
for r in $RATES; do
	set -- $(one "$r")
	side=
	if [ "$1" != valid ]; then
		# the server first: one that stops accepting connections also
		# makes sends late (a send is when the request left on a connection)
		side=$(python3 -c "print('server' if float('$3') < 0.9 * float('$2') else 'client' if float('$5') > 50 else 'other: $1')")
	fi
	printf "   %6s/s: %-18s due %9s/s ended %9s/s lateness p99 %8s ms; capture CPU %s of a core %s\n" \
		"$r" "$1" "$2" "$3" "$5" "$7" "${side:+(behind: $side)}"
	if [ "$1" = valid ]; then best=$r; else break; fi
done
echo "   highest rate sustained: $best requests/s = $(python3 -c "print('%.1f' % ($best / 1000))") x GuideLLM's ~1,000 requests/s per process"
