#!/usr/bin/env bash
# On the H100 (or H200) machine: the ping-pong 128x128 8192^3 GEMM (the one validation row outside
# 10%) under the tile scheduler's raster orders and swizzles, timed (gemm_sm90_twin's own row: cycles
# and the SM clock during the launch) and counted by Nsight Compute (DRAM bytes read, L2 read and
# hit sectors of the third launch, as run_gemm_traffic.sh counts them). A diagnostic, not a
# calibration: no config value is set from it. It asks whether the model's L2 reuse follows
# silicon's when the order of the tiles changes how far apart in time the CTAs that share A and B
# tiles read them. Writes <tag>_gemm_locality.csv (the timed rows, `bwsim compare` reads them) and
# <tag>_gemm_locality_ncu.csv (the counts) in $OUT (default: this directory).
# Usage: bash tools/calibration/run_gemm_locality.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 gemm_sm90_twin
metrics=$l2_reuse_metrics
csv="$out/${tag}_gemm_locality.csv"
ncu_csv="$out/${tag}_gemm_locality_ncu.csv"
twin_csv_headers "$csv" "$ncu_csv"
PP="--schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6"
CO="--schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4"
row() {  # row SCHEDULE_ARGS... : the timed row, then ncu's counts of the same launch shape
  twin_timed_and_counted "$csv" "$ncu_csv" "$@" --m 8192 --n 8192 --k 8192
}
row $CO --raster m --swizzle 1
for raster in m n; do
  for swizzle in 1 2 4 8; do
    row $PP --raster "$raster" --swizzle "$swizzle"
  done
done
# The tile logs of swizzle 1 and 2 (raster m): how far apart in time the readers of one A tile run
# in each order (tools/calibration/tile_drift.py reads them; the twin's --tile-log as in
# run_tile_log.sh). <tag>_gemm_sm90_tiles_pp128_8192_sw<S>.csv in $OUT.
for swizzle in 1 2; do
  log="$out/${tag}_gemm_sm90_tiles_pp128_8192_sw${swizzle}.csv"
  timed=$(timeout 120 "$bin/gemm_sm90_twin" $PP --m 8192 --n 8192 --k 8192 --raster m --swizzle "$swizzle" --reps 5 \
          --tile-log "$log.tmp" | tail -n 1)
  { silicon_header; echo "# gemm_sm90_twin --tile-log (run_gemm_locality.sh): $timed"; cat "$log.tmp"; } > "$log"
  rm -f "$log.tmp"
  head -n 6 "$log"
done
