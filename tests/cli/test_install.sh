#!/usr/bin/env bash
# cmake --install puts programs, headers, a CMake package and a .pc file in
# place, and a downstream project builds against them both ways.
set -eu
build=$1; src=$2; fixtures=$3; extra=${4:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
for f in bin/tokentrace bin/tokentrace-demo include/tokentrace/run.h include/tokentrace/analysis.h \
         share/tokentrace/seed-matrix.csv share/tokentrace/sample.tar.zst; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
# One man page per command, with the version the programs print.
version=$("$tmp/prefix/bin/tokentrace" --version | sed 's/^tokentrace \([^ ]*\).*/\1/')
for p in tokentrace tokentrace-report tokentrace-chart tokentrace-synth tokentrace-dump \
         tokentrace-capture tokentrace-sim tokentrace-demo; do
  f=$tmp/prefix/share/man/man1/$p.1
  [ -e "$f" ] || { echo "FAIL: share/man/man1/$p.1 not installed"; exit 1; }
  grep -q "^\.TH .* \"tokentrace $version\" " "$f" ||
    { echo "FAIL: $p.1 does not carry version $version in its .TH line"; exit 1; }
done
ls "$tmp"/prefix/lib*/pkgconfig/tokentrace.pc > /dev/null
ls "$tmp"/prefix/lib*/cmake/tokentrace/tokentraceConfig.cmake > /dev/null
cmake -S "$src" -B "$tmp/c" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="$extra" > /dev/null
cmake --build "$tmp/c" > /dev/null
out=$("$tmp/c/consumer" "$fixtures/damaged/flipped-bytes")
grep -q "7 cells, first Valid" <<<"$out" || { echo "FAIL: consumer printed '$out'"; exit 1; }
PKG_CONFIG_PATH=$(echo "$tmp"/prefix/lib*/pkgconfig) pkg-config --cflags --libs tokentrace > "$tmp/flags"
grep -q -- "-ltokentrace" "$tmp/flags"
# The headers expose no dependency: they are Requires.private, listed only
# for static linking (issue 21.5).
if grep -q -- "-lcairo\|-larchive" "$tmp/flags"; then echo "FAIL: pkg-config --libs lists private dependencies: $(cat "$tmp/flags")"; exit 1; fi
PKG_CONFIG_PATH=$(echo "$tmp"/prefix/lib*/pkgconfig) pkg-config --static --libs tokentrace | grep -q -- "-lcairo" ||
  { echo "FAIL: pkg-config --static --libs lacks cairo"; exit 1; }
cc $extra -o "$tmp/pc" "$src/main.c" $(cat "$tmp/flags")
# -ltokentrace picks the shared library when one is installed: the loader
# must find it in the prefix.
LD_LIBRARY_PATH=$(dirname "$(echo "$tmp"/prefix/lib*/pkgconfig)")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$tmp/pc" "$fixtures/damaged/flipped-bytes" > /dev/null
echo "1 passed, 0 failed"
