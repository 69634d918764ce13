#!/usr/bin/env bash
# Help, version, and clear errors with the right exit status for wrong usage.
set -u
tt=$1; fail=0; n=0
expect() { # expect STATUS TEXT -- command...
  local want=$1 text=$2; shift 3
  n=$((n + 1))
  out=$("$@" 2>&1); got=$?
  if [ "$got" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL ($*): exit $got want $want; output: $out"; fail=$((fail + 1))
  fi
}
expect 0 'usage: tokentrace <command>' -- "$tt" --help
expect 0 'tokentrace 0.' -- "$tt" --version
expect 2 "unknown command 'frobnicate'" -- "$tt" frobnicate
expect 2 'usage: tokentrace <command>' -- "$tt"
expect 0 'usage: tokentrace report RUN' -- "$tt" report --help
expect 0 'usage: tokentrace synth' -- "$tt" synth --help
expect 2 "unknown option '--bogus'" -- "$tt" report x --bogus
expect 2 "unknown format 'xml'" -- "$tt" report x --format xml
expect 2 "'soon' is not a duration" -- "$tt" report x --skip-first soon
expect 2 'not a list of up to' -- "$tt" report x --quantiles 0,200
expect 2 'report needs a run' -- "$tt" report
expect 2 'needs --profile CSV and -o RUN' -- "$tt" synth
expect 1 "cannot open 'nope.csv'" -- "$tt" synth --profile nope.csv -o /tmp/never-made
expect 2 "'lots' is not a number" -- "$tt" synth --profile a -o b --scale lots
# One option table per command (issue 21.3): a did-you-mean for a near
# miss, --name=value as --name value, '--' ends the options.
expect 2 "did you mean '--skip-first'?" -- "$tt" report x --skip 5s
expect 2 "did you mean '--quantiles'?" -- "$tt" report x --qantiles 90
expect 2 "did you mean '--what'?" -- "$tt" export x --waht cells
expect 2 "did you mean '--concurrency'?" -- "$tt" chart x tbt-cdf --concurency 4
expect 2 "did you mean '--profile'?" -- "$tt" synth --profil a -o b
expect 2 "did you mean '--scrapes'?" -- "$tt" dump x --scrape
expect 2 "'soon' is not a duration" -- "$tt" report x --skip-first=soon
expect 2 "option '--window' needs a value" -- "$tt" report x --window
expect 2 "option '--no-color' takes no value" -- "$tt" report x --no-color=1
expect 1 "'--odd-name'" -- "$tt" report -- --odd-name
expect 2 "did you mean '--fail-if-slower'?" -- "$tt" diff a b --fail-if-slowr 5%
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
