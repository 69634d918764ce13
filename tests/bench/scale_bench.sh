#!/usr/bin/env bash
# Scale benchmark (issue 20 points 4, 5 and 9): each case at 1x and 4x
# input, its CPU time (user + system: on a shared machine wall time follows
# the load, 50 s for what took 22 s a minute later), the growth from 1x to
# 4x (linear: about 4), and the peak RSS per input byte of the imports.
# Inputs come from scale_gen.py.
# usage: scale_bench.sh BUILD_DIR [SCALE]   (SCALE 0.25: quarter sizes, quick)
set -eu
build=$1; scale=${2:-1}
tt=$build/src/cli/tokentrace
gen=$(dirname "$0")/scale_gen.py
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n() { awk -v a="$1" -v s="$scale" 'BEGIN {printf "%d", a * s}'; }
# run CMD...: "cpu_seconds peak_kb" of one run
run() { /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err" ||
  { echo "failed: $* $(cat "$tmp/err")" >&2; exit 1; }
  awk '{printf "%.2f %s\n", $1 + $2, $3}' "$tmp/time"; }
printf '%-34s %10s %8s %10s %8s %7s %9s\n' case "1x" "cpu s" "4x" "cpu s" growth "RSS/byte"
line() { # name size1 t1 size4 t4 rss4_kb bytes4
  awk -v n="$1" -v a="$2" -v t1="$3" -v b="$4" -v t4="$5" -v r="$6" -v by="$7" 'BEGIN {
    printf "%-34s %10s %8.2f %10s %8.2f %7.2f %9s\n", n, a, t1, b, t4, (t1 > 0 ? t4 / t1 : 0),
      (by > 0 ? sprintf("%.1f", r * 1024 / by) : "-") }'
}
import_case() { # name kind n1 ext
  local name=$1 kind=$2 n1 n4 f1 f4 r1 r4
  n1=$(n "$3"); n4=$((n1 * 4))
  f1=$tmp/$kind-$n1.$4; f4=$tmp/$kind-$n4.$4
  python3 "$gen" "$kind" "$n1" "$f1"; python3 "$gen" "$kind" "$n4" "$f4"
  r1=$(run "$tt" import "$f1" -o "$tmp/r1" -q); rm -rf "$tmp/r1"
  r4=$(run "$tt" import "$f4" -o "$tmp/r4" -q); rm -rf "$tmp/r4"
  line "import $name" "$n1" "${r1% *}" "$n4" "${r4% *}" "${r4#* }" "$(wc -c < "$f4")"
  rm -f "$f1" "$f4"
}
# llm-inference-bench matrices: N x N cells, so 2N x N... 1x 150x150, 4x 300x300
n1=$(n 150); n4=$((n1 * 2))
python3 "$gen" lib_json "$n1" "$tmp/m1.json"; python3 "$gen" lib_json "$n4" "$tmp/m4.json"
r1=$(run "$tt" import "$tmp/m1.json" -o "$tmp/m1" -q); r4=$(run "$tt" import "$tmp/m4.json" -o "$tmp/m4" -q)
line "import llm-inference-bench matrix" "${n1}x$n1" "${r1% *}" "${n4}x$n4" "${r4% *}" 0 0
import_case "vLLM detailed (requests)" vllm 12500 json
import_case "AIPerf, no summary (records)" aiperf 20000 jsonl
import_case "GuideLLM rate (requests)" guidellm 5000 json
import_case "GenAI-Perf rate (requests)" genai 5000 json
# report of the matrices' runs: cells 1x = n1^2, 4x = n4^2
for fmt in csv md; do
  r1=$(run "$tt" report "$tmp/m1" -f $fmt -o "$tmp/o1.$fmt"); r4=$(run "$tt" report "$tmp/m4" -f $fmt -o "$tmp/o4.$fmt")
  line "report -f $fmt (cells)" "$((n1 * n1))" "${r1% *}" "$((n4 * n4))" "${r4% *}" 0 0
done
# PDF of a run with many notes of ~700 bytes each
k1=$(n 1875); k4=$((k1 * 4))
for k in "$k1" "$k4"; do
  cp -r "$tmp/m1" "$tmp/notes$k"
  python3 - "$tmp/notes$k/manifest.json" "$k" <<'PY'
import json, sys
p, k = sys.argv[1], int(sys.argv[2])
m = json.load(open(p))
m["cells"] = m["cells"][:4]
m["notes"] = [{"key": "note%05d" % i, "value": ("word%d " % i) * 100} for i in range(k)]
json.dump(m, open(p, "w"))
PY
done
r1=$(run "$tt" report "$tmp/notes$k1" -f pdf -o "$tmp/n1.pdf"); r4=$(run "$tt" report "$tmp/notes$k4" -f pdf -o "$tmp/n4.pdf")
line "report -f pdf (notes)" "$k1" "${r1% *}" "$k4" "${r4% *}" 0 0
