#!/usr/bin/env bash
# Tests against a real llama.cpp llama-server (label 'engine', docs/engines.md).
#
# usage: engine.sh CASE LLAMA_DIR CAPTURE TOKENTRACE WORKDIR
#
# LLAMA_DIR holds llama-server and tiny-random-llama.gguf (the project's
# copy: ../shared/engines/llama.cpp, its README says how both were made).
# The server listens on loopback only, on a port the kernel picks; it is
# stopped when the script ends, and every wait is bounded.  Exit 77 (ctest:
# skipped) with the reason when the server is absent or cannot run here.
#
# Cases:
#   matrix   a small matrix: no failed request over 200+ requests although
#            the server closes every connection after its reply; every
#            token the server counted (/metrics) is in the run; each
#            finished request matches the server's own timing of it (its
#            log); requests beyond the slots queue.
#   context  2 slots of 512 tokens: read from /props, a 512-token prompt's
#            cells over capacity before sending, with the arithmetic, 384 + 256
#            output tokens stop at 128 (finish length) and the cell reads
#            Short outputs; build_info is the engine version, and the
#            start line names it and the slots.
#   status   4 slots: 8 streams are Requests queued with and without
#            --metrics (without, the client's requests in flight against
#            the slots decide, and the reason says so); 4 streams are
#            Valid (docs/metrics.md M-status).
set -u
case_name=$1 llama_dir=$2 capture=$3 tokentrace=$4 work=$5
server=$llama_dir/llama-server
model=$llama_dir/tiny-random-llama.gguf

skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }

[ -x "$server" ] || skip "no llama-server at '$server'${TT_LLAMA_LOOKED:+ (none found in: $TT_LLAMA_LOOKED)}; configure with -DTT_LLAMA_DIR=DIR or TT_LLAMA_DIR=DIR in the environment"
[ -r "$model" ] || skip "no model at '$model'"
command -v python3 >/dev/null || skip "python3 is needed to read the server's answers"
grep -qw avx2 /proc/cpuinfo 2>/dev/null || skip "this CPU has no AVX2, which the llama-server build needs"
"$server" --version >/dev/null 2>&1 || skip "'$server --version' does not run here: $("$server" --version 2>&1 | tail -1)"

rm -rf "$work"
mkdir -p "$work"
server_pid=
stop_server() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
		server_pid=
	fi
}
trap stop_server EXIT

# start_server ARGS...: llama-server on 127.0.0.1, port picked by the
# kernel; sets $url once /health says the model is loaded (<= 60 s).
start_server() {
	stop_server
	: >"$work/server.log"
	timeout 600 "$server" -m "$model" -t 1 -tb 1 ${metrics---metrics} --host 127.0.0.1 --port 0 "$@" \
		>"$work/server.log" 2>&1 &
	server_pid=$!
	url=
	for _ in $(seq 600); do
		port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$work/server.log" | grep -o '[0-9]*$' | head -1)
		if [ -n "$port" ] && python3 - "http://127.0.0.1:$port/health" <<'PY'
import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=2).status == 200 else 1)
except Exception:
    sys.exit(1)
PY
		then
			url=http://127.0.0.1:$port
			return 0
		fi
		kill -0 "$server_pid" 2>/dev/null || skip "llama-server exited at start: $(tail -3 "$work/server.log")"
		sleep 0.1
	done
	fail "llama-server not ready within 60 s: $(tail -3 "$work/server.log")"
}

# capture RUN ARGS...: tokentrace-capture into $work/RUN, bounded in time;
# its start line and summary in $work/RUN.out.
capture() {
	local run=$1
	shift
	timeout 300 "$capture" "$url" -o "$work/$run" "$@" >"$work/$run.out" 2>&1 ||
		fail "capture $run exited $?: $(tail -5 "$work/$run.out")"
}

case $case_name in
matrix)
	# 4 slots of 1024 tokens; 6 requests at once on 4 slots must queue.
	start_server -c 4096 -np 4
	capture matrix --contexts 256 --concurrency 2,4,6 --duration 3s --max-tokens 32 \
		--readiness 0.5s --readiness-timeout 3s
	python3 - "$url/metrics" >"$work/metrics.txt" <<'PY' || fail "cannot read $url/metrics"
import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
PY
	"$tokentrace" dump "$work/matrix" >"$work/matrix.jsonl" || fail "dump failed"
	"$tokentrace" report "$work/matrix" --format json >"$work/matrix.json" || fail "report failed"
	python3 - "$work" <<'PY' || exit 1
