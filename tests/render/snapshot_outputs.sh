#!/usr/bin/env bash
# Every human and machine output of the report, the export and the diff,
# for every fixture run and two synthetic runs, written into OUTDIR, one file
# per (input, command, format).  Run it with the binary before a change and
# after it, then `diff -r` the two folders: a refactoring of the tables
# (issue 21.2) must leave every byte alone.  Not a ctest: it is the tool a
# change of the table code is checked with, on demand.
#
#   tests/render/snapshot_outputs.sh BUILD/tokentrace OUTDIR
#
# PDF files carry a creation date, so the PDF is compared as its text
# (pdftotext, when installed) instead of its bytes.
set -u
tt=$1; out=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
fx=$here/fixtures
mkdir -p "$out"
# a fixed folder: the synth runs' paths appear in the outputs
tmp=${TMPDIR:-/tmp}/tokentrace-snapshot-inputs
rm -rf "$tmp"; mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT

# inputs: every fixture run, every foreign file, two synth runs
inputs=()
for f in "$fx"/runs/*.tar.zst; do inputs+=("$f"); done
for f in "$fx"/foreign/*/*.json "$fx"/foreign/*/*.jsonl "$fx"/foreign/*/*.txt; do
	[ -f "$f" ] && inputs+=("$f")
done
"$tt" synth --profile "$fx/profiles/seed-matrix.csv" -o "$tmp/seed" -q && inputs+=("$tmp/seed")
for p in "$fx"/profiles/*.csv; do
	case $p in */seed-matrix.csv) continue ;; esac
	"$tt" synth --profile "$p" -o "$tmp/synth-$(basename "$p" .csv)" -q 2>/dev/null &&
		inputs+=("$tmp/synth-$(basename "$p" .csv)")
done

run() { # name, then the command
	local name=$1; shift
	"$@" > "$out/$name" 2> "$out/$name.err"
	echo "exit $?" >> "$out/$name.err"
}

for in in "${inputs[@]}"; do
	b=$(basename "$in"); b=${b%.tar.zst}
	for f in term md csv json html; do
		run "$b.report.$f" "$tt" report "$in" --format "$f"
	done
	run "$b.report.term80" env COLUMNS=80 "$tt" report "$in" --format term
	run "$b.report.term60" "$tt" report "$in" --format term
	run "$b.report.q.md" "$tt" report "$in" --format md --quantiles 50,90,99.9 --stalls 50ms
	run "$b.report.q.term" "$tt" report "$in" --format term --quantiles 50,90,99
	run "$b.report.slo.md" "$tt" report "$in" --format md --slo ttft=300ms,tbt=50ms
	run "$b.report.slo.html" "$tt" report "$in" --format html --slo ttft=300ms,tbt=50ms
	run "$b.report.slo.json" "$tt" report "$in" --format json --slo ttft=300ms
	if "$tt" report "$in" --format pdf -o "$tmp/r.pdf" 2>/dev/null && command -v pdftotext >/dev/null; then
		pdftotext -layout "$tmp/r.pdf" "$out/$b.report.pdf.txt"
	fi
	for w in cells requests; do
		for f in csv jsonl; do
			run "$b.export.$w.$f" "$tt" export "$in" --what "$w" --format "$f"
		done
	done
done

# diffs: the seed synth run against itself, against a re-windowed copy, and
# the fixture runs against each other
diffs=("$tmp/seed" "$tmp/seed"
	"$fx/runs/sample.tar.zst" "$fx/runs/reasoning.tar.zst"
	"$fx/runs/openloop.tar.zst" "$fx/runs/openloop13.tar.zst")
for s in "$tmp"/synth-*; do [ -d "$s" ] && diffs+=("$tmp/seed" "$s") && break; done
i=0
while [ $i -lt ${#diffs[@]} ]; do
	a=${diffs[$i]}; c=${diffs[$((i + 1))]}; i=$((i + 2))
	n="diff-$(basename "$a" .tar.zst)-$(basename "$c" .tar.zst)"
	for f in term md csv json html; do
		run "$n.$f" "$tt" diff "$a" "$c" --format "$f"
	done
done
ls "$out" | wc -l
