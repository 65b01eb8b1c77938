#!/usr/bin/env bash
# On the H100 machine: build h100_loaded.cu (TMA load latency on one SM while the other SMs
# stream from the L2) and write h100_loaded.csv with the device, clocks and date in its header
# (run twice; the second run's numbers are kept). LOADED_CSV names the output file (default
# h100_loaded.csv) in $OUT (default: this directory).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
csv="$out/${LOADED_CSV:-h100_loaded.csv}"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_loaded.cu -lcuda -o /tmp/h100_loaded 2> /tmp/h100_loaded.build.log
/tmp/h100_loaded > /dev/null  # warm-up run (clocks up, caches)
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  /tmp/h100_loaded
} > "$csv"
cat "$csv"
