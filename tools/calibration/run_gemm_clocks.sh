#!/usr/bin/env bash
# On the H200 (or H100) machine: the clocks of the L2, the DRAM and the SMs while the twin's GEMMs
# run as the validation rows time them, and how much one timed launch differs from the next. The
# swizzle-1 ping-pong 8192^3 row moves as many bytes between the L2's partitions in the model as on
# silicon (3.92 GB against 3.98) with the link 95% busy, and the model's time barely moves with
# the SM clock (1741 us at 1980 MHz, 1690 at 1608), yet silicon's timed launch at 1608 MHz took
# 1967 us and ncu's launch of the same row 1793 us. This asks which clock moved.
# - ${tag}_${name}_plain.csv: kind,row,launch,cycles,mhz,span_ns for every timed launch of the twin
#   (--reps 5) after each host sleep in $SLEEPS ms before a launch (kind sleepT; sleepT_p128 with
#   the operands' 128B L2 promotion).
# - ${tag}_${name}_ncu.csv: run,row,launch and $metrics for every launch of k_gemm (two warm-ups,
#   then the timed ones) under ncu in application replay at the GPU's own clock (run app; app_p128
#   with 128B promotion), and for the fabric unit rows swap and oneway_cold at 16 and 32 MiB and
#   oneway at 32 (h100_l2_partitions sweep); ncu's pass lines in ${tag}_${name}_ncu_<row>[_p128].log.
#   A run that fails leaves a "# FAILED" line in its file.
# - ${tag}_${name}_smi.csv: nvidia-smi's SM and memory clocks and power every 10 ms meanwhile
#   (timestamps only: which launch a sample fell in is not marked).
# Settings: NAME (gemm_clocks), SLEEPS ("20 0 500"), PROMOTIONS ("256"; "256 128" alternates the
# two for every sleep), FABRIC (1; 0 skips the unit rows).
# Usage: GEMM_TAG=h200 OUT=dir bash tools/calibration/run_gemm_clocks.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
fabric_build
name="${NAME:-gemm_clocks}"
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg,lts__ltcfabric2ltc_cycles_active.avg,dram__bytes_read.sum,lts__t_sectors_srcunit_ltcfabric.sum
plain="$out/${tag}_${name}_plain.csv"
counted="$out/${tag}_${name}_ncu.csv"
{ silicon_header; echo "kind,row,launch,cycles,mhz,span_ns"; } > "$plain"
{ silicon_header; echo "# ncu,$(ncu --version | tail -n 1),--replay-mode application --clock-control none --cache-control none"
  echo "run,row,launch,${metrics}"; } > "$counted"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 10 > "$out/${tag}_${name}_smi.csv" &
smi=$!
trap 'kill "$smi"' EXIT
suffix() { [ "$1" = 256 ] || echo "_p$1"; }
row() {  # row NAME M N K SCHEDULE ROWS_PER_WG TILE_N STAGES
  local row=$1 args=(--m "$2" --n "$3" --k "$4" --schedule "$5" --rows-per-wg "$6" --tile-n "$7" --stages "$8"
                     --raster m --swizzle 1 --grid 0)
  local sleep_ms promotion
  for sleep_ms in ${SLEEPS:-20 0 500}; do
    for promotion in ${PROMOTIONS:-256}; do
      local kind="sleep$sleep_ms$(suffix "$promotion")" launches
      launches=$(twin_launches "$kind,$row" "${args[@]}" --reps 5 --sleep-ms "$sleep_ms" --promotion "$promotion")
      if [ -n "$launches" ]; then echo "$launches" >> "$plain"; else echo "# FAILED $kind,$row" >> "$plain"; fi
    done
  done
  for promotion in ${PROMOTIONS:-256}; do
    ncu_app k_gemm "$bin/gemm_sm90_twin" "${args[@]}" --reps 5 --promotion "$promotion"
    grep "==PROF==" "$bin/ncu.txt" > "$out/${tag}_${name}_ncu_$row$(suffix "$promotion").log"
    python3 ncu_metrics.py --all "$bin/ncu.txt" ${metrics//,/ } |
      awk -v r="app$(suffix "$promotion"),$row" '{print r "," NR-1 "," $0}' >> "$counted" ||
      echo "# FAILED app$(suffix "$promotion"),$row" >> "$counted"
  done
}
# gemm_clocks.py --model keeps these rows' arguments (its ROWS) for bwsim run gemm_sm90.
row pp128_8192 8192 8192 8192 pingpong 128 128 6
row coop_8192 8192 8192 8192 cooperative 64 256 4
row pp128_4096 4096 4096 4096 pingpong 128 128 6
if [ "${FABRIC:-1}" = 1 ]; then
  for point in swap:16 oneway_cold:16 swap:32 oneway:32 oneway_cold:32; do
    if values=$(fabric_point_values "$point"); then echo "app,$point,0,$values" >> "$counted"; else echo "# FAILED $point" >> "$counted"; fi
  done
fi
silicon_footer >> "$plain"
silicon_footer >> "$counted"
cat "$plain" "$counted"
