#!/usr/bin/env bash
# On the H100 (or H200) machine: how many of the GEMM twin's loads reach the L2 slices as TEX read
# requests (128 B each; the rest were joined before the slices), with its DRAM reads, for the rows
# the join model still misses: ping-pong 128x128 8192^3 (HBM-bound, chaotic) and cooperative
# 128x256 8192^3 and 16384^3 (the sustained row), beside the 4096^3 cooperative one that
# run_l2_merge_ncu.sh measured (a check that the two agree). The timed launch after two warm-ups,
# as run_gemm_traffic.sh. Writes $OUT/${GEMM_TAG}_gemm_requests_ncu.csv (run,metric,value).
set -euo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 gemm_sm90_twin
metrics=lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,dram__bytes_read.sum,gpu__time_duration.sum
metrics+=,sm__cycles_elapsed.avg.per_second
csv="$out/${tag}_gemm_requests_ncu.csv"
{
  ncu_rows_header
  twin_ncu_rows coop_4096 4096 4096 4096 cooperative 64 256 4
  twin_ncu_rows coop_8192 8192 8192 8192 cooperative 64 256 4
  twin_ncu_rows pp128_8192 8192 8192 8192 pingpong 128 128 6
  twin_ncu_rows coop_16384 16384 16384 16384 cooperative 64 256 4
} > "$csv"
cat "$csv"
