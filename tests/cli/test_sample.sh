#!/usr/bin/env bash
# The bundled sample run (a real capture, format 1.0) reads back with exactly
# the figures recorded in fixtures/runs/sample.expected.csv.
set -u
tt=$1; fx=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$tt" report "$fx/runs/sample.tar.zst" --format csv -o "$tmp/got.csv" || { echo "FAIL: report exited $?"; exit 1; }
if ! cmp -s "$tmp/got.csv" "$fx/runs/sample.expected.csv"; then
  echo "FAIL: figures differ from fixtures/runs/sample.expected.csv:"
  diff "$fx/runs/sample.expected.csv" "$tmp/got.csv" | head -20
  exit 1
fi
# Same run unpacked: the directory reader agrees with the archive reader.
tar -C "$tmp" --zstd -xf "$fx/runs/sample.tar.zst"
"$tt" report "$tmp/sample" --format csv -o "$tmp/dir.csv"
cmp -s "$tmp/dir.csv" "$tmp/got.csv" || { echo "FAIL: directory and archive differ"; exit 1; }
# A trace written before the text column (trace minor 0): dump says the
# chunks' text is unknown, on every request line (formats/run-v1.md 3.5).
"$tt" dump "$tmp/sample" > "$tmp/dump.jsonl" || { echo "FAIL: dump exited $?"; exit 1; }
nreq=$(grep -c '"type":"request"' "$tmp/dump.jsonl")
nnull=$(grep -c '"chunk_text":null}$' "$tmp/dump.jsonl")
[ "$nreq" -gt 0 ] && [ "$nreq" = "$nnull" ] ||
  { echo "FAIL: $nreq request lines, $nnull with chunk_text null"; exit 1; }
# A trace of trace minor 1 (formats/run-v1.md 3.5: the text column), from a
# reasoning model (tokentrace-sim --reasoning 10): its figures, reasoning
# ones included, as recorded; dump names each chunk's text.
"$tt" report "$fx/runs/reasoning.tar.zst" --format csv -o "$tmp/reasoning.csv" ||
  { echo "FAIL: report of reasoning.tar.zst exited $?"; exit 1; }
if ! cmp -s "$tmp/reasoning.csv" "$fx/runs/reasoning.expected.csv"; then
  echo "FAIL: figures differ from fixtures/runs/reasoning.expected.csv:"
  diff "$fx/runs/reasoning.expected.csv" "$tmp/reasoning.csv" | head -20
  exit 1
fi
"$tt" dump "$fx/runs/reasoning.tar.zst" --cell decode-1024x2 | grep -q '"chunk_text":\["reasoning",' ||
  { echo "FAIL: dump of reasoning.tar.zst shows no reasoning chunk"; exit 1; }
echo "4 passed, 0 failed"
