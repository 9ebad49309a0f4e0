#!/bin/sh
# Record what a real dcgm-exporter serves on a GPU machine, for MON-03's scrape fixtures:
# two expositions 35 s apart (dcgm-exporter's default 30 s collect interval plus margin),
# the exporter's version, nvidia-smi's view at the same moments, and spec-check's verdict.
# Usage: scripts/device/record_dcgm_scrape.sh [URL] [OUTDIR]   (needs a running dcgm-exporter;
# without one it records only why, so the lead sees it at once.)
set -u
URL=${1:-http://127.0.0.1:9400/metrics}
OUT=${2:-${OUT:-./dcgm-scrape}}
mkdir -p "$OUT"
{ command -v dcgm-exporter && dcgm-exporter --version; } > "$OUT/exporter-version.txt" 2>&1 || true
nvidia-smi --query-gpu=timestamp,name,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu \
  --format=csv > "$OUT/nvidia-smi-1.csv" 2>&1 || true
if ! curl -sS -m 10 -H 'Accept: text/plain;version=0.0.4' "$URL" > "$OUT/scrape-1.txt" 2> "$OUT/why.txt"; then
  echo "no dcgm-exporter answers at $URL" >> "$OUT/why.txt"; exit 0
fi
curl -sS -m 10 -H 'Accept: application/openmetrics-text;version=1.0.0' "$URL" > "$OUT/scrape-1.openmetrics.txt" 2>&1
sleep 35
curl -sS -m 10 -H 'Accept: text/plain;version=0.0.4' "$URL" > "$OUT/scrape-2.txt" 2>&1
nvidia-smi --query-gpu=timestamp,name,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu \
  --format=csv > "$OUT/nvidia-smi-2.csv" 2>&1 || true
python -m validator check --select MON-03 --scrape "$URL" --scrape-interval 35 --format json \
  > "$OUT/check.json" 2> "$OUT/check.stderr" || true
