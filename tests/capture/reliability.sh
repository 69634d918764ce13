#!/usr/bin/env bash
# The reliability checks of docs/reliability.md, against tokentrace-sim:
#   faults   every simulator fault at concurrency 1 and 64: the capture
#            completes, every request the simulator saw is recorded once
#            (its ground-truth log counted), each fault with its cause;
#   restart  the server killed mid-run: the cell is failed, not done with
#            nothing; restarted and resumed, the run completes, finished
#            cells unchanged;
#   kills    N kill -9 of the capture at random moments (default 20), each
#            resumed: the run completes and every cell finished before the
#            kill reads back byte for byte the same;
#   secrets  an API key (given and in a launch command note) appears in no
#            file of the run and no output of any command in any format.
# Prints one line of figures per part (docs/reliability.md quotes them).
# usage: reliability.sh PART SIM CAPTURE TOKENTRACE WORKDIR [N]
set -u
part=$1 SIM=$2 CAP=$3 TT=$4 W=$5 N=${6:-20}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
SIMPID=
trap '[ -n "$SIMPID" ] && kill -9 "$SIMPID" 2>/dev/null; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# start_sim TAG [sim args...]: sets SIMPID and URL
start_sim() {
  local tag=$1; shift
  "$SIM" --port "${PORT:-0}" --max-runtime 300 "$@" > "sim-$tag.out" 2> "sim-$tag.err" &
  SIMPID=$!
  for _ in $(seq 200); do grep -q listening "sim-$tag.out" 2>/dev/null && break; sleep 0.05; done
  URL=$(sed -n 's/.*\(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' "sim-$tag.out")
  [ -n "$URL" ] || fail "the simulator did not start ($(cat "sim-$tag.err"))"
}
stop_sim() { [ -n "$SIMPID" ] && kill "${1:--TERM}" "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null; SIMPID=; }
# Every cell that is done, dumped one file each (the comparison's "before").
snapshot() { # snapshot RUN DIR
  mkdir -p "$2"
  python3 - "$1/manifest.json" <<'PY' | while read -r id; do "$TT" dump "$1" --cell "$id" --scrapes > "$2/$id" || echo "dump $id failed" >&2; done
import json, sys
for c in json.load(open(sys.argv[1]))["cells"]:
    if c["state"] in ("done", "over_capacity"):
        print(c["id"])
PY
}
same_cells() { # same_cells RUN DIR: every snapshot cell reads back identical and is still done
  local f id n=0
  for f in "$2"/*; do
    [ -e "$f" ] || continue
    id=$(basename "$f")
    "$TT" dump "$1" --cell "$id" --scrapes | cmp -s - "$f" || return 1
    n=$((n + 1))
  done
  echo "$n"
}
all_done() { # every cell done or over capacity
  python3 - "$1/manifest.json" <<'PY'
import json, sys
bad = [c["id"] + ":" + c["state"] for c in json.load(open(sys.argv[1]))["cells"]
       if c["state"] not in ("done", "over_capacity")]
sys.exit("not finished: " + " ".join(bad) if bad else 0)
PY
}
decode_tokens_ok() { # every done decode cell measured tokens
  "$TT" report "$1" -f csv | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
bad = [r["id"] for r in rows if r["phase"] == "decode" and r["status_key"] not in ("over_capacity", "not_run", "failed")
       and not (r["output_tokens"] and int(r["output_tokens"]) > 0)]
sys.exit("decode cells without tokens: " + " ".join(bad) if bad else 0)'
}
ARGS="--contexts 1K --max-tokens 32 --readiness 0.2s --readiness-timeout 3s"

case $part in
faults)
  FAULTS="500@every=11 429@every=13 503@every=17 reset@every=19 stall:2@every=23 malformed@every=29 error@every=31 slowheaders:1@every=37 nodone@every=41"
  fargs=()
  for f in $FAULTS; do fargs+=(--fault "$f"); done
  start_sim f --truth truth.bin "${fargs[@]}"
  "$CAP" "$URL" -o run $ARGS --concurrency 1,64 --duration 1s --request-timeout 1s -q 2> cap.err ||
    fail "capture under faults exited $?: $(cat cap.err)"
  stop_sim
  read -r sim_reqs sim_ends < <(python3 "$here/truth_count.py" truth.bin)
  "$TT" report run -f md > report.md 2> report.err || fail "report of the fault run: $(cat report.err)"
  "$TT" dump run > dump.jsonl || fail "dump of the fault run failed"
  python3 - dump.jsonl "$sim_reqs" <<'PY' || exit 1
import collections, json, sys
n, fails, keys, unanswered = 0, collections.Counter(), set(), 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    n += 1
    # sent but never answered (cut at the window's end before the server
    # read it): the simulator may not have logged it
    unanswered += r["http"] == 0 and not r["chunks"]
    fails[r["fail"]] += 1
    k = (r["cell"], r["role"], r["slot"], r["seq"])
    if k in keys:
        sys.exit("FAIL: request recorded twice: %s" % (k,))
    keys.add(k)
want = int(sys.argv[2])
# none lost: every request the simulator saw is recorded; the records it
# did not see are ones that never got an answer
if n < want or n - want > unanswered:
    sys.exit("FAIL: the simulator saw %d requests, the run records %d (%d never answered)" %
             (want, n, unanswered))
for f in ("http", "reset", "timeout", "malformed", "error_event", "no_done"):
    if not fails[f]:
        sys.exit("FAIL: no request failed with %s: %s" % (f, dict(fails)))
print("faults: %d fault kinds, concurrency 1 and 64: %d requests seen by the simulator, "
      "%d recorded (%d never answered), none twice; failures by cause %s" %
      (9, want, n, unanswered, dict(sorted(fails.items()))))
PY
  ;;
restart)
  start_sim r1
  PORT=${URL##*:}
  "$CAP" "$URL" -o run $ARGS --concurrency 1,2,4,8 --duration 1s -q 2> cap1.err &
  CP=$!
  # the server dies once decode x2 is running
  for _ in $(seq 400); do grep -q '"decode-1024x2"' run/manifest.json 2>/dev/null &&
    python3 -c 'import json,sys; sys.exit(0 if [c for c in json.load(open("run/manifest.json"))["cells"] if c["id"]=="decode-1024x2" and c["state"]=="running"] else 1)' 2>/dev/null && break; sleep 0.05; done
  sleep 0.3
  stop_sim -KILL
  wait "$CP"; st=$?
  [ "$st" = 1 ] || fail "capture with a dead server exited $st, want 1: $(cat cap1.err)"
  grep -q 'tokentrace-capture: error: ' cap1.err || fail "no program name on the error line: $(cat cap1.err)"
  decode_tokens_ok run || fail "a cell is done with no tokens after the server died"
  snapshot run before
  start_sim r2
  "$CAP" --resume run "$URL" -q 2> cap2.err || fail "resume after the restart exited $?: $(cat cap2.err)"
  stop_sim
  all_done run || fail "the resumed run is not complete"
  decode_tokens_ok run || fail "a resumed cell is done with no tokens"
  k=$(same_cells run before) || fail "a cell finished before the server died changed on resume"
  echo "restart: server killed mid-run and restarted: run completed, $k finished cells unchanged"
  ;;
kills)
  start_sim k
  ok=0 kept=0
  for i in $(seq "$N"); do
    rm -rf "run$i" "before$i"
    # the moment: 0.1 .. 2.5 s into a run of about 3 s
    delay=$(awk -v s="$RANDOM" 'BEGIN{srand(s); printf "%.2f", 0.1 + rand() * 2.4}')
    "$CAP" "$URL" -o "run$i" $ARGS --concurrency 1,2 --duration 0.4s -q 2> "cap$i.err" &
    CP=$!
    sleep "$delay"
    kill -9 "$CP" 2>/dev/null
    wait "$CP" 2>/dev/null
    if [ ! -e "run$i/manifest.json" ]; then
      # killed before the run existed: nothing to resume, start again
      ok=$((ok + 1)); continue
    fi
    "$TT" report "run$i" -f md > /dev/null 2>&1
    [ $? -le 3 ] || fail "trial $i: the killed run does not read (kill at ${delay}s)"
    snapshot "run$i" "before$i"
    timeout 60 "$CAP" --resume "run$i" -q 2> "res$i.err" || fail "trial $i: resume exited $? (kill at ${delay}s): $(cat "res$i.err")"
    all_done "run$i" || fail "trial $i: not complete after resume (kill at ${delay}s)"
    k=$(same_cells "run$i" "before$i") || fail "trial $i: a cell finished before the kill changed (kill at ${delay}s)"
    kept=$((kept + k)); ok=$((ok + 1))
    rm -rf "run$i" "before$i"
  done
  stop_sim
  [ "$ok" = "$N" ] || fail "only $ok of $N trials"
  echo "kills: $N kill -9 trials at random moments survived, each resumed to a complete run; $kept finished cells read back identical"
  ;;
secrets)
  KEY=tt-secret-$RANDOM-$RANDOM-e7
  start_sim s --api-key "$KEY"
  "$CAP" "$URL" -o run $ARGS --concurrency 1,2 --duration 0.5s --api-key "$KEY" \
    --note "launch_command=vllm serve m --api-key $KEY --port 8000" -q > cap.out 2> cap.err ||
    fail "capture with a key exited $?: $(cat cap.err)"
  TOKENTRACE_API_KEY=$KEY "$CAP" --resume run "$URL" -q >> cap.out 2>> cap.err || fail "resume with a key failed"
  stop_sim
  mkdir out
  n=0
  for f in term md csv json html; do "$TT" report run -f "$f" > "out/report.$f" 2>> out/stderr; n=$((n + 1)); done
  "$TT" report run -f pdf -o out/report.pdf 2>> out/stderr; n=$((n + 1))
  "$TT" dump run --scrapes > out/dump.jsonl 2>> out/stderr; n=$((n + 1))
  "$TT" chart run all -o out/charts-svg 2>> out/stderr; n=$((n + 1))
  "$TT" chart run all -o out/charts-png --as png 2>> out/stderr; n=$((n + 1))
  for k in heatmap throughput per-request tradeoff ttft tbt prefill timeline tbt-cdf; do
    "$TT" chart run "$k" -o "out/$k.svg" 2>> out/stderr; n=$((n + 1))
  done
  ( cd "$W" && tar --zstd -cf out/run.tar.zst run ) && "$TT" report out/run.tar.zst -f json > out/archive.json 2>> out/stderr
  n=$((n + 1))
  # PDF text may be compressed: look at its text too
  command -v pdftotext >/dev/null && pdftotext out/report.pdf out/report.pdf.txt
  if grep -rlaF -- "$KEY" run out cap.out cap.err; then fail "the API key was written (files above)"; fi
  grep -q '<redacted>' out/report.md || fail "the launch command's key was not shown redacted"
  echo "secrets: the key appears in no run file and in none of $n command outputs (report in 6 formats, dump, chart all svg/png, 9 chart kinds, an archive)"
  ;;
*) fail "unknown part '$part'" ;;
esac
