#!/usr/bin/env bash
# On the H100/H200 machine: h100_l2_partitions.cu's free modes (no profiler). Pairs of SMs stream
# a cold 6 MiB each; the follower starts once its leader has landed L + 1 boxes of 16 KiB and then
# runs unpaced. Each point prints `free,...` with the followers' start and end gaps behind their
# leaders (globaltimer ns, p10 / p50 / p90 over the pairs) and the program's row. A gap that
# shrinks from start to end is a follower catching up on its leader's lines; one that holds or
# grows, one that does not. Writes $OUT/<GEMM_TAG>_l2_free_lag.txt (default tag h100).
set -uo pipefail
cd "$(dirname "$0")"
source ./device_common.sh
build_sm90 h100_l2_partitions
txt="$out/${tag}_l2_free_lag.txt"
{
  silicon_header
  "$bin/h100_l2_partitions" map "$bin/partitions.txt" | grep '^# map'
  for rep in 1 2; do
    "$bin/h100_l2_partitions" sweep "$bin/partitions.txt" free_same:2 free_same:8 free_same:16 free_same:32 \
      free_cross:8 free_cross:16 lag_same:8 lag_same:16
  done
  silicon_footer
} > "$txt" 2>&1
cat "$txt"
