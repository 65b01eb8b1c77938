#!/usr/bin/env bash
# On the H100 (or H200) machine: what crossing between the two L2 partitions costs. The fabric's
# rate was an estimate until these rows (sim_configs/h*.yaml `dies.link_gbytes_per_second`), and the
# ping-pong 8192^3 swizzle-1 GEMM, whose two readers of an A tile often sit in different partitions,
# sends 6 GB across it on the H100 (h100_gemm_traffic.csv). Writes into $OUT (default: this
# directory), each headed by date and nvidia-smi lines:
#   <tag>_l2_fabric.csv      h100_l2_partitions' swap / stay / oneway* rows (the L2
#                            flushed, each partition warms half of F MiB, then one pass in which
#                            every slice is read from the other partition (swap) or from its own
#                            (stay); oneway*: the first half only, the other partition idle;
#                            oneway_cold*: without the warm-up, every line from DRAM; *_s8: 8 boxes
#                            in flight per SM instead of 4), three rounds (the promo_even /
#                            promo_odd modes' rows are h200_l2_promotion_rows.csv, another run)
#   <tag>_l2_fabric_rows.csv the same as `bwsim compare` rows (l2_fabric_<mode>_bytes_per_cycle,F:
#                            the median of the three rounds)
# (h200_l2_fabric_ncu.csv, ncu's counts of some of these launches and of three GEMMs, came from
# this script's first version; run_l2_fabric_ncu.sh takes those counts now, in more detail.)
# Usage: bash tools/calibration/run_l2_fabric.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_l2_partitions
parts="$bin/partitions.txt"
"$bin/h100_l2_partitions" map "$parts" > "$out/${tag}_l2_fabric_map.txt"
csv="$out/${tag}_l2_fabric.csv"
{
  silicon_header
  for round in 1 2 3; do
    for f in 8 16 24 32; do
      "$bin/h100_l2_partitions" sweep "$parts" swap:$f stay:$f oneway:$f oneway_stay:$f oneway_cold:$f oneway_cold_stay:$f \
        swap_s8:$f stay_s8:$f oneway_s8:$f oneway_stay_s8:$f | grep -v "^#"
    done
  done
  silicon_footer
} > "$csv"
cat "$csv"
python3 fabric_rows.py "$csv" run_l2_fabric.sh > "$out/${tag}_l2_fabric_rows.csv"
