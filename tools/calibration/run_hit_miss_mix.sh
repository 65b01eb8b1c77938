#!/usr/bin/env bash
# On the H100 (or H200) machine: h100_hit_miss_mix.cu's rates (-> $OUT/${GEMM_TAG}_hit_miss_mix.csv),
# then ncu's L2 counters of one timed launch of each mix appended as comment lines.
set -euo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_hit_miss_mix
csv="$out/${tag}_hit_miss_mix.csv"
metrics=lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum
metrics+=,lts__t_sectors_op_read_lookup_miss.sum,lts__d_sectors.sum,lts__d_sectors_fill_device.sum
metrics+=,dram__bytes_read.sum,gpu__time_duration.sum
{
  silicon_header
  "$bin/h100_hit_miss_mix"
  echo "# ncu (one timed launch of each mix after its warm-up): variant,$metrics"
  for v in 0 1 2 3 4 5; do echo "# $v,$(ncu_values k_mix 1 "$bin/h100_hit_miss_mix" "$v" || echo FAILED)"; done
} > "$csv"
cat "$csv"
