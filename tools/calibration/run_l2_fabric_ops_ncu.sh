#!/usr/bin/env bash
# On the H200 (or H100) machine: which operations make up the sectors that cross the link between
# the L2's partitions. run_l2_fabric_ncu.sh found that in the twin's GEMMs only 65-66% of
# lts__t_sectors_srcunit_ltcfabric are reads (op_read) or writes, against 94-95% in the fabric rows;
# this counts every per-operation and per-lookup fabric metric this ncu knows, for the swizzle-1
# ping-pong 8192^3 GEMM and the swap / oneway_cold fabric rows at 16 MiB. Writes
# <tag>_l2_fabric_ops_ncu.csv in $OUT (default: this directory): run,metric,value rows, and the
# list of fabric metrics as comment lines.
# Usage: GEMM_TAG=h200 bash tools/calibration/run_l2_fabric_ops_ncu.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
fabric_build
fabric=$(ncu --query-metrics 2>/dev/null | awk '{print $1}' | grep -E '^lts__.*ltcfabric' | sort -u)
metrics=""
for m in $fabric; do
  case "$m" in
    lts__t_sectors_srcunit_ltcfabric*|lts__t_requests_srcunit_ltcfabric*) metrics+="${metrics:+,}$m.sum" ;;
    *) metrics+="${metrics:+,}$m.avg" ;;
  esac
done
metrics+=",lts__t_sectors_srcunit_ltcfabric.max,lts__t_sectors_srcunit_ltcfabric.min,lts__t_sectors_op_read.sum,lts__t_sectors.sum,lts__cycles_elapsed.avg,dram__bytes_read.sum,gpu__time_duration.sum"
csv="$out/${tag}_l2_fabric_ops_ncu.csv"
{
  silicon_header
  sed 's/^/# metric,/' <<< "$fabric"
  echo "run,metric,value"
  for point in swap:16 oneway_cold:16; do
    if values=$(fabric_point_values "$point"); then
      metric_rows "$point" "$values"
    else
      echo "# FAILED $point"
    fi
  done
  twin_ncu_rows pp128_sw1 8192 8192 8192 pingpong 128 128 6
  silicon_footer
} > "$csv"
cat "$csv"
