#!/usr/bin/env bash
# Regenerate docs/img/chart-*.png, the pictures of docs/charts.md.
# usage: tests/chart/make_doc_images.sh TOKENTRACE [RUN]
# RUN defaults to the bundled sample run, fixtures/runs/sample.tar.zst;
# RUN=synth makes a seed-scale synthetic run from
# fixtures/profiles/seed-matrix.csv (tokentrace synth, seed 1).  Charts are
# deterministic, so the same command gives the same pictures.
set -eu
tt=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tt-doc-img-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run=${2:-$root/fixtures/runs/sample.tar.zst}
if [ "$run" = synth ]; then
  run=$tmp/run
  # the seed report's model and GPU, so the titles show what a real run's do;
  # the engine line says "synthetic"
  "$tt" synth --profile "$root/fixtures/profiles/seed-matrix.csv" -o "$run" -q \
    --model LiquidAI/LFM2.5-350M --note gpu="H200 NVL" --note quantization=BF16
fi
mkdir -p "$root/docs/img"
# (chart-ttft-parts.png needs a run with vLLM's queue and prefill histograms,
# which the sample and synthetic runs lack: it is drawn separately)
for k in heatmap throughput per-request tradeoff ttft tbt prefill timeline tbt-cdf; do
  "$tt" chart "$run" "$k" -o "$root/docs/img/chart-$k.png"
done
echo "wrote $root/docs/img/chart-*.png from $run"
