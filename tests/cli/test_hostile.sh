#!/usr/bin/env bash
# The hostile-file suite (docs/reliability.md): runs built to hurt a reader
# (bombs, path tricks, device files, FIFOs, huge numbers, deep nesting, bad
# UTF-8, escape, HTML and formula injection in every string field).  Every
# case runs every output under a memory limit (ulimit -v, not under
# sanitizers: they reserve terabytes of address space) and a CPU and wall
# time limit, and must: end (no hang), not crash, exit as the table says,
# print no terminal escape, produce valid UTF-8 JSON, CSV without formula
# cells, markdown without raw HTML from the run.  One line per case and
# output gives its time and peak memory (the figures of docs/reliability.md).
# usage: test_hostile.sh TOKENTRACE FIXTURES GEN_PY [sanitized:0|1]
set -u
tt=$1; fixtures=$2; gen=$3; sanitized=${4:-0}
MEM_KB=${TT_HOSTILE_MEM_KB:-409600}   # 400 MB
CPU_S=${TT_HOSTILE_CPU_S:-30}
[ "$sanitized" = 1 ] && CPU_S=$((CPU_S * 5))
WALL_S=${TT_HOSTILE_WALL_S:-60}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tt-hostile-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0; n=0
"$tt" synth --profile "$fixtures/profiles/small.csv" -o "$tmp/base" --max-tokens 256 -q ||
  { echo "synth failed"; exit 1; }
python3 "$gen" "$tmp/base" "$tmp/c" >/dev/null || { echo "generator failed"; exit 1; }
c=$tmp/c

# Cases that need the file system rather than a generator.
cp -r "$tmp/base" "$c/trace-devzero"; ln -sf /dev/zero "$c/trace-devzero/cells/decode-8192x1.ttz"
cp -r "$tmp/base" "$c/trace-urandom"; ln -sf /dev/urandom "$c/trace-urandom/cells/decode-8192x1.ttz"
cp -r "$tmp/base" "$c/trace-fifo"; rm "$c/trace-fifo/cells/decode-8192x1.ttz"; mkfifo "$c/trace-fifo/cells/decode-8192x1.ttz"
cp -r "$tmp/base" "$c/manifest-fifo"; rm "$c/manifest-fifo/manifest.json"; mkfifo "$c/manifest-fifo/manifest.json"
cp -r "$tmp/base" "$c/manifest-devzero"; ln -sf /dev/zero "$c/manifest-devzero/manifest.json"
cp -r "$tmp/base" "$c/trace-dir"; rm "$c/trace-dir/cells/decode-8192x1.ttz"; mkdir "$c/trace-dir/cells/decode-8192x1.ttz"
cp -r "$tmp/base" "$c/trace-empty-done"; : > "$c/trace-empty-done/cells/decode-8192x1.ttz"
cp -r "$tmp/base" "$c/trace-empty-running"; : > "$c/trace-empty-running/cells/decode-8192x1.ttz"
sed -i '/"id":[[:space:]]*"decode-8192x1"/,/"state"/ s/"state":[[:space:]]*"done"/"state": "running"/' "$c/trace-empty-running/manifest.json"
mkfifo "$c/run-fifo.tar"
# A run whose own path holds an escape sequence, with a damaged cell: the
# path is quoted in the header and in the damage text (case ESCRUN).
escrun="$c/esc-"$'\e'"]0;pwned"$'\a'$'\e'"[31m-run"
cp -r "$tmp/base" "$escrun"; : > "$escrun/cells/decode-8192x1.ttz"
( cd "$c" && tar --zstd -cf cells-2k.tar.zst cells-2k && rm -rf cells-2k )
( cd "$tmp" && tar -czf "$c/whole.tar.gz" base && tar --zstd -cf "$c/whole.tar.zst" base )
s=$(stat -c %s "$c/whole.tar.gz"); head -c $((s * 90 / 100)) "$c/whole.tar.gz" > "$c/cut.tar.gz"
# A .tar.zst cut short: a run large enough to span several zstd blocks.
"$tt" synth --profile "$fixtures/profiles/small.csv" -o "$tmp/big" --max-tokens 256 --scale 8 -q
( cd "$tmp" && tar --zstd -cf "$c/big.tar.zst" big )
s=$(stat -c %s "$c/big.tar.zst"); head -c $((s * 80 / 100)) "$c/big.tar.zst" > "$c/cut.tar.zst"
# A gzip bomb: 256 MB of zeros beside the run, in 256 KB.
# The zeros come first, so the bomb is met before the manifest.
( cd "$tmp" && cp -r base bomb && head -c $((256 << 20)) /dev/zero > bomb/zeros &&
  tar -czf "$c/bomb.tar.gz" bomb/zeros bomb/manifest.json bomb/cells && rm -rf bomb )
