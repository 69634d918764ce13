#!/bin/bash
# A history of many runs (issue 28; docs/trend.md "Cost"): prints figures,
# asserts nothing.  N synthetic runs of the seed matrix
# (fixtures/profiles/seed-matrix.csv, 46 rows) at --scale S, each with its
# own seed and a build note; then, each under nice:
#   report   `tokentrace report RUN -f json` on every run, one after another
#            (the analysis speed of report: the floor)
#   trend 1  `tokentrace trend DIR --key build -f json`, the catalog empty
#            (every run read, analysed, hashed and stored)
#   trend 2  the same again, every run from the catalog
#   no cat.  `--no-catalog`: every run analysed, nothing hashed or stored
# Each line: wall and CPU seconds (user + sys) and peak memory.  The JSON of
# trend 1, trend 2 and no cat. must be the same bytes (checked: a mismatch
# is printed).
#
# usage: tests/bench/trend_history.sh BUILD_DIR [N] [S] [WORK_DIR]
#        (N default 1000, S default 1: seed scale, 12 MB a run)
set -eu
B=$(cd "$1" && pwd)
N=${2:-1000}
S=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
tt="$B/src/cli/tokentrace"
W=${4:-$(mktemp -d)}
mkdir -p "$W"
measure() { # label, command...
	local label=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$W/t" nice -n 10 "$@" >/dev/null
	read -r wall u s kb <"$W/t"
	printf '%-10s %8.2f s wall %8.2f s CPU %8.0f MB\n' "$label" "$wall" \
		"$(echo "$u + $s" | bc)" "$(echo "$kb / 1024" | bc)"
}
mkdir -p "$W/runs"
for i in $(seq 1 "$N"); do
	[ -d "$W/runs/r$i" ] || nice -n 10 "$tt" synth -q --profile "$here/../../fixtures/profiles/seed-matrix.csv" \
		-o "$W/runs/r$i" --seed "$i" --scale "$S" --note "build=1.$i"
done
rm -f "$W/runs/tokentrace-catalog.sqlite"*
echo "trend history: $N runs of the seed matrix at scale $S ($(du -sh "$W/runs" | cut -f1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
report_all() {
	for r in "$W"/runs/r*; do "$tt" report "$r" -f json -o /dev/null || exit 1; done
}
export -f report_all
export tt W
measure "report" bash -c report_all
measure "trend 1" "$tt" trend "$W/runs" --key build -f json -o "$W/t1.json" -q
measure "trend 2" "$tt" trend "$W/runs" --key build -f json -o "$W/t2.json" -q
measure "no cat." "$tt" trend "$W/runs" --key build -f json -o "$W/t0.json" -q --no-catalog
cmp "$W/t1.json" "$W/t2.json" || echo "MISMATCH: trend 1 and trend 2 differ"
cmp "$W/t1.json" "$W/t0.json" || echo "MISMATCH: trend 1 and --no-catalog differ"
echo "catalog: $(du -h "$W/runs/tokentrace-catalog.sqlite" | cut -f1)"
