#!/usr/bin/env bash
# On the H100 machine: build h100_hbm_boxes.cu (HBM reads of 16 KiB operand boxes by 1..132 SMs,
# contiguous and strided rows) and write h100_hbm_boxes.csv with the device, clocks and date in its
# header (a warm-up run first; the second run's numbers are kept). HBM_BOXES_CSV names the output
# file (default h100_hbm_boxes.csv) in $OUT (default: this directory).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
csv="$out/${HBM_BOXES_CSV:-h100_hbm_boxes.csv}"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_hbm_boxes.cu -lcuda -o /tmp/h100_hbm_boxes 2> /tmp/h100_hbm_boxes.build.log
/tmp/h100_hbm_boxes > /dev/null  # warm-up run (clocks up)
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  /tmp/h100_hbm_boxes
} > "$csv"
cat "$csv"
