#!/usr/bin/env bash
# On the H100 machine: build the microbenchmarks and write h100_measured.csv with the device,
# clocks and date in its header (run twice; the second run's numbers are kept).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_ubench.cu -o /tmp/h100_ubench
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_launch.cu -o /tmp/h100_launch
/tmp/h100_ubench > /dev/null  # warm-up run (clocks up, caches)
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  /tmp/h100_ubench
  /tmp/h100_launch
} > "$out/h100_measured.csv"
cat "$out/h100_measured.csv"
