#!/usr/bin/env bash
# On the H100 (or H200) machine: the ping-pong 128x128 GEMM of the validation row outside 10%
# (M = N = 8192, raster M) at K = 2048 .. 12288, swizzle 1 (an A tile's two readers 64 CTAs apart)
# and swizzle 2 (the two in one TPC), timed (the twin's row: cycles and the SM clock during the
# launch) and counted by Nsight Compute (DRAM bytes read, L2 read and hit sectors of the third
# launch). A diagnostic, not a calibration: one round of tiles reads K x 16 KiB of A, from about
# half the L2 (K = 2048) to three times it (K = 12288), so the sweep shows at which size the
# model's L2 reuse leaves silicon's. Writes <tag>_gemm_k_sweep.csv (`bwsim compare` reads it) and
# <tag>_gemm_k_sweep_ncu.csv in $OUT (default: this directory).
# Usage: bash tools/calibration/run_gemm_k_sweep.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 gemm_sm90_twin
metrics=$l2_reuse_metrics
csv="$out/${tag}_gemm_k_sweep.csv"
ncu_csv="$out/${tag}_gemm_k_sweep_ncu.csv"
twin_csv_headers "$csv" "$ncu_csv"
for k in 2048 4096 6144 8192 12288; do
  for swizzle in 1 2; do
    twin_timed_and_counted "$csv" "$ncu_csv" --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 \
      --raster m --swizzle "$swizzle" --m 8192 --n 8192 --k "$k"
  done
done
