#!/usr/bin/env bash
# Import speed (issue 11): `tokentrace import` of a foreign file against
# `python3 -c 'import json; json.load(open(F))'` on the same file, both as
# a user runs them (a process each), REPS times, the median wall time of each.
# usage: import_bench.sh BUILD_DIR [FILE] [REPS]
set -eu
build=$1
file=${2:-$(dirname "$0")/../../fixtures/foreign/genai-perf/llama3-8b-concurrency1-profile_export.json}
reps=${3:-21}
tt=$build/src/cli/tokentrace
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ms() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(((e - s) / 1000)); }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for i in $(seq "$reps"); do rm -rf "$tmp/r"; ms "$tt" import "$file" -o "$tmp/r" -q; done | median > "$tmp/a"
for i in $(seq "$reps"); do ms python3 -c "import json; json.load(open('$file'))"; done | median > "$tmp/b"
for i in $(seq "$reps"); do ms python3 -c "pass"; done | median > "$tmp/c"
a=$(cat "$tmp/a") b=$(cat "$tmp/b") c=$(cat "$tmp/c")
echo "file: $file ($(wc -c < "$file") bytes), median of $reps"
echo "tokentrace import:         $((a / 1000)).$(printf %03d $((a % 1000))) ms"
echo "python3 json.load:         $((b / 1000)).$(printf %03d $((b % 1000))) ms (of which interpreter start $((c / 1000)).$(printf %03d $((c % 1000))) ms)"
awk -v a="$a" -v b="$b" 'BEGIN {printf "ratio import / python:     %.2f\n", a / b}'
