#!/usr/bin/env bash
# On the H100 machine: build h100_units2.cu (it includes gemm_sm90_twin.cu for its GEMM burst) and
# write h100_units2.csv with the device, clocks and date in its header (run twice; the second
# run's numbers are kept). UNITS2_CSV names the output file (default h100_units2.csv) in $OUT
# (default: this directory).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
csv="$out/${UNITS2_CSV:-h100_units2.csv}"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_units2.cu -lcuda -o /tmp/h100_units2 2> /tmp/h100_units2.build.log
/tmp/h100_units2 > /dev/null  # warm-up run (clocks up, caches)
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  /tmp/h100_units2
} > "$csv"
cat "$csv"