# A legitimate large run (800 s windows, 660k chunks in a cell): charts
# must be drawn under the 200 MB the issue set, streaming the cells.
"$tt" synth --profile "$fixtures/profiles/small.csv" -o "$c/large-run" --max-tokens 256 --scale 200 -q
if command -v zip >/dev/null; then ( cd "$tmp" && zip -q -r -P secret "$c/encrypted.zip" base ); fi

# case|exit status of `report`|text stderr must contain (empty: anything)
# [|memory limit in KB when not the default: a report's memory is linear in
# its cells (about 3.5 KB each in the analysis; JSON is printed a cell at a
# time: 100k cells peaked at 446 MB md, 616 MB json), so 100k cells get
# more room [|the outputs
# tried, when not all [|the timeline's cell]]]
cases='
strings-injection|0|
cell-id-formula|1|id is not of the form
cell-id-plus|1|id is not of the form
cell-id-escape|1|id is not of the form
bad-utf8-manifest|0|
huge-strings|0|
deep-nesting|1|not valid JSON
huge-numbers|0|
version-oversized|1|run format version 99999999999.1 found
cells-100k|0||1000000|md json
notes-60k|0|
cells-2k.tar.zst|0|||md dump
trace-dotdot|1|leaves the run
trace-absolute|1|leaves the run
trace-error-strings|0|
trace-token-bomb|3|
trace-duplicates|3|
trace-many-records|3|
trace-chunk-bomb|3|a request claims over 2^20 chunks
trace-chunk-bomb-many|0|||md json html timeline|decode-8192x1
trace-scrape-strings|0|
trace-constant-tbt|0|
all-constant-tbt|0|||md pdf chartall
large-run|0||204800|md pdf html chartall timeline
huge-strings|0|||pdf chartall
strings-injection|0|||pdf chartall
trace-garbage|3|is unreadable
trace-devzero|3|is a character device, not a regular file
trace-urandom|3|is a character device, not a regular file
trace-fifo|3|is a FIFO, not a regular file
manifest-fifo|1|is a FIFO, not a regular file
manifest-devzero|1|is a character device, not a regular file
trace-dir|3|is a directory, not a regular file
trace-empty-done|3|is empty (0 bytes)
trace-empty-running|0|
run-fifo.tar|1|neither a run directory nor a regular file
ESCRUN|3|is empty (0 bytes)
whole.tar.gz|0|
whole.tar.zst|0|
cut.tar.gz|3|truncated gzip input
cut.tar.zst|3|truncated zstd input
bomb.tar.gz|1|refused as a decompression bomb
encrypted.zip|1|is encrypted
'
limited() { # limited MEMKB OUT ERR -- command...: run under the limits; prints "status secs peakKB"
  local mem=$1 out=$2 err=$3; shift 4
  local tf=$tmp/time.$$ t0 t1 st
  t0=$(date +%s.%N)
  (
    ulimit -t "$CPU_S"
    [ "$sanitized" = 1 ] || ulimit -v "$mem"
    if [ -x /usr/bin/time ]; then exec /usr/bin/time -o "$tf" -f %M timeout -k 5 "$WALL_S" "$@"
    else exec timeout -k 5 "$WALL_S" "$@"; fi
  ) >"$out" 2>"$err" </dev/null
  st=$?
  t1=$(date +%s.%N)
  echo "$st $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') $(tail -1 "$tf" 2>/dev/null || echo '?')"
  rm -f "$tf"
}
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check_out() { # check_out CASE FORMAT OUT ERR
  local name=$1 f=$2 out=$3 err=$4
  if grep -q $'\x1b' "$err"; then bad "$name $f: escape sequence in messages"; fi
  case $f in
    term|md|csv) grep -q $'\x1b' "$out" && bad "$name $f: escape sequence in output" ;;
  esac
  case $f in
    term|md) grep -qiwE 'inf|nan|-nan' "$out" && bad "$name $f: a non-finite number printed: $(grep -oiwE '.{20}(inf|nan).{10}' "$out" | head -1)" ;;
  esac
  case $f in
    md) grep -qP '(?<!\\)<img' "$out" && bad "$name md: raw HTML from the run in markdown" ;;
    json|dump)
      [ -s "$out" ] || return 0
      python3 - "$out" "$f" <<'PY' || bad "$name $f: not valid UTF-8 JSON"
