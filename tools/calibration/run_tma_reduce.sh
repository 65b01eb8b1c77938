#!/usr/bin/env bash
# On the H100 machine: build h100_tma_reduce.cu and write h100_tma_reduce.csv (headed by date and
# nvidia-smi comment lines) in $OUT (default: this directory).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_tma_reduce.cu -lcuda -o /tmp/h100_tma_reduce
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  /tmp/h100_tma_reduce
} > "$out/h100_tma_reduce.csv"
cat "$out/h100_tma_reduce.csv"
