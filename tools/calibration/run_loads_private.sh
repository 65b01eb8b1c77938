#!/usr/bin/env bash
# On the H100/H200 machine: does an SM's faster pace under full-chip load (h100_gemm_loads.cu,
# the fast SMs of the ping-pong 128x128 GEMM's loads) need A boxes other SMs read too? Runs the
# GEMM's loads at 4096^3 (ping-pong 128x128 tiles, 6 stages, 132 CTAs) as they are, then with
# each CTA's A private (--private-a hbm: from HBM every tile; l2: hot in the L2), with and
# without B, and the first configuration again (is the fast set stable within the machine?); the
# private hot A alone at grids 120, 100 and 66, and with 1, 2 or 3 stages in flight (how much
# load the fast set needs); h100_gpc_map.cu (which GPC each SM is in); and the twin's ping-pong
# 128x128 4096^3 GEMM with --tile-log (do the GEMM's fast SMs match the loads'?), all on one machine.
# Writes <tag>_gemm_loads_tiles_<name>.csv, <tag>_gemm_loads_private_rows.csv and
# <tag>_gpc_map_loads.csv and <tag>_gemm_sm90_tiles_pp128_4096_loads.csv under $OUT.
# Usage: OUT=dir bash tools/calibration/run_loads_private.sh   (GEMM_TAG, default h100)
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads h100_gpc_map gemm_sm90_twin
rows="$out/${tag}_gemm_loads_private_rows.csv"
{
  silicon_header
  echo "name,m,n,k,bm,bn,stages,grid,cycles,clock_mhz"
} > "$rows"
run() {  # name, then the program's arguments after the common ones
  local name=$1
  shift
  local log="$out/${tag}_gemm_loads_tiles_${name}.csv"
  echo -n "$name," >> "$rows"
  "$bin/h100_gemm_loads" --m 4096 --n 4096 --k 4096 --rows 128 --tile-n 128 --stages 6 --reps 5 "$@" \
    --tile-log "$log" >> "$rows" 2>> "$out/run.log"
  { head -n 3 "$rows"; echo "# h100_gemm_loads $* (run_loads_private.sh, configuration $name)"; cat "$log"; } \
    > "$log.tmp"
  mv "$log.tmp" "$log"
}
run shared_ab
run private_hbm_ab --private-a hbm
run private_l2_ab --private-a l2
run private_hbm_a --private-a hbm --parts a
run private_l2_a --private-a l2 --parts a
run shared_ab_again
for grid in 120 100 66; do run private_l2_a_g$grid --private-a l2 --parts a --grid $grid; done
for stages in 1 2 3; do run private_l2_a_s$stages --private-a l2 --parts a --stages $stages; done
gpc_map_after "$rows" > "$out/${tag}_gpc_map_loads.csv" 2>> "$out/run.log"
twin_log="$out/${tag}_gemm_sm90_tiles_pp128_4096_loads.csv"
echo "# gemm_sm90_twin (its own columns: m,n,k,schedule,rows_per_wg,tile_n,stages,raster,swizzle,grid,cycles,clock_mhz,...)" >> "$rows"
"$bin/gemm_sm90_twin" --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 \
  --reps 5 --tile-log "$twin_log" >> "$rows" 2>> "$out/run.log"
{ head -n 3 "$rows"; echo "# gemm_sm90_twin ping-pong 128x128 4096^3 (run_loads_private.sh; its row ends $(basename "$rows"))"
  cat "$twin_log"; } > "$twin_log.tmp"
mv "$twin_log.tmp" "$twin_log"
cat "$rows"