import json, sys
sys.tracebacklimit = 0
data = open(sys.argv[1], 'rb').read().decode('utf-8')  # strict
if sys.argv[2] == 'dump':
    for line in data.splitlines():
        json.loads(line)
else:
    json.loads(data)
PY
      ;;
    csv)
      python3 - "$out" <<'PY' || bad "$name csv: a cell starts a formula"
import csv, sys, re
num = re.compile(r'^-?[0-9.]+(e[-+]?[0-9]+)?$')
for row in csv.reader(open(sys.argv[1], newline='', encoding='utf-8')):
    for cell in row:
        if cell[:1] in ('=', '+', '@', '\t', '\r') or (cell[:1] == '-' and not num.match(cell)):
            print('formula cell:', cell[:60]); sys.exit(1)
PY
      ;;
  esac
}
while IFS='|' read -r name want text mem fmts cell; do
  [ -n "$name" ] || continue
  run=$c/$name
  [ "$name" = ESCRUN ] && run=$escrun
  [ -e "$run" ] || { echo "skip $name (not built here)"; continue; }
  # Sanitizers make the three largest cases minutes long: their memory
  # safety is the same code's as the small cases'; their speed is checked
  # in the plain build.
  if [ "$sanitized" = 1 ]; then
    case $name in cells-100k|large-run|cells-2k.tar.zst) echo "skip $name (sanitized build)"; continue ;; esac
  fi
  for f in ${fmts:-md term csv json html dump}; do
    n=$((n + 1))
    o=$tmp/out.$f; e=$tmp/err.$f
    rm -rf "$tmp/charts"
    case $f in
      dump) r=$(limited "${mem:-$MEM_KB}" "$o" "$e" -- "$tt" dump "$run" --scrapes) ;;
      pdf) r=$(limited "${mem:-$MEM_KB}" "$o" "$e" -- "$tt" report "$run" -f pdf -o "$tmp/out.pdf") ;;
      chartall) r=$(limited "${mem:-$MEM_KB}" "$o" "$e" -- "$tt" chart "$run" all -o "$tmp/charts") ;;
      timeline) r=$(limited "${mem:-$MEM_KB}" "$o" "$e" -- "$tt" chart "$run" timeline --cell "${cell:-decode-8192x4}" -o "$tmp/t.png") ;;
      *) r=$(limited "${mem:-$MEM_KB}" "$o" "$e" -- "$tt" report "$run" -f "$f") ;;
    esac
    set -- $r
    st=$1
    echo "case $name $f: exit $st, $2 s, peak $3 KB"
    if [ "$st" -ge 124 ]; then bad "$name $f: killed or timed out (exit $st): $(head -c 300 "$e")"; continue; fi
    if [ "$f" != dump ] && [ "$st" != "$want" ]; then bad "$name $f: exit $st, want $want: $(head -c 300 "$e")"; continue; fi
    if [ "$f" = dump ] && [ "$st" != "$want" ] && ! { [ "$want" = 0 ] && [ "$st" = 3 ]; }; then
      bad "$name dump: exit $st, want $want: $(head -c 300 "$e")"; continue; fi
    if [ -n "$text" ] && ! grep -qF -- "$text" "$e"; then bad "$name $f: message lacks '$text': $(head -c 300 "$e")"; fi
    [ "$st" = 1 ] && [ ! -s "$e" ] && bad "$name $f: failed without a message"
    check_out "$name" "$f" "$o" "$e"
  done
done <<<"$cases"
echo "$((n - fail)) of $n passed"
[ "$fail" = 0 ]
