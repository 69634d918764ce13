#!/usr/bin/env bash
# Every damaged fixture gives its expected exit status and message, and the
# intact cells of a damaged run are still reported.
set -u
tt=$1; dir=$2; fail=0; n=0
while IFS='|' read -r name want text; do
  case "$name" in ''|'#'*) continue ;; esac
  n=$((n + 1))
  out=$("$tt" report "$dir/$name" --format md 2>"${TMPDIR:-/tmp}/tt-err.$$")
  got=$?
  err=$(cat "${TMPDIR:-/tmp}/tt-err.$$")
  if [ "$got" != "$want" ]; then echo "FAIL $name: exit $got, want $want ($err)"; fail=$((fail + 1)); continue; fi
  if ! grep -qF -- "$text" <<<"$err"; then echo "FAIL $name: message '$err' lacks '$text'"; fail=$((fail + 1)); continue; fi
  if [ "$want" = 3 ]; then
    # The damaged cell is marked, the intact ones still carry figures.
    grep -q 'Damaged trace' <<<"$out" || { echo "FAIL $name: damaged cell not marked"; fail=$((fail + 1)); continue; }
    [ "$(grep -c '| Sustained decode | .* | Valid |' <<<"$out")" -ge 2 ] || { echo "FAIL $name: intact cells missing"; fail=$((fail + 1)); continue; }
  fi
  echo "ok $name"
done < "$dir/EXPECTED"
rm -f "${TMPDIR:-/tmp}/tt-err.$$"
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ] && [ "$n" -gt 0 ]
