#!/usr/bin/env bash
# On the H200 (or H100): under a loaded L2 the GPCs stream at different paces, and which GPCs win
# differs from run to run (h200_box_spread_paces.csv; h200_gemm_sm90_tiles_pp128_8192_sw1_run*.csv,
# README "What parts the readers"). Does a GPC's pace follow the physical pages its SMs read (a new
# process maps new pages), the launch, or neither? Three processes of h100_gemm_loads with B shared
# and A private and L2-resident (the clean case of run_loads_joins.sh), each launching 7 times
# alternately on two copies of A (--a-copies 2: other allocations, other pages) with every
# launch's tile log; then two processes of the ping-pong 8192^3 swizzle-1 GEMM twin with the tile
# log of each of its 4 timed launches. Each loads process then probes which L2 partition holds
# each line of the CTAs' private A rows on both copies (--probe-homes). The logs go to
# $OUT/pace_persistence/ (loads_p<P>.csv.r<R>, homes_p<P>.csv, gemm_p<P>.csv.r<R>), the programs'
# rows to <tag>_pace_persistence.csv, and this machine's GPC map (h100_gpc_map) to
# pace_persistence/gpc_map.csv; pace_persistence.py reads them.
# Usage: bash tools/calibration/run_pace_persistence.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads gemm_sm90_twin h100_gpc_map
dir="$out/pace_persistence"
mkdir -p "$dir"
loads=(--m 8192 --n 8192 --k 8192 --rows 128 --tile-n 128 --stages 6 --raster m --parts ab --private-a l2)
gemm=(--m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --raster m --swizzle 1)
csv="$out/${tag}_pace_persistence.csv"
{
  silicon_header
  echo "# process,program,row (h100_gemm_loads: m,n,k,bm,bn,stages,grid,cycles,clock_mhz of its last launch; gemm_sm90_twin: its CSV row)"
  for p in 1 2 3; do
    echo "$p,loads,$(timeout 120 "$bin/h100_gemm_loads" "${loads[@]}" --reps 6 --a-copies 2 --log-reps 1 \
      --tile-log "$dir/loads_p$p.csv" --probe-homes "$dir/homes_p$p.csv" | tail -n 1)"
  done
  for p in 1 2; do
    echo "$p,gemm,$(timeout 180 "$bin/gemm_sm90_twin" "${gemm[@]}" --reps 4 --check 0 --log-reps 1 \
      --tile-log "$dir/gemm_p$p.csv" | tail -n 1)"
  done
  silicon_footer
} > "$csv"
gpc_map_after "$csv" > "$dir/gpc_map.csv"
cat "$csv"
