#!/usr/bin/env bash
# On the H200 (or H100): when do the SMs of one GPC ask for the same B box? The ping-pong 8192^3
# swizzle-1 GEMM twin and its loads alone (h100_gemm_loads: B alone, B beside private hot A, A and
# B shared as in the GEMM), each with a tile log of every k-block's issue (--kb-log 1), and this
# machine's GPC map. kb_joins.py reads them: how long after a GPC-mate's request for the same B box
# each request comes (silicon joins a partner's read up to about the leader's L2 wait later:
# h200_join_window_arrivals*.csv). A diagnostic for issue 15. Writes <tag>_kb_logs.csv (the
# programs' rows) and kb_logs/ (the logs, gpc_map.csv) in $OUT.
# Usage: bash tools/calibration/run_kb_logs.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_gemm_loads gemm_sm90_twin h100_gpc_map
dir="$out/kb_logs"
mkdir -p "$dir"
shape=(--m 8192 --n 8192 --k 8192 --stages 6 --raster m)
csv="$out/${tag}_kb_logs.csv"
{
  silicon_header
  echo "# log,row (gemm_sm90_twin's CSV row, or h100_gemm_loads': m,n,k,bm,bn,stages,grid,cycles,clock_mhz)"
  echo "gemm,$(timeout 180 "$bin/gemm_sm90_twin" "${shape[@]}" --schedule pingpong --rows-per-wg 128 --tile-n 128 \
    --swizzle 1 --reps 1 --check 0 --kb-log 1 --tile-log "$dir/gemm.csv" | tail -n 1)"
  for run in "b b -" "ab_l2 ab l2" "ab ab -"; do
    read -r name parts private <<< "$run"
    args=("${shape[@]}" --rows 128 --tile-n 128 --parts "$parts" --reps 1 --kb-log 1 --tile-log "$dir/loads_$name.csv")
    [ "$private" = - ] || args+=(--private-a "$private")
    echo "loads_$name,$(timeout 120 "$bin/h100_gemm_loads" "${args[@]}" | tail -n 1)"
  done
  silicon_footer
} > "$csv"
gpc_map_after "$csv" > "$dir/gpc_map.csv"
cat "$csv"
