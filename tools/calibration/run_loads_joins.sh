#!/usr/bin/env bash
# On the H100 (or H200) machine: how much of B's shared reads the coalescer joins in the swizzle-1
# ping-pong 8192^3 loads (h100_gemm_loads.cu, the shape of run_loads_locality.sh), with A's boxes
# beside them shared as in the GEMM, private and L2-resident, private and from HBM, or absent; and
# each A variant alone, so that B's L2 read sectors are the difference. Nsight Compute counts the
# third launch (DRAM bytes read, L2 read sectors and their hits, as run_loads_locality.sh). A
# diagnostic for issue 15: does B stop being joined when A's misses are in flight (the model
# joins 68% of B beside private A from HBM, about 54% beside the shared A)? Writes <tag>_loads_joins.csv in $OUT (default: this directory).
# Usage: bash tools/calibration/run_loads_joins.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads
metrics=$l2_reuse_metrics
shape=(--m 8192 --n 8192 --k 8192 --rows 128 --tile-n 128 --stages 6 --raster m)
csv="$out/${tag}_loads_joins.csv"
{
  silicon_header
  echo "parts,private_a,m,n,k,bm,bn,stages,grid,cycles,clock_mhz,dram_read_bytes,l2_read_sectors,l2_read_hit_sectors,ncu_sm_hz"
  for run in "b -" "ab -" "a -" "ab l2" "a l2" "ab hbm" "a hbm"; do
    read -r parts private <<< "$run"
    args=("${shape[@]}" --parts "$parts")
    [ "$private" = - ] || args+=(--private-a "$private")
    loads_timed_and_counted "" "${args[@]}"
    echo "$parts,$private,$timed,$counted"
  done
  silicon_footer
} > "$csv"
cat "$csv"
