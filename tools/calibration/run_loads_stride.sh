#!/usr/bin/env bash
# On the H200 (or H100) machine: does the row stride of the GEMM's operands set how much of A the
# L2 keeps for the swizzle-1 ping-pong 8192^3 order? A diagnostic for issue 15. In that order the
# model's CTAs read an A tile that another round's CTA read shortly before far more often than
# silicon's, and read 2.8 GB of A from HBM where silicon reads 4.4 (h200_gemm_loads_locality_a_p128.csv):
# silicon may keep less of a stream of 128-byte rows 16 KiB apart than the model's L2 does (its set
# index), which a stride other than a power of two would change. So: the GEMM's loads without the
# math (h100_gemm_loads.cu, as run_loads_locality.sh: tile order, 6 stages) at K = 8128 .. 8448
# (rows 16256 .. 16896 bytes apart), A alone with the 128B and 256B promotions and A and B with
# 256B, each timed once and counted by ncu (its third launch); then the whole GEMM twin
# (gemm_sm90_twin, 10 timed launches) at K = 8192 and 8256.
# Writes <tag>_gemm_loads_stride.csv (one row per run: parts, promotion, the timed row, the counts)
# and <tag>_gemm_stride_launches.csv (k,launch,cycles,mhz,span_ns per timed twin launch) in $OUT.
# Usage: GEMM_TAG=h200 OUT=dir bash tools/calibration/run_loads_stride.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads gemm_sm90_twin
metrics=$l2_reuse_metrics
csv="$out/${tag}_gemm_loads_stride.csv"
{
  silicon_header
  echo "parts,promotion,m,n,k,bm,bn,stages,grid,cycles,clock_mhz,dram_read_bytes,l2_read_sectors,l2_read_hit_sectors,ncu_sm_hz"
  for run in a:128:8192 a:128:8128 a:128:8256 a:128:8320 a:128:8448 a:256:8192 a:256:8256 a:256:8448 ab:256:8192 ab:256:8256; do
    IFS=: read -r parts promotion k <<< "$run"
    loads_timed_and_counted "" --m 8192 --n 8192 --k "$k" --rows 128 --tile-n 128 --stages 6 --raster m \
      --parts "$parts" --promotion "$promotion"
    echo "$parts,$promotion,$timed,$counted"
  done
  silicon_footer
} > "$csv"
launches="$out/${tag}_gemm_stride_launches.csv"
{
  silicon_header
  echo "k,launch,cycles,mhz,span_ns"
  for k in 8192 8256; do
    twin_launches "$k" --m 8192 --n 8192 --k "$k" --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 \
      --raster m --swizzle 1 --grid 0 --reps 10
  done
  silicon_footer
} > "$launches"
cat "$csv" "$launches"
