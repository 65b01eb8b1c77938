#!/usr/bin/env bash
# On the H100 (or H200) machine: the ping-pong 128x128 8192^3 GEMM's loads without its math
# (h100_gemm_loads.cu: the twin's tile order, raster M, swizzle 1, 6 stages, each stage refilled
# as soon as it lands), timed with its tile log and counted by Nsight Compute (DRAM bytes read of
# the third launch, as run_gemm_locality.sh counts the GEMM). A diagnostic for issue 15: does the
# swizzle-1 order lose its A reuse on silicon without the tensor pipe's pace? Writes
# <tag>_gemm_loads_locality.csv (the timed row and the counts) and
# <tag>_gemm_loads_tiles_pp128_8192_sw1.csv (the tile log) in $OUT (default: this directory).
# PARTS=a (or b) loads only the A (or B) boxes of each stage, into files named with _a (or _b);
# PROMOTION=128 gives the operands 128B L2 promotion instead of 256B, into files named with _p128.
# Usage: bash tools/calibration/run_loads_locality.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads
metrics=$l2_reuse_metrics
parts="${PARTS:-ab}"
promotion="${PROMOTION:-256}"
case "$promotion" in 128|256) ;; *) echo "PROMOTION: 128 or 256, got $promotion" >&2; exit 1 ;; esac
suffix=""
[ "$parts" = ab ] || suffix="_$parts"
[ "$promotion" = 256 ] || suffix+="_p$promotion"
shape=(--m 8192 --n 8192 --k 8192 --rows 128 --tile-n 128 --stages 6 --raster m --parts "$parts"
       --promotion "$promotion")
csv="$out/${tag}_gemm_loads_locality${suffix}.csv"
log="$out/${tag}_gemm_loads_tiles_pp128_8192_sw1${suffix}.csv"
loads_timed_and_counted "$log.tmp" "${shape[@]}"
{
  silicon_header
  echo "# h100_gemm_loads ${shape[*]}"
  echo "m,n,k,bm,bn,stages,grid,cycles,clock_mhz,dram_read_bytes,l2_read_sectors,l2_read_hit_sectors,ncu_sm_hz"
  echo "$timed,$counted"
  silicon_footer
} > "$csv"
{ silicon_header; echo "# h100_gemm_loads ${shape[*]} (run_loads_locality.sh): $timed"; cat "$log.tmp"; } > "$log"
rm -f "$log.tmp"
cat "$csv"
