#!/usr/bin/env bash
# On the H100 (or H200) machine: does the L2 read a line's data once for requests from several
# SMs? Nsight Compute's tag-stage read sectors (every request that reaches a slice) against its
# data-bank sectors, for h100_shared_drift.cu's unpaced shared-ring streams (STEP 0, 1, 2, 8, 16;
# L2-resident: no fills, no writes) and for gemm_sm90_twin.cu's 4096^3 rows (the timed launch after
# two warm-ups, as run_gemm_traffic.sh). Writes $OUT/${GEMM_TAG}_l2_merge_ncu.csv (run,metric,value).
set -euo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_shared_drift gemm_sm90_twin
metrics=lts__t_sectors_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__d_sectors.sum
metrics+=,lts__d_sectors_fill_device.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum
metrics+=,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
csv="$out/${tag}_l2_merge_ncu.csv"
{
  silicon_header
  echo "# ncu,$(ncu --version | tail -n 1)"
  echo "run,metric,value"
  for step in 0 1 2 8 16; do ncu_rows "ring_step$step" k_stream_logged 1 "$bin/h100_shared_drift" "$step"; done
  t="$bin/gemm_sm90_twin --m 4096 --n 4096 --k 4096 --reps 1 --raster m --swizzle 1 --grid 0"
  ncu_rows coop_64x256_s4 k_gemm 2 $t --schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4
  ncu_rows coop_128x128_s4 k_gemm 2 $t --schedule cooperative --rows-per-wg 128 --tile-n 128 --stages 4
  ncu_rows pp_128x128_s6 k_gemm 2 $t --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
  ncu_rows pp_64x256_s4 k_gemm 2 $t --schedule pingpong --rows-per-wg 64 --tile-n 256 --stages 4
} > "$csv"
cat "$csv"
