#!/usr/bin/env bash
# tokentrace chart as a user runs it: help, clear errors with the right exit
# status, the format following the extension, sizes, 'all', and the help and
# docs/charts.md naming the same kinds.
# usage: test_cli_chart.sh TOKENTRACE FIXTURES DOCS_CHARTS_MD
set -u
tt=$1; fixtures=$2; doc=$3; fail=0; n=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tt-cli-chart-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
expect() { # expect STATUS TEXT -- command...
  local want=$1 text=$2; shift 3
  n=$((n + 1))
  out=$("$@" 2>&1); got=$?
  if [ "$got" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL ($*): exit $got want $want; output: $out"; fail=$((fail + 1))
  fi
}
check() { # check DESCRIPTION -- command...
  local what=$1; shift 2
  n=$((n + 1))
  if ! "$@" >/dev/null 2>&1; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
# PNG width and height from the IHDR chunk
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}'; }

"$tt" synth --profile "$fixtures/profiles/small.csv" -o "$tmp/run" -q || { echo "synth failed"; exit 1; }
run=$tmp/run

expect 0 'usage: tokentrace chart RUN KIND' -- "$tt" chart --help
expect 0 'tbt-cdf' -- "$tt" chart --help
expect 2 "unknown chart kind 'pie' (valid: heatmap, throughput" -- "$tt" chart "$run" pie
expect 2 "x.jpg' (valid extensions: .png, .svg, .pdf)" -- \
  "$tt" chart "$run" heatmap -o "$tmp/x.jpg"
expect 2 "no chart kind given" -- "$tt" chart "$run"
expect 2 "unknown option '--bogus'" -- "$tt" chart "$run" heatmap --bogus
expect 2 "'huge' is not a number" -- "$tt" chart "$run" heatmap --width huge
expect 2 "unknown format 'gif' for '--as'" -- "$tt" chart "$run" all --as gif
expect 2 "'--as' is for 'all'" -- "$tt" chart "$run" heatmap --as svg
expect 1 "no cell 'decode-1x1'" -- "$tt" chart "$run" timeline --cell decode-1x1 -o "$tmp/t.png"
expect 1 "cannot open" -- "$tt" chart "$tmp/no-such-run" heatmap -o "$tmp/h.png"
expect 1 "concurrency 2" -- "$tt" chart "$run" tbt-cdf --concurrency 2 -o "$tmp/c.png"

expect 2 "--skip-first: 'soon' is not a duration" -- "$tt" chart "$run" heatmap --skip-first soon
expect 2 "--window: 'soon' is not a duration" -- "$tt" chart "$run" heatmap --window soon
# --window 0 is the recorded window (report-json run.analysis.window_s 0): same picture
expect 0 '' -- "$tt" chart "$run" heatmap --window 0 -o "$tmp/wz0.svg"
expect 0 '' -- "$tt" chart "$run" heatmap -o "$tmp/wz1.svg"
n=$((n + 1)); if ! cmp -s "$tmp/wz0.svg" "$tmp/wz1.svg"; then echo "FAIL: --window 0 changed the heatmap"; fail=$((fail + 1)); fi
# --slo outlines cells: a generous SLO changes the heatmap, a bad one is refused
expect 0 '' -- "$tt" chart "$run" heatmap --slo ttft=60s -o "$tmp/slo.svg"
n=$((n + 1)); if cmp -s "$tmp/slo.svg" "$tmp/wz1.svg"; then echo "FAIL: --slo changed nothing"; fail=$((fail + 1)); fi
expect 2 "--slo: SLO 'ttft=soon'" -- "$tt" chart "$run" heatmap --slo ttft=soon
# re-windowed figures move the timeline's marked window: the picture differs
expect 0 '' -- "$tt" chart "$run" timeline --cell decode-8192x4 -o "$tmp/w0.svg"
expect 0 '' -- "$tt" chart "$run" timeline --cell decode-8192x4 --skip-first 1s -o "$tmp/w1.svg"
n=$((n + 1)); if cmp -s "$tmp/w0.svg" "$tmp/w1.svg"; then echo "FAIL: --skip-first changed nothing"; fail=$((fail + 1)); fi

# the surface follows the extension
expect 0 '' -- "$tt" chart "$run" throughput -o "$tmp/t.svg"
check "svg output is SVG" -- grep -q '<svg' "$tmp/t.svg"
expect 0 '' -- "$tt" chart "$run" throughput -o "$tmp/t.pdf"
check "pdf output is one PDF page" -- bash -c "pdfinfo '$tmp/t.pdf' | grep -Eq 'Pages: +1'"
expect 0 '' -- "$tt" chart "$run" heatmap -o "$tmp/h.png" --width 1200 --height 700
n=$((n + 1)); s=$(png_size "$tmp/h.png")
[ "$s" = "1200x700" ] || { echo "FAIL: png size $s, want 1200x700"; fail=$((fail + 1)); }
# sizes for a paper: the presets, and the options given with them win
expect 0 '' -- "$tt" chart "$run" tradeoff --preset column -o "$tmp/col.png"
check "--preset column is 480x320" -- test "$(png_size "$tmp/col.png")" = 480x320
expect 0 '' -- "$tt" chart "$run" tradeoff --width 600 --preset column -o "$tmp/col6.png"
check "--width before --preset wins" -- test "$(png_size "$tmp/col6.png")" = 600x320
expect 0 '' -- "$tt" chart "$run" heatmap --preset slide --no-title -o "$tmp/sl.png"
check "--preset slide is 1280x720" -- test "$(png_size "$tmp/sl.png")" = 1280x720
expect 0 '' -- "$tt" chart "$run" ttft -o "$tmp/ti.pdf"
check "a chart has its title" -- bash -c "pdftotext '$tmp/ti.pdf' - | grep -q 'Time to first token vs'"
expect 0 '' -- "$tt" chart "$run" ttft --font-scale 1.5 --no-title -o "$tmp/fs.pdf"
check "--no-title leaves the title out" -- bash -c "! pdftotext '$tmp/fs.pdf' - | grep -q 'Time to first token vs'"
expect 2 "unknown chart preset 'poster' (known: column, page, slide)" -- \
  "$tt" chart "$run" heatmap --preset poster
expect 2 "--font-scale" -- "$tt" chart "$run" heatmap --font-scale 9
expect 0 '' -- "$tt" chart "$run" all --as png --preset column -o "$tmp/allcol"
check "all --preset column draws its charts at 480x320" -- \
  test "$(png_size "$tmp/allcol/throughput.png")" = 480x320
expect 0 '' -- "$tt" chart "$run" heatmap -o "$tmp/h2.png" --width 1920 --height 1200 --dpi 192
n=$((n + 1)); s=$(png_size "$tmp/h2.png")
[ "$s" = "1920x1200" ] || { echo "FAIL: png size $s, want 1920x1200"; fail=$((fail + 1)); }
expect 0 '' -- "$tt" chart "$run" timeline --cell decode-8192x4 -o "$tmp/tl.png"
check "timeline written" -- test -s "$tmp/tl.png"
# same run, same bytes
expect 0 '' -- "$tt" chart "$run" ttft -o "$tmp/a.svg"
expect 0 '' -- "$tt" chart "$run" ttft -o "$tmp/b.svg"
check "charts are deterministic" -- cmp "$tmp/a.svg" "$tmp/b.svg"

# a damaged run still draws, with a warning and exit 3 (as report does)
expect 3 "warning: 1 cell damaged" -- "$tt" chart "$fixtures/damaged/truncated-frame" heatmap -o "$tmp/d.png"
check "damaged run drawn" -- test -s "$tmp/d.png"
# a cell with nothing readable cannot be drawn: say so
expect 1 "is unreadable" -- "$tt" chart "$fixtures/damaged/truncated-frame" timeline --cell decode-8192x4 -o "$tmp/d2.png"
expect 1 "run format version 2.0" -- "$tt" chart "$fixtures/damaged/future-major" heatmap -o "$tmp/d3.png"

# everything at once
expect 0 '' -- "$tt" chart "$run" all -o "$tmp/all"
for k in heatmap throughput per-request tradeoff ttft tbt prefill timeline tbt-cdf; do
  check "all wrote $k.svg" -- test -s "$tmp/all/$k.svg"
done
check "all wrote report.html" -- grep -q 'data:image/svg+xml;base64,' "$tmp/all/report.html"
check "all wrote report.pdf" -- bash -c "pdfinfo '$tmp/all/report.pdf' | grep -q 'Pages:'"

# --help and docs/charts.md name the same kinds
kinds=$("$tt" chart --help | awk '/^kinds:/{on=1;next} on&&/^$/{on=0} on{print $1}')
n=$((n + 1))
[ "$(wc -w <<<"$kinds")" = 13 ] || { echo "FAIL: --help lists $(wc -w <<<"$kinds") kinds"; fail=$((fail + 1)); }
for k in $kinds; do
  check "docs/charts.md documents '$k'" -- grep -q "^## \`$k\`" "$doc"
  check "docs/charts.md pictures '$k'" -- grep -q "(img/chart-$k.png)" "$doc"
done
for k in $(grep -o '^## `[a-z-]*`' "$doc" | tr -d '#` '); do
  check "--help lists '$k' from the docs" -- grep -qx "$k" <<<"$kinds"
done

echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
