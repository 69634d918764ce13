#!/usr/bin/env bash
# The layering check must be able to fail: on a copy of the tree it passes,
# then fails on an upward include (core including report), on a program
# reaching a library-internal header, and on a cycle (with a picture that
# allows every edge, so only the cycle can fail it).
set -u
root=$1
check="python3 $root/tests/layering/check_layering.py"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
copy() { rm -rf "$tmp/t"; mkdir -p "$tmp/t"; cp -r "$root/src" "$root/include" "$tmp/t/"; mkdir -p "$tmp/t/docs"; cp "$root/docs/architecture.md" "$tmp/t/docs/"; }
expect() { # expect ok|fail PATTERN DESCRIPTION [DOC]
  local want=$1 pat=$2 what=$3 doc=${4:-$tmp/t/docs/architecture.md} out rc
  out=$($check "$tmp/t" "$doc" 2>&1); rc=$?
  if [ "$want" = ok ] && [ $rc -ne 0 ]; then echo "FAIL: $what: check failed on a good tree:"; echo "$out"; fail=1; return; fi
  if [ "$want" = fail ] && { [ $rc -eq 0 ] || ! grep -q -- "$pat" <<<"$out"; }; then
    echo "FAIL: $what: expected a failure naming '$pat', got rc $rc:"; echo "$out"; fail=1; return; fi
  echo "ok: $what"
}
copy
expect ok "" "the tree as it is"
sed -i '0,/^#include/s@^#include@#include "tokentrace/report.h"\n#include@' "$tmp/t/src/lib/core/buf.c"
expect fail "src/lib/core/buf.c:.*lib/core may not include 'tokentrace/report.h'" "upward include core -> report"
copy
sed -i '0,/^#include/s@^#include@#include "chart/chart_impl.h"\n#include@' "$tmp/t/src/cli/cmd_dump.c"
expect fail "cmd_dump.c:.*internal to the library" "a program including a library-internal header"
copy
printf '```layering\n*: *\n```\n' > "$tmp/t/any.md"
sed -i '0,/^#include/s@^#include@#include "tokentrace/report.h"\n#include@' "$tmp/t/src/lib/core/buf.c"
expect fail "cycle: " "a cycle (core -> report -> ... -> core)" "$tmp/t/any.md"
exit $fail
