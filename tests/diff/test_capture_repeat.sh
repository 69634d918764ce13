#!/usr/bin/env bash
# tokentrace-capture --repeat N against the simulator (docs/capture.md
# "Repeats"): N runs of the same matrix in RUN/rep-1..N, measured cell by
# cell with each cell's repeats in a row, which the simulator's truth log
# confirms (every request of cell i arrives before any of cell i+1, and
# each repeat's window of a cell holds requests of that cell, in repeat
# order); `tokentrace diff` reads the set as its runs; --resume after an
# interruption finishes every repeat; the option's errors.
# usage: test_capture_repeat.sh SIM CAPTURE TOKENTRACE WORKDIR
set -uo pipefail
SIM=$1 CAP=$2 TT=$3 W=$4
rm -rf "$W"
mkdir -p "$W"
cd "$W"
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
start_sim() {
	"$SIM" --port 0 --max-runtime 90 --truth "$1" > sim.out 2>sim.err &
	SIMPID=$!
	for _ in $(seq 100); do grep -q listening sim.out 2>/dev/null && break; sleep 0.05; done
	URL=$(sed -n 's/.*\(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' sim.out)
	[ -n "$URL" ] || fail "the simulator did not start"
}
stop_sim() { kill "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null; SIMPID=; }
ARGS="--contexts 1K --concurrency 1,2 --duration 1s --max-tokens 32 --readiness 0.2s --readiness-timeout 5s -q"

# 1. three repeats, the truth log's order
start_sim truth1.log
"$CAP" "$URL" -o set --repeat 3 $ARGS || fail "capture --repeat 3 failed"
stop_sim
for k in 1 2 3; do
	[ -f "set/rep-$k/manifest.json" ] || fail "no set/rep-$k"
	[ -f "set/rep-$k/capture-info.json" ] || fail "no set/rep-$k/capture-info.json"
done
[ -e set/rep-4 ] && fail "a fourth repeat"
python3 - set truth1.log 3 <<'PY' || exit 1
import json, struct, sys
set_dir, truth, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
reps = [json.load(open("%s/rep-%d/manifest.json" % (set_dir, k + 1))) for k in range(n)]
info = [json.load(open("%s/rep-%d/capture-info.json" % (set_dir, k + 1))) for k in range(n)]
ids = [c["id"] for c in reps[0]["cells"]]
for m in reps:
    assert [c["id"] for c in m["cells"]] == ids, "the repeats' matrices differ"
    assert all(c["state"] == "done" for c in m["cells"]), [c["state"] for c in m["cells"]]
origin = int(info[0]["origin_monotonic_ns"])
assert all(int(i["origin_monotonic_ns"]) == origin for i in info), "time origins differ"
# the measured order, by each cell's start: cell 1 rep 1, cell 1 rep 2, ...
order = sorted((m["cells"][i]["start_ns"], i, k) for k, m in enumerate(reps)
               for i in range(len(ids)))
want = [(i, k) for i in range(len(ids)) for k in range(n)]
assert [(i, k) for _, i, k in order] == want, "not cell by cell: %s" % order
# the truth log: generation requests with their client ids
data = open(truth, "rb").read()
assert data[:8] == b"TTSIMTR1"
p, reqs = 16, []
while p < len(data):
    t = data[p]
    if t == 1:
        sim_id, arr = struct.unpack_from("<QQ", data, p + 1)
        (idlen,) = struct.unpack_from("<H", data, p + 25)
        cid = data[p + 27:p + 27 + idlen].decode()
        reqs.append((arr, cid))
        p += 27 + idlen
    elif t == 2:
        (cnt,) = struct.unpack_from("<I", data, p + 21)
        p += 25 + 8 * cnt
    elif t == 3:
        p += 32
    elif t == 4:  # QUEUE (truth log version 2, formats/sim-truth-log.md)
        p += 21
    else:
        break
cells = [int(cid.split("-")[1]) for _, cid in sorted(reqs) if cid.startswith("tt-")]
assert cells, "no requests of the capture in the truth log"
assert cells == sorted(cells), "requests of a cell after a later cell's"
# each repeat's window of each decode cell holds requests of that cell
for i, cid in enumerate(ids):
    if not cid.startswith("decode"):
        continue
    prev_end = None
    for k in range(n):
        c = reps[k]["cells"][i]
        ws, we = origin + c["window_start_ns"], origin + c["window_end_ns"]
        inside = [a for a, x in reqs if x.startswith("tt-%d-" % i) and ws <= a < we]
        assert inside, "no request of %s rep %d in its window" % (cid, k + 1)
        assert prev_end is None or ws >= prev_end, "%s: rep %d before rep %d" % (cid, k + 1, k)
        prev_end = we
print("ok: %d requests, %d cells x %d repeats in order" % (len(reqs), len(ids), n))
PY

# 2. diff reads a set as its runs
"$TT" diff set set -f json -o self.json -q || fail "diff of a set failed"
python3 -c "
import json; d = json.load(open('self.json'))
assert d['method']['runs_base'] == 3 and d['method']['runs_candidate'] == 3, d['method']
assert d['method']['resampling'] == 'hierarchical'
assert len(d['base']['runs']) == 3
" || fail "diff did not read the set's 3 runs"

# 3. interrupted, then resumed: every repeat finished
start_sim truth2.log
"$CAP" "$URL" -o set2 --repeat 2 $ARGS &
CP=$!
sleep 2.5
kill -INT $CP
wait $CP
st=$?
[ "$st" = 130 ] || fail "interrupted capture: exit $st, want 130"
python3 -c "
import json
m = [json.load(open('set2/rep-%d/manifest.json' % k)) for k in (1, 2)]
assert any(c['state'] != 'done' for x in m for c in x['cells'])
" || fail "the interruption came too late to test --resume"
"$CAP" --resume set2 -q 2> resume.err || fail "resume failed: $(cat resume.err)"
stop_sim
python3 -c "
import json
for k in (1, 2):
    m = json.load(open('set2/rep-%d/manifest.json' % k))
    assert all(c['state'] == 'done' for c in m['cells']), (k, [(c['id'], c['state']) for c in m['cells']])
" || fail "after --resume not every repeat is done"

# 4. errors
"$CAP" --resume set2 --repeat 3 -q 2> err4 && fail "--repeat 3 on a set of 2 accepted"
grep -q "contradicts the set" err4 || fail "no message for --repeat 3 on a set of 2: $(cat err4)"
"$CAP" http://127.0.0.1:9 -o set3 --repeat 2 --rates 1/s --rate-sweep -q 2> err5 && fail "--repeat with --rate-sweep accepted"
grep -q "does not combine" err5 || fail "no message for --repeat with --rate-sweep: $(cat err5)"
"$CAP" http://127.0.0.1:9 -o set --repeat 2 -q 2> err7 && fail "--repeat into an existing set accepted"
grep -q "already exists" err7 || fail "no message for -o of an existing set: $(cat err7)"
[ -e set/rep-1/rep-1 ] && fail "a set written inside a run"
"$CAP" http://127.0.0.1:9 -o set3 --repeat 65 -q 2> err6 && fail "--repeat 65 accepted"
grep -q "at most 64" err6 || fail "no message for --repeat 65: $(cat err6)"
echo "ok: capture --repeat"