import json, sys
work = sys.argv[1]
bad = []
reqs = [json.loads(l) for l in open(work + "/matrix.jsonl")]
reqs = [r for r in reqs if r.get("type") == "request"]
metrics = {}
for line in open(work + "/metrics.txt"):
    if line.startswith("llamacpp:"):
        name, value = line.split()[:2]
        metrics[name] = float(value)
errors = [r for r in reqs if r["finish"] == "error"]
print(f"{len(reqs)} requests, {len(errors)} failed")
if len(reqs) < 200:
    bad.append(f"only {len(reqs)} requests; the test needs 200 or more")
for r in errors[:5]:
    bad.append(f"request {r['cell']} slot {r['slot']} seq {r['seq']} failed: {r['fail']}: {r['error']}")
# The server counts the tokens of the requests it finished; a request cut
# at the window's end is not counted, unless the server had finished it
# when the cut came (all 32 tokens made): the run's finished requests plus
# k whole requests, k at most the number cut.
done = [r for r in reqs if r["finish"] in ("length", "stop")]
cut = [r for r in reqs if r["finish"] == "cut"]
ours = sum(c[1] for r in done for c in r["chunks"])
theirs = metrics.get("llamacpp:tokens_predicted_total", -1)
k = (theirs - ours) / 32
print(f"tokens: run {ours} in finished requests ({len(cut)} cut), server {theirs:.0f}")
if not (k == int(k) and 0 <= k <= len(cut)):
    bad.append(f"the run holds {ours} tokens of finished requests ({len(cut)} cut), "
               f"the server counted {theirs:.0f}")
# Every finished request: the tokens asked, and the prompt sent.
for r in done:
    n = sum(c[1] for c in r["chunks"])
    want = 1 if r["role"] in ("scout", "warmup") else 32
    if n != want or r["prompt_tokens"] != 256:
        bad.append(f"{r['cell']} slot {r['slot']} seq {r['seq']}: {n} tokens, prompt {r['prompt_tokens']}")
        break
# Per request, the server's own timings (its log's `print_timing` lines,
# one per finished task): as many tasks as finished requests, the same
# token counts, and the same decode speed as the run's arrival times give.
import re, statistics
evals = []
for line in open(work + "/server.log", errors="replace"):
    m = re.search(r"\|\s+eval time =\s+([0-9.]+) ms /\s+([0-9]+) tokens", line)
    if m and "prompt eval" not in line:
        evals.append((float(m.group(1)), int(m.group(2))))
tasks = sorted(n for _, n in evals)
mine = sorted(sum(c[1] for c in r["chunks"]) for r in done)
if len(tasks) - len(mine) != k or sorted(mine + [32] * int(k)) != tasks:
    bad.append(f"the server's log has {len(evals)} finished tasks with "
               f"{sum(n for _, n in evals)} tokens, the run {len(done)} requests with {ours}")
theirs_s = [(n - 1) / (ms / 1e3) for ms, n in evals if n == 32 and ms > 0]
ours_s = []
for r in done:
    if r["role"] == "measured" and len(r["chunks"]) == 32:
        ours_s.append(31 / ((r["chunks"][-1][0] - r["chunks"][0][0]) / 1e9))
if not theirs_s or not ours_s:
    bad.append("no per-request speeds to compare")
else:
    ratio = statistics.median(ours_s) / statistics.median(theirs_s)
    print(f"per-request tok/s, median: run {statistics.median(ours_s):.1f}, "
          f"server {statistics.median(theirs_s):.1f}, ratio {ratio:.3f}")
    if abs(ratio - 1) > 0.1:
        bad.append(f"per-request speed: the run's median is {ratio:.3f} x the server's")
rep = json.load(open(work + "/matrix.json"))
status = {c["id"]: c["status"] for c in rep["cells"]}
print("statuses:", status)
for cell, want in (("decode-256x2", "Valid"), ("decode-256x4", "Valid"),
                   ("decode-256x6", "Requests queued")):
    if status.get(cell) != want:
        bad.append(f"{cell}: status {status.get(cell)!r}, want {want!r}")
for b in bad:
    print("FAILED:", b)
sys.exit(1 if bad else 0)
PY
	;;
context)
	start_server -c 1024 -np 2
	capture context --contexts 384,512 --concurrency 2 --duration 2s --max-tokens 256 \
		--readiness 0.3s --readiness-timeout 3s
	grep -q "llamacpp b0-unknown with /metrics, model '.*', KV capacity unknown, 2 slots of 512 tokens," \
		"$work/context.out" || fail "start line: $(head -1 "$work/context.out")"
	"$tokentrace" dump "$work/context" >"$work/context.jsonl" || fail "dump failed"
	"$tokentrace" report "$work/context" --format json >"$work/context.json" || fail "report failed"
	python3 - "$work" <<'PY' || exit 1
