#!/usr/bin/env bash
# A cmocka program built on tt_cmocka_run (tests/common/tt_cmocka.h) must
# fail when asked for a case it does not have, so that a stale case name in
# a ctest cannot pass by running nothing.
# usage: selftest.sh PROG   (PROG has the cases test_one and test_two)
set -uo pipefail
P=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$("$P" test_no_such_case 2>&1); rc=$?
[ "$rc" = 2 ] || fail "unknown case: exit $rc, want 2 ($out)"
grep -q "no test case 'test_no_such_case'" <<<"$out" || fail "unknown case: no message ($out)"
out=$("$P" test_one test_no_such_case 2>&1); rc=$?
[ "$rc" = 2 ] || fail "unknown case beside a known one: exit $rc, want 2 ($out)"
out=$("$P" test_one 2>&1); rc=$?
[ "$rc" = 0 ] || fail "known case: exit $rc ($out)"
grep -q "PASSED.* 1 test" <<<"$out" || fail "known case: not exactly one case run ($out)"
grep -q "test_two" <<<"$out" && fail "known case: another case ran ($out)"
out=$("$P" 2>&1); rc=$?
[ "$rc" = 0 ] && grep -q "PASSED.* 2 test" <<<"$out" || fail "no name: not every case ran ($out)"
echo "tt_cmocka: ok"
