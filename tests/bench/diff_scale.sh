#!/bin/bash
# Diff at scale (issue 20.9; docs/diff.md "Cost"): prints figures, asserts
# nothing.  A self-diff of N cells at 1x and 4x, and of 100,000 cells.
#
# usage: tests/bench/diff_scale.sh BUILD_DIR [N]      (N default 20000)
#
# The runs come from tests/bench/diff_scale_gen.py: N decode cells of
# reported figures (as `tokentrace import` writes them: no traces), so the
# time is the diff's own per-cell work (matching cells, statuses,
# comparisons, rendering) and the analysis of the manifests, not reading
# traces.  Each line: wall and CPU seconds (user + sys) and peak memory of
# `tokentrace diff RUN RUN -f md` and `-f json`, and the same for
# `tokentrace report RUN -f md` (one run: the floor), under nice.  On the
# shared 2-core machine wall times vary with the other jobs; CPU time is
# the figure to compare between 1x and 4x.
set -eu
B=$(cd "$1" && pwd)
N=${2:-20000}
tt="$B/src/cli/tokentrace"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT INT TERM
here=$(cd "$(dirname "$0")" && pwd)
measure() { # label, command...
	local label=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$W/t" nice -n 10 "$@" >/dev/null
	read -r wall u s kb <"$W/t"
	printf '%-28s %8.2f s wall %8.2f s CPU %8.0f MB\n' "$label" "$wall" \
		"$(echo "$u + $s" | bc)" "$(echo "$kb / 1024" | bc)"
}
echo "diff scale: load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "$N" $((4 * N)) 100000; do
	python3 "$here/diff_scale_gen.py" "$n" "$W/r$n"
	measure "report md, $n cells" "$tt" report "$W/r$n" -f md -o /dev/null
	measure "diff md, $n cells" "$tt" diff "$W/r$n" "$W/r$n" -f md -o /dev/null -q
	measure "diff json, $n cells" "$tt" diff "$W/r$n" "$W/r$n" -f json -o /dev/null -q
	rm -rf "$W/r$n"
done
