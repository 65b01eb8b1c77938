#!/usr/bin/env bash
# On the H100 (or H200) machine: do the two L2 partitions serve their SMs alike, and does the link
# between them carry the GEMM's boxes as it carries the fabric rows'? The swizzle-1 ping-pong
# 8192^3 GEMM's SMs of partition 1 often start it a tenth behind partition 0's (README, "The
# partitions start apart"). This measures, on one chip: the crossing in each direction
# (h100_l2_partitions' oneway* modes, partition 0's SMs warming and partition 1's reading, and
# oneway_back*, the other way round), the same with the GEMM's boxes (128 rows 16 KiB apart) with
# its 256B promotion (_k) or 128B (_k128) and with the modes' own boxes at 256B (_c256); each
# partition's readers' spans in every mode (partition_spans lines); what a line held only by the
# other partition costs in each direction (h100_far_hits); and the GEMM's tile logs, to be read
# with the chip's own partition map.
# Writes into $OUT (default: this directory), <name> being $NAME (default partition_paces):
#   <tag>_<name>_map.txt                h100_l2_partitions' map of this chip (SM -> partition)
#   <tag>_<name>_far_hits.csv           h100_far_hits' rows (both directions, three probe SMs each)
#   <tag>_<name>_fabric.csv             the sweep's rows, three rounds
#   <tag>_<name>_fabric_rows.csv        the same as `bwsim compare` rows (fabric_rows.py)
#   <tag>_<name>_tiles_<n>.csv          gemm_sm90_twin --tile-log of the ping-pong 128x128 8192^3
#                                       swizzle-1 row (n = 1, 2) and of the cooperative 8192^3 (coop)
# Usage: bash tools/calibration/run_partition_paces.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
name="${NAME:-partition_paces}"
build_sm90 h100_l2_partitions h100_far_hits gemm_sm90_twin
parts="$bin/partitions.txt"
"$bin/h100_l2_partitions" map "$parts" > "$out/${tag}_${name}_map.txt"
{ silicon_header; "$bin/h100_far_hits" "$parts"; } > "$out/${tag}_${name}_far_hits.csv"
cat "$out/${tag}_${name}_far_hits.csv"
csv="$out/${tag}_${name}_fabric.csv"
{
  silicon_header
  for round in 1 2 3; do
    for f in 16 32; do
      "$bin/h100_l2_partitions" sweep "$parts" swap:$f oneway:$f oneway_back:$f oneway_stay:$f oneway_back_stay:$f \
        oneway_cold:$f oneway_back_cold:$f oneway_cold_stay:$f oneway_back_cold_stay:$f \
        swap_k:$f stay_k:$f oneway_k:$f oneway_back_k:$f oneway_stay_k:$f oneway_cold_k:$f oneway_back_cold_k:$f \
        oneway_cold_stay_k:$f swap_k128:$f oneway_k128:$f swap_c256:$f oneway_c256:$f | grep -v "^# cta_partition"
    done
  done
  silicon_footer
} > "$csv"
python3 fabric_rows.py "$csv" run_partition_paces.sh > "$out/${tag}_${name}_fabric_rows.csv"
grep "^row" "$csv" | head -n 42
tiles() {  # tiles N ARG...: the twin's tile log of that row into <tag>_<name>_tiles_N.csv
  local log="$out/${tag}_${name}_tiles_$1.csv" timed
  shift
  timed=$(timeout 120 "$bin/gemm_sm90_twin" "$@" --m 8192 --n 8192 --k 8192 --raster m --reps 5 --tile-log "$log.tmp" |
          tail -n 1)
  { silicon_header; echo "# gemm_sm90_twin --tile-log (run_partition_paces.sh): $timed"; cat "$log.tmp"; } > "$log"
  rm -f "$log.tmp"
  echo "$timed"
}
PP="--schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --swizzle 1"
tiles 1 $PP
tiles 2 $PP
tiles coop --schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4 --swizzle 1
