#!/usr/bin/env bash
# Issue 21.1: a foreign file that imports with a warning (an llm-inference-bench
# file of a newer schema) is a success with a warning in every command that
# reads runs: exit 3 (report, chart, dump, export) or the command's own status
# (diff: 0), "warning:" and never "error:", and no private import directory
# left in $TMPDIR.  Before the fix report, dump, diff and export tested the
# graded code as a boolean: exit 1 with "error:" and a leftover directory per
# call.
set -u
tt=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/tt-newer-XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
f=$work/newer.json
cat >"$f" <<'JSON'
{"metadata": {"version": "9.0.0", "context_lengths": [0], "concurrency_levels": [1],
  "some_new_member": {"x": 1}},
 "results": [{"concurrency": 1, "context_tokens": 0, "aggregate_tps": 50.5}]}
JSON
fail=0
check() { # name want-exit command...
  local name=$1 want=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" != "$want" ]; then echo "FAIL $name: exit $got, want $want: $(cat "$work/err")"; fail=1; fi
  if ! grep -q 'warning: .*9.0.0 is newer' "$work/err"; then echo "FAIL $name: no warning naming the version: $(cat "$work/err")"; fail=1; fi
  if grep -q 'error:' "$work/err"; then echo "FAIL $name: says error: $(cat "$work/err")"; fail=1; fi
  if [ -n "$(ls -A "$TMPDIR")" ]; then echo "FAIL $name: left behind: $(ls -A "$TMPDIR")"; fail=1; rm -rf "${TMPDIR:?}"/*; fi
  [ "$fail" = 0 ] && echo "ok $name"
}
check report 3 "$tt" report "$f" --format md
grep -q '50.5' "$work/out" || { echo "FAIL report: the figure is missing"; fail=1; }
check dump 3 "$tt" dump "$f"
check export 3 "$tt" export "$f" --what cells
check chart 3 "$tt" chart "$f" heatmap -o "$work/h.svg"
check diff 0 "$tt" diff "$f" "$f" --format md
exit $fail
