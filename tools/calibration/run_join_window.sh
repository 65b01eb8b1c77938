#!/usr/bin/env bash
# On the H100 (or H200) machine: h100_join_window.cu for each mode (hit, miss), pairing (tpc, gpc,
# cross) and partner delay: its own row (median load latencies of leaders and partners) and Nsight
# Compute's L2 counters of the same launch run again under ncu, joined into one row ->
# $OUT/${GEMM_TAG}_join_window${SUFFIX}.csv; then the arrivals variant (with and without background
# load) -> $OUT/${GEMM_TAG}_join_window_arrivals.csv. MODES and PAIRINGS (default all) narrow the
# rows; ARRIVALS=0 skips the arrivals variant.
set -euo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_join_window
metrics=lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_op_read_lookup_miss.sum,dram__bytes_read.sum
metrics+=,gpu__time_duration.sum
csv="$out/${tag}_join_window${SUFFIX:-}.csv"
{
  silicon_header
  echo "# ncu,$(ncu --version | tail -n 1)"
  echo "mode,pairing,delay_cycles,sms,loads,box_bytes,${metrics//.sum/}"
  for mode in ${MODES:-hit miss}; do
    for pairing in ${PAIRINGS:-tpc gpc cross}; do
      for delay in 0 32 64 128 256 512 1024; do
        row=$("$bin/h100_join_window" $mode $pairing $delay | tail -n 1)
        skip=0
        [ $mode = hit ] && skip=1
        echo "$row,$(ncu_values k_pair_stream $skip "$bin/h100_join_window" $mode $pairing $delay || echo FAILED)"
      done
    done
  done
} > "$csv"
cat "$csv"
[ "${ARRIVALS:-1}" = 1 ] || exit 0
{
  silicon_header
  "$bin/h100_join_window" arrivals
} > "$out/${tag}_join_window_arrivals.csv"
cat "$out/${tag}_join_window_arrivals.csv"
