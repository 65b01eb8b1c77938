#!/usr/bin/env bash
# On the H100 (or H200) machine: what Nsight Compute's counts of the link between the L2's
# partitions mean, for the fabric rows (h100_l2_partitions swap / oneway, run_l2_fabric.sh) and the
# twin's 8192^3 GEMMs (ping-pong swizzles 1 and 2, cooperative), and whether a partition keeps a
# copy of lines the 256B L2 promotion brought (promo_even / promo_odd): the fabric sectors by operation
# and lookup result, and the cycles the fabric-to-slice path was active and stalled (a busy link
# shows there). Writes <tag>_l2_fabric_detail_ncu.csv in $OUT (default: this directory): the
# metrics this ncu has, one row per run.
# Usage: bash tools/calibration/run_l2_fabric_ncu.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
fabric_build
wanted=(lts__t_sectors_srcunit_ltcfabric.sum lts__t_sectors_srcunit_ltcfabric_op_read.sum
        lts__t_sectors_srcunit_ltcfabric_op_write.sum lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum
        lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum lts__t_requests_srcunit_ltcfabric.sum
        lts__ltcfabric2lts_cycles_active.avg lts__ltcfabric2lts_cycles_active.max
        lts__ltcfabric2lts_cycles_stalled.avg lts__cycles_elapsed.avg dram__bytes_read.sum gpu__time_duration.sum)
available=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
metrics=""
for m in "${wanted[@]}"; do
  grep -qx "${m%.*}" <<< "$available" && metrics+="${metrics:+,}$m"
done
csv="$out/${tag}_l2_fabric_detail_ncu.csv"
{
  silicon_header
  echo "run,$metrics"
  for point in swap:16 oneway:16 oneway_cold:16 promo_even:16 promo_odd:16; do
    echo "$point,$(fabric_point_values "$point")"
  done
  PP="--schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6"
  for run in "pp128_sw1|$PP --swizzle 1" "pp128_sw2|$PP --swizzle 2" \
             "coop|--schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4 --swizzle 1"; do
    echo "${run%%|*},$(ncu_values k_gemm 2 "$bin/gemm_sm90_twin" ${run#*|} --m 8192 --n 8192 --k 8192 --raster m --reps 1)"
  done
} > "$csv"
cat "$csv"
