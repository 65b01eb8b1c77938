#!/usr/bin/env bash
# On the H200 (or H100) machine: ncu's DRAM bytes, L2 read sectors and hits, and fabric reads of the
# twin's timed launch (the third, after two warm-ups) for the six 4096^3 rows of the gemm_sm90
# table, as h100_gemm_traffic.csv holds them for the H100. Writes <tag>_gemm_traffic_4096.csv in
# $OUT (default: this directory). A diagnostic: does the model's L2 keep what silicon's keeps there?
# Usage: GEMM_TAG=h200 bash tools/calibration/run_gemm_traffic_4096.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 gemm_sm90_twin
metrics=$l2_reuse_metrics,lts__t_sectors_srcunit_ltcfabric_op_read.sum
csv="$out/${tag}_gemm_traffic_4096.csv"
{
  silicon_header
  echo "m,n,k,schedule,rows_per_wg,tile_n,stages,$metrics"
  for row in "cooperative 64 256 4" "cooperative 64 256 2" "cooperative 64 256 3" "cooperative 128 128 4" \
             "pingpong 128 128 6" "pingpong 64 256 4"; do
    set -- $row
    echo "4096,4096,4096,$1,$2,$3,$4,$(ncu_values k_gemm 2 "$bin/gemm_sm90_twin" --m 4096 --n 4096 --k 4096 --schedule "$1" \
      --rows-per-wg "$2" --tile-n "$3" --stages "$4" --raster m --swizzle 1 --reps 1)"
  done
} > "$csv"
cat "$csv"
