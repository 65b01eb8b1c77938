#!/usr/bin/env bash
# On whichever H100 (or H200) the device tool lends: every unit row of run_h200.sh (ubench, launch,
# wgmma, units2), the HBM box rows of h100_hbm_boxes.cu and every gemm_sm90_twin timing row, all on
# that one machine in one call, under $OUT/<GPU serial>/ with the GPU's serial, UUID and SM and
# memory clocks in gpu.txt: a comparison of GEMM rows with unit rows that never spans two machines
# (the device tool may lend a different one on every call).
# Usage: OUT=dir bash tools/calibration/run_machine.sh [TAG]   (TAG: h100 default; file prefix)
set -uo pipefail
cd "$(dirname "$0")"
tag="${1:-h100}"
serial=$(nvidia-smi --query-gpu=serial --format=csv,noheader | tr -d ' ')
dir="${OUT:-.}/$serial"
mkdir -p "$dir"
nvidia-smi --query-gpu=name,serial,uuid,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,driver_version,vbios_version \
  --format=csv > "$dir/gpu.txt"
cat "$dir/gpu.txt"
OUT="$dir" GPU_TAG="$tag" bash run_h200.sh > "$dir/${tag}_run.log" 2>&1
OUT="$dir" CSV="${tag}_hbm_boxes.csv" bash run_program.sh h100_hbm_boxes > /dev/null 2>> "$dir/${tag}_run.log"
grep -v "^#" "$dir/${tag}_gemm_sm90.csv" | cut -d, -f1-12
