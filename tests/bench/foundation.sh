#!/usr/bin/env bash
# Foundation benchmark: a seed-scale synthetic run (39 decode cells, ~7
# million output tokens) and one ten times larger (every window 10x as long),
# each analysed in its own process so peak memory can be compared.
#   foundation.sh [BUILD] [REPS]   REPS: bench_analyze's repeats (default 3;
#   each time printed is the fastest of them)
set -euo pipefail
build=${1:-build}
reps=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tt-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tt=$build/src/cli/tokentrace
for scale in 1 10; do
  /usr/bin/time -f "synth x$scale: %e s, peak %M KB" \
    "$tt" synth --profile "$root/fixtures/profiles/seed-matrix.csv" -o "$tmp/x$scale" --scale "$scale" -q
  echo "--- seed profile, windows x$scale"
  "$build/tests/bench/bench_analyze" "$tmp/x$scale" "$reps"
  /usr/bin/time -f "tokentrace report (md) x$scale: %e s wall, peak %M KB" \
    "$tt" report "$tmp/x$scale" --format md -o "$tmp/r$scale.md"
  rm -rf "$tmp/x$scale"
done