import json, sys
work = sys.argv[1]
bad = []
m = json.load(open(work + "/context/manifest.json"))
print("server:", m["server"], "model:", {k: v for k, v in m["model"].items() if k != "id"})
if m["model"].get("slot_context") != 512 or m["server"].get("slots") != 2:
    bad.append(f"slots read as {m['server'].get('slots')} x {m['model'].get('slot_context')}, want 2 x 512")
if not m["server"].get("engine_version"):
    bad.append("no engine version (build_info)")
cells = {c["id"]: c for c in m["cells"]}
for cid in ("prefill-512", "decode-512x2"):
    c = cells[cid]
    if c["state"] != "over_capacity" or "512 prompt tokens >= slot context 512" not in c.get("reason", "") \
            or c.get("trace"):
        bad.append(f"{cid}: {c['state']} {c.get('reason')!r} trace {c.get('trace')!r}")
c = cells["decode-384x2"]
want = "384 prompt + 256 output tokens = 640 > slot context 512: at most 128 output tokens per request"
if c["state"] != "done" or c.get("reason") != want:
    bad.append(f"decode-384x2: {c['state']} {c.get('reason')!r}")
reqs = [json.loads(l) for l in open(work + "/context.jsonl")]
reqs = [r for r in reqs if r.get("type") == "request"]
fails = [r for r in reqs if r["finish"] == "error"]
if fails:
    bad.append(f"{len(fails)} requests failed, e.g. {fails[0]['error']}")
ended = [r for r in reqs if r["cell"] == "decode-384x2" and r["role"] == "measured"
         and r["finish"] in ("stop", "length")]
if not ended:
    bad.append("no measured request of decode-384x2 ended")
for r in ended:
    n = sum(c[1] for c in r["chunks"])
    if r["finish"] != "length" or n != 128:
        bad.append(f"decode-384x2 request: finish {r['finish']}, {n} tokens; want length, 128")
        break
cut = [r for r in reqs if r["finish"] == "cut"]
if any(r["prompt_tokens"] != 384 for r in cut):
    bad.append("a cut request does not record the 384 prompt tokens it asked for")
rep = {c["id"]: c for c in json.load(open(work + "/context.json"))["cells"]}
if rep["decode-512x2"]["status"] != "Over capacity":
    bad.append(f"decode-512x2: {rep['decode-512x2']['status']!r}, want 'Over capacity'")
f = rep["decode-384x2"]
print("decode-384x2:", f["status"], "-", f["status_reason"])
if f["status"] != "Short outputs" or f["short_outputs"] != len(ended):
    bad.append(f"decode-384x2: {f['status']!r}, {f['short_outputs']} short; want Short outputs, {len(ended)}")
for b in bad:
    print("FAILED:", b)
sys.exit(1 if bad else 0)
PY
	;;
status)
	for metrics in --metrics ""; do
		name=status${metrics:+-metrics}
		start_server -c 16384 -np 4
		capture "$name" --contexts 256 --concurrency 4,8 --duration 3s --max-tokens 32 \
			--readiness 0.5s --readiness-timeout 3s
		"$tokentrace" report "$work/$name" --format json >"$work/$name.json" ||
			fail "report $name failed"
		python3 - "$work/$name.json" "$metrics" <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
with_metrics = sys.argv[2] == "--metrics"
bad = []
cells = {c["id"]: c for c in rep["cells"]}
for cid, want in (("decode-256x4", "Valid"), ("decode-256x8", "Requests queued")):
    c = cells[cid]
    print(f"{'with' if with_metrics else 'without'} --metrics, {cid}: {c['status']}: "
          f"{c['status_reason']} (median TTFT {c['ttft_ms']['p50']:.0f} ms)")
    if c["status"] != want:
        bad.append(f"{cid}: {c['status']!r}, want {want!r}")
    if c["server"]["available"] != with_metrics:
        bad.append(f"{cid}: server metrics available: {c['server']['available']}")
r8 = cells["decode-256x8"]["status_reason"]
if "8 requests in flight on the server's 4 slots" not in r8:
    bad.append(f"decode-256x8: the reason does not give the slots: {r8!r}")
if not with_metrics and "no server metrics: judged from the client" not in r8:
    bad.append(f"decode-256x8: the reason does not say the client judged: {r8!r}")
for b in bad:
    print("FAILED:", b)
sys.exit(1 if bad else 0)
PY
	done
	;;
*)
	fail "unknown case '$case_name'"
	;;
esac
