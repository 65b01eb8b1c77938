#!/usr/bin/env bash
# On the H100/H200 machine: is the 2-stage GEMM's slowdown under load (h100_gemm_scaling.csv:
# silicon -4 / -9 / -29 / -44% slower than the model at 1 / 16 / 66 / 132 SMs, the 4-stage series
# within 3%) in the memory system alone? Runs the scaling series' GEMM loads without math
# (h100_gemm_loads.cu: one cooperative 128x256 tile per CTA, m = 128 x grid, n 256, k 16384, so
# each CTA streams its own A rows from HBM and the one B tile every CTA reads, hot in the L2) at
# 2 and 4 stages on 1, 16, 66 and 132 SMs, the 2-stage ones also with only A's or only B's boxes
# at 66 and 132, and the GEMM twin's 2-stage series on the same machine.
# Writes <tag>_loads_scaling_rows.csv under $OUT.
# Usage: OUT=dir bash tools/calibration/run_loads_scaling.sh   (GEMM_TAG, default h100)
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads gemm_sm90_twin
rows="$out/${tag}_loads_scaling_rows.csv"
{
  silicon_header
  echo "# loads rows: name,m,n,k,bm,bn,stages,grid,cycles,clock_mhz (h100_gemm_loads.cu)"
} > "$rows"
for stages in 2 4; do
  for grid in 1 16 66 132; do
    for parts in ab a b; do
      [ "$parts" != ab ] && { [ "$stages" != 2 ] || [ "$grid" -lt 66 ]; } && continue
      echo -n "loads_${parts}_s${stages}_g${grid}," >> "$rows"
      "$bin/h100_gemm_loads" --m $((128 * grid)) --n 256 --k 16384 --rows 128 --tile-n 256 --stages $stages \
        --grid "$grid" --parts $parts --reps 3 >> "$rows" 2>> "$out/run.log"
    done
  done
done
echo "# twin rows: name, then gemm_sm90_twin's columns (m,n,k,schedule,rows_per_wg,tile_n,stages,raster,swizzle,grid,cycles,clock_mhz,...)" >> "$rows"
for grid in 1 16 66 132; do
  echo -n "twin_s2_g${grid}," >> "$rows"
  "$bin/gemm_sm90_twin" --m $((128 * grid)) --n 256 --k 16384 --schedule cooperative --rows-per-wg 64 --tile-n 256 \
    --stages 2 --grid "$grid" --reps 3 >> "$rows" 2>> "$out/run.log"
done
cat "$rows"
