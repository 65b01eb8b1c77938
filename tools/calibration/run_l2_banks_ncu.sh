#!/usr/bin/env bash
# On the H100 (or H200) machine: the L2's data-bank and fill counters (ncu) of h100_stage_parts.cu's
# variants, one launch each after a warm-up: what a filled line costs the banks beside reads.
# Writes $OUT/${GEMM_TAG}_l2_banks_ncu.csv (variant,grid,metric,value). VARIANTS and GRIDS choose
# the runs (default: a abp aa b ab abh bb abp1 at 132 and 16 SMs).
set -euo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_stage_parts
metrics=lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_miss.sum,lts__t_sectors_op_read_lookup_hit.sum
metrics+=,lts__d_sectors.sum,lts__d_sectors_fill_device.sum,dram__bytes_read.sum,lts__t_sectors_op_write.sum
metrics+=,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_requests_op_read.sum,lts__t_sectors.sum
csv="$out/${tag}_l2_banks_ncu.csv"
{
  silicon_header
  echo "variant,grid,metric,value"
  for v in ${VARIANTS:-a abp aa b ab abh bb abp1}; do
    for g in ${GRIDS:-132 16}; do
      # the second profiled launch (the first is the warm-up); ncu's numbers carry thousands commas
      ncu --metrics "$metrics" --csv "$bin/h100_stage_parts" "$v" "$g" 2>/dev/null |
        awk -v v="$v" -v g="$g" -F'","' '$1 == "\"1" { gsub(/[",]/, "", $15); print v "," g "," $13 "," $15 }'
    done
  done
} > "$csv"
cat "$csv"
