#!/usr/bin/env bash
# On the H100 (or H200) machine: B boxes alone (h100_gemm_loads.cu --parts b, 128x128 tiles,
# 6 stages of 16 KiB, 132 CTAs), in shapes that set how many groups of SMs read one B column at a
# time, and whether it is hot in the L2 or comes from HBM. A diagnostic for issue 15: the swizzle-1
# 8192^3 loads of B alone (64 readers per column, two or three columns at a time, each line cold
# for its first group) take 35.5 k cycles per tile on the H200, every SM alike, where the model
# gives 24 k. Which of the three (readers per line, groups at a time, misses) costs silicon that?
#   hot1   m 67584 n 128,  raster m: every SM reads the one 2 MiB column (hot after the first launch)
#   hot2   m 67584 n 256,  raster n: two columns, alternate CTAs (66 readers each), hot
#   hot4   m 67584 n 512,  raster n: four columns, 33 readers each, hot
#   cold1  m 16896 n 8192, raster m: one new column per wave, all 132 SMs (128 MiB of B: from HBM)
#   cold2  m 8448  n 8192, raster m: two new columns per wave, 66 consecutive CTAs each
#   cold4  m 4224  n 8192, raster m: four, 33 each
#   sw1    m 8192  n 8192, raster m: the GEMM's shape (run_loads_locality.sh PARTS=b)
#   *_s3, *_s12: hot1 and cold1 with 3 and 12 stages (48 and 192 KiB in flight per SM)
# Writes <tag>_loads_groups.csv (one timed row per shape, with the third launch's ncu counts) and
# <tag>_loads_groups_tiles_<name>.csv (tile logs) in $OUT (default: this directory).
# Usage: bash tools/calibration/run_loads_groups.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads
metrics=$l2_reuse_metrics
csv="$out/${tag}_loads_groups.csv"
{
  silicon_header
  echo "name,raster,m,n,k,bm,bn,stages,grid,cycles,clock_mhz,dram_read_bytes,l2_read_sectors,l2_read_hit_sectors,ncu_sm_hz"
} > "$csv"
while read -r name m n raster stages; do
  shape=(--m "$m" --n "$n" --k 8192 --rows 128 --tile-n 128 --stages "$stages" --raster "$raster" --parts b)
  log="$out/${tag}_loads_groups_tiles_${name}.csv"
  loads_timed_and_counted "$log.tmp" "${shape[@]}"
  echo "$name,$raster,$timed,$counted" >> "$csv"
  { silicon_header; echo "# h100_gemm_loads ${shape[*]} (run_loads_groups.sh): $timed"; cat "$log.tmp"; } > "$log"
  rm -f "$log.tmp"
done <<'SHAPES'
hot1 67584 128 m 6
hot2 67584 256 n 6
hot4 67584 512 n 6
cold1 16896 8192 m 6
cold2 8448 8192 m 6
cold4 4224 8192 m 6
sw1 8192 8192 m 6
hot1_s3 67584 128 m 3
hot1_s12 67584 128 m 12
cold1_s3 16896 8192 m 3
cold1_s12 16896 8192 m 12
SHAPES
silicon_footer >> "$csv"
cat "$csv"
