#!/usr/bin/env bash
# On the H100/H200 machine: what the CPC load gate (l2.cpc_load_bytes_in_flight) counts. 132 CTAs,
# each streaming its own A rows (h100_gemm_loads.cu --private-a l2|hbm --parts a: hot in the L2 or
# from HBM), with the bytes in flight per SM swept by the stage count, at three box sizes (64, 128
# and 256 rows of 128 B: 8, 16 and 32 KiB). A limit on bytes gives the short CPCs' SMs the same
# pace at the same bytes whatever the box size, even paces up to limit / 6 per SM and at most 1.5x
# beyond limit / 4; a limit on requests (boxes) would not. B is not loaded, so --tile-n 8 only
# keeps its (unused) SMEM share small; --n 1024 gives 31 tiles of 64 k-blocks per CTA.
# Writes <tag>_cpc_depth_rows.csv and <tag>_cpc_depth_tiles_<name>.csv under $OUT
# (tile_drift.py --fast-set <tag>_cpc_depth_tiles_r128_s6.csv LOG... gives the paces).
# Usage: OUT=dir bash tools/calibration/run_cpc_depth.sh   (GEMM_TAG, default h100)
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads
rows="$out/${tag}_cpc_depth_rows.csv"
{
  silicon_header
  echo "name,m,n,k,bm,bn,stages,grid,cycles,clock_mhz"
} > "$rows"
run() {  # name, where (l2|hbm), rows per box, stages
  local name=$1 where=$2 bm=$3 stages=$4
  local log="$out/${tag}_cpc_depth_tiles_${name}.csv"
  echo -n "$name," >> "$rows"
  "$bin/h100_gemm_loads" --m 4096 --n 1024 --k 4096 --rows "$bm" --tile-n 8 --stages "$stages" --reps 3 \
    --private-a "$where" --parts a --tile-log "$log" >> "$rows" 2>> "$out/run.log"
  { head -n 3 "$rows"; echo "# h100_gemm_loads --private-a $where --parts a --rows $bm --stages $stages (run_cpc_depth.sh)"
    cat "$log"; } > "$log.tmp"
  mv "$log.tmp" "$log"
}
for s in 6 1 2 3 4 5 7 8 10 12; do run "r128_s$s" l2 128 "$s"; done
for s in 2 3 4 6; do run "r256_s$s" l2 256 "$s"; done
for s in 8 10 12 16 24; do run "r64_s$s" l2 64 "$s"; done
for s in 4 6 8 12; do run "hbm_r128_s$s" hbm 128 "$s"; done
run r128_s6_again l2 128 6
cat "$rows"
