#!/usr/bin/env bash
# Broken variants of every format (tests/fuzz/corpus/import-*, written by
# make_import_corpus.py): each fails with exit 1 and a message naming the
# file and where (a member path or a line), nothing is left behind; the
# valid and tolerated ones import; a newer schema imports with a warning
# (exit 3).  Then huge arrays, generated here.
# usage: test_import_broken.sh TOKENTRACE CORPUS_DIR
set -u
tt=$1; corpus=$2; fail=0; n=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp/t; mkdir -p "$TMPDIR"
check() { n=$((n + 1)); if "$@"; then :; else echo "FAIL: $*"; fail=$((fail + 1)); fi; }
declare -A from=([lib_json]=llm-inference-bench [lib_report]=llm-inference-bench-report
  [vllm]=vllm-bench [genai_perf]=genai-perf [aiperf]=aiperf [guidellm]=guidellm)

for dir in "$corpus"/import-*; do
  name=${dir##*/import-}
  for f in "$dir"/*; do
    base=${f##*/}
    case $base in
      # make_hostile_seeds.py's: test_import_hostile holds each to "refused
      # naming the member and the limit, or imported and readable"
      hostile-*) continue ;;
      valid.*|raw-valid.*|early.*|seed.*|aggregate.*|prefill.*|rate*|newer-schema.*|no-start-times.*|missing-start.*) want=0 ;;
      garbage-sse.*) want=0 ;; # imported; the request is failed as malformed (checked below)
      newer.*) want=3 ;;
      *) want=1 ;;
    esac
    out=$tmp/run-$name-$base
    "$tt" import --from "${from[$name]}" "$f" -o "$out" -q 2> "$tmp/err"; rc=$?
    n=$((n + 1))
    if [ "$rc" != "$want" ]; then
      echo "FAIL: $name/$base: exit $rc, want $want: $(cat "$tmp/err")"; fail=$((fail + 1)); continue
    fi
    if [ "$want" = 1 ]; then
      # The file and a position: a member path, a line, or 'empty'.
      check grep -qF "'$f'" "$tmp/err"
      check grep -qE "'$f'(: (line [0-9]+|[a-z_]+(\[[0-9]+\])?[.:[]|[a-z_]+\[|[a-z_]+: |JSON ends early|a JSON object|no row)| is empty)" "$tmp/err"
      check test ! -e "$out"
    else
      check test -f "$out/manifest.json"
      check "$tt" report "$out" --format csv -o /dev/null
    fi
    [ "$want" = 3 ] && check grep -q "newer" "$tmp/err"
  done
done
# No half-written run and no temporary directory left anywhere.
check test -z "$(ls "$tmp" | grep importing)"
check test -z "$(ls "$TMPDIR")"
# The malformed SSE event makes its request failed, as a capture would.
"$tt" dump "$tmp/run-genai_perf-garbage-sse.json" | grep -q '"fail":"malformed"'
check test $? = 0

# Huge arrays: one vLLM request of 300,000 chunk gaps imports whole; a
# GenAI-Perf request with 300,000 timestamps but fewer outputs fails at once.
python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
n = 300000
json.dump({"completed": 1, "total_input_tokens": 8, "max_concurrency": 1, "input_lens": [8],
           "output_lens": [n + 1], "ttfts": [0.05], "itls": [[0.001] * n], "start_times": [5.0],
           "errors": [""]}, open(f"{t}/huge-vllm.json", "w"))
json.dump({"experiments": [{"experiment": {"mode": "concurrency", "value": 1}, "requests": [
    {"timestamp": 1000, "response_timestamps": list(range(2000, 2000 + n)),
     "response_outputs": [{"response": "data: {}\n\n"}] * (n - 1)}]}]}, open(f"{t}/huge-genai.json", "w"))
PY
check "$tt" import "$tmp/huge-vllm.json" -o "$tmp/huge-vllm" -q
"$tt" report "$tmp/huge-vllm" --format json > "$tmp/huge.json"
check python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cells'][0]; assert c['output_tokens'] == 300001 and c['chunks'] == 300001, c" "$tmp/huge.json"
"$tt" import "$tmp/huge-genai.json" -o "$tmp/huge-genai" -q 2> "$tmp/err"
check test $? = 1
check grep -qF "experiments[0].requests[0]: 300000 response_timestamps but 299999 response_outputs" "$tmp/err"
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
