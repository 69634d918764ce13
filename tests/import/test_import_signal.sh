#!/usr/bin/env bash
# Issue 20.10: an import stopped by SIGINT, SIGTERM or SIGHUP leaves neither
# RUN.importing-XXXXXX (tokentrace import) nor $TMPDIR/tokentrace-import-
# XXXXXX (report of a foreign file) behind, and still ends by the signal.
# The input (AIPerf, 60k records, no summary) takes about a second.
# usage: test_import_signal.sh TOKENTRACE SCALE_GEN
set -u
# Job control: background jobs of a script otherwise start with SIGINT
# ignored (and an ignored signal stays ignored, as with nohup).
set -m
tt=$1; gen=$2; fail=0; n=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp/t; mkdir -p "$TMPDIR"
check() { n=$((n + 1)); if "$@"; then :; else echo "FAIL: $*"; fail=$((fail + 1)); fi; }
python3 "$gen" aiperf 60000 "$tmp/big.jsonl"

# wait (at most 20 s) until the glob $1 matches something
appears() { for _ in $(seq 400); do compgen -G "$1" > /dev/null && return 0; sleep 0.05; done; return 1; }

for sig in INT TERM HUP; do
  "$tt" import "$tmp/big.jsonl" -o "$tmp/run-$sig" -q &
  pid=$!
  check appears "$tmp/run-$sig.importing-*"
  kill -s $sig $pid
  wait $pid; rc=$?
  check test "$rc" -gt 128      # ended by the signal
  check test -z "$(compgen -G "$tmp/run-$sig.importing-*")"
  check test ! -e "$tmp/run-$sig"

  "$tt" report "$tmp/big.jsonl" -f md -o "$tmp/out-$sig.md" &
  pid=$!
  check appears "$TMPDIR/tokentrace-import-*"
  kill -s $sig $pid
  wait $pid; rc=$?
  check test "$rc" -gt 128
  check test -z "$(ls "$TMPDIR")"
done
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
