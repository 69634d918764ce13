#!/usr/bin/env bash
# The installed tokentrace-demo works from its prefix alone: cmake --install
# into a temporary prefix, then run PREFIX/bin/tokentrace-demo from a
# directory with no source tree, PATH at PREFIX/bin, and check its output.
# Skipped (77) when the simulator or the capture was not built.
#
# usage: test_demo_install.sh BUILD_DIR VERSION HAVE_SIM_AND_CAPTURE(0|1)
set -eu
build=$1 version=$2 full=$3
if [ "$full" != 1 ]; then
	echo "SKIP: tokentrace-sim or tokentrace-capture not built"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
p=$tmp/prefix
for f in bin/tokentrace-demo bin/tokentrace bin/tokentrace-sim bin/tokentrace-capture \
	share/tokentrace/seed-matrix.csv share/tokentrace/sample.tar.zst; do
	[ -e "$p/$f" ] || fail "$f not installed"
done

# From an empty directory, with no build/ or fixtures/ to fall back on, and
# nothing but the prefix (and the system) on PATH.
mkdir "$tmp/cwd"
cd "$tmp/cwd"
export PATH="$p/bin:/usr/local/bin:/usr/bin:/bin"
unset TOKENTRACE_DATA

got=$(tokentrace-demo --version)
[ "$got" = "tokentrace-demo $version" ] || fail "tokentrace-demo --version printed '$got', want 'tokentrace-demo $version'"
tokentrace-demo --help | grep -q '^usage: tokentrace-demo' || fail "tokentrace-demo --help"
set +e
tokentrace-demo --bogus > /dev/null 2>&1
st=$?
set -e
[ "$st" = 2 ] || fail "tokentrace-demo --bogus exited $st, want 2"

# The installed copy must not reach into the source tree for its data:
# hide the configured source path by pointing it at nothing (only the
# prefix's share/tokentrace is left).
sed -i 's|^configured_data=.*|configured_data=""|' "$p/bin/tokentrace-demo"

start=$(date +%s)
if ! timeout 600 tokentrace-demo -o demo-out > "$tmp/demo.log" 2>&1; then
	tail -n 30 "$tmp/demo.log"
	fail "the installed tokentrace-demo failed (log above)"
fi
echo "demo took $(($(date +%s) - start)) s"
for f in report.md report.json report.html report.pdf run.tar.zst sample-report.md run/manifest.json; do
	[ -s "demo-out/$f" ] || fail "demo-out/$f missing or empty"
done
for kind in heatmap throughput per-request tradeoff ttft tbt prefill timeline tbt-cdf; do
	f=demo-out/charts/$kind.png
	[ -s "$f" ] || fail "$f missing or empty"
	[ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f is not a PNG"
done
grep -q 'Sustained decode' demo-out/report.md || fail "report.md has no decode matrix"
# Every cell of the demo fits the simulator's KV cache, as in the seed
# report (whose statuses e2e_capture.test_seed_statuses compares).
if grep -q 'Over capacity' demo-out/report.md; then fail "report.md: a cell over capacity"; fi
# The diff against the second, slower engine (docs/diff.md).
for f in diff.md diff.json diff.html diff.pdf run-slower/manifest.json charts/diff-heatmap.png; do
	[ -s "demo-out/$f" ] || fail "demo-out/$f missing or empty"
done
grep -q ' slower' demo-out/diff.md || fail "diff.md finds nothing slower against a 10% slower engine"
# The simulator was stopped, not left behind.
if grep -q '^tokentrace-sim listening on ' demo-out/sim.log; then
	port=$(sed -n 's|^tokentrace-sim listening on http://[^:]*:||p' demo-out/sim.log)
	sleep 0.5
	if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
		fail "the simulator still listens on port $port after the demo"
	fi
fi
echo "1 passed, 0 failed"
