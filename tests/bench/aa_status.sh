#!/bin/bash
# Quick A/A of the merged code on real simulator captures (on demand, prints
# figures, asserts nothing; about 3 minutes): N captures of 1K x {1,4}, 2 s
# windows, one after another; pairs (2i, 2i+1) diffed at one run per side;
# prints the verdicts of each diff and every decode cell's status.
# usage: tests/bench/aa_status.sh BUILD_DIR [N]   (N default 20, even)
B=$(cd "${1:?build dir}" && pwd); tt=$B/src/cli/tokentrace; cap=$B/src/capture/tokentrace-capture; sim=$B/src/sim/tokentrace-sim
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; N=${2:-20}
nice -n 5 $sim --port 0 --max-runtime 900 > $W/sim.out 2>&1 & SRV=$!
for _ in $(seq 50); do URL=$(grep -o 'http://[0-9.:]*' $W/sim.out) && [ -n "$URL" ] && break; sleep 0.1; done
for i in $(seq 0 $((N-1))); do
  timeout 120 $cap "$URL" -o $W/r$i --contexts 1K --concurrency 1,4 --duration 2s --readiness 0.5s --max-tokens 128 -q || echo "capture $i: $?"
done
kill $SRV
verd=0; stch=0
for i in $(seq 0 2 $((N-2))); do
  j=$((i+1))
  $tt diff $W/r$i $W/r$j --format json -o $W/d$i.json -q 2>/dev/null
  python3 - $W/d$i.json <<'PY' >> $W/summary.txt
import json,sys
d=json.load(open(sys.argv[1]))
s=json.dumps(d)
v=sum(s.count('"verdict": "%s"'%k) for k in ("faster","slower"))
print(sys.argv[1], "verdicts", v)
PY
  for r in r$i r$j; do $tt report $W/$r --format json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin); print('$r', ' '.join(c['id']+'='+c['status_key'] for c in d['cells'] if c['phase']=='decode'))" >> $W/status.txt; done
done
cat $W/summary.txt; cat $W/status.txt
