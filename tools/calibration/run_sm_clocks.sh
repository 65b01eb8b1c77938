#!/usr/bin/env bash
# On the H100/H200 machine: does every SM run at one clock, and at one rate, when the whole chip
# works? The ping-pong 8192^3 swizzle-1 GEMM's GPCs take 3-10% different paces on silicon (README,
# "What draws the shares"), measured in %globaltimer ns; a clock per GPC would give that without
# any memory-system cause. Two measurements, both per CTA with its %smid:
#   <tag>_sm_clocks_units.csv: h100_power's sustained one-unit loads on every SM (spin, fma, the
#     wgmma loops with random and zero operands, the L2 and HBM streams): each CTA's work, clock64
#     cycles and ns (load,sms,cta,smid,work,cycles,ns); <tag>_sm_clocks_units_rows.csv has the
#     loads' usual rows and <tag>_sm_clocks_units_trace.csv their NVML trace.
#   <tag>_sm_clocks_gemm_<name>.csv.rN: the twin's --clock-log of every timed launch (each CTA's
#     start and end in ns and its clock64 cycles between them), with the tile logs beside them
#     (<tag>_sm_clocks_tiles_<name>.csv.rN) and the result rows in <tag>_sm_clocks_gemm_rows.csv;
#     <tag>_sm_clocks_paces.csv reduces those logs to one clock and one tile pace per CTA and launch
#     (sm_clocks.py reduce; sm_clocks.py summary prints them by GPC).
#   <tag>_sm_clocks_gpc_map.csv: this machine's GPC map (h100_gpc_map), for sm_clocks.py summary.
# Usage: OUT=dir bash tools/calibration/run_sm_clocks.sh   (GEMM_TAG, default h100; SM_CLOCK_UNITS=0
# skips the sustained loads, about 3 of the script's 4 minutes)
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 gemm_sm90_twin h100_gpc_map
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_power.cu -lcuda -ldl -o "$bin/h100_power" \
  >> "$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }

rows="$out/${tag}_sm_clocks_gemm_rows.csv"
silicon_header > "$rows"
"$bin/gemm_sm90_twin" --header --m 128 --n 128 --k 64 --reps 1 --schedule pingpong --rows-per-wg 128 --tile-n 128 >> "$rows"
gemm() {  # name, then the twin's arguments
  local name=$1
  shift
  "$bin/gemm_sm90_twin" "$@" --reps 6 --log-reps 1 --tile-log "$out/${tag}_sm_clocks_tiles_${name}.csv" \
    --clock-log "$out/${tag}_sm_clocks_gemm_${name}.csv" >> "$rows" 2>> "$out/run.log"
}
gemm pp128_8192_sw1 --m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
gemm pp128_8192_sw2 --m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --swizzle 2
gemm coop_8192 --m 8192 --n 8192 --k 8192 --schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4
gemm pp128_8192_sw1_b --m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
silicon_footer >> "$rows"
cat "$rows"
python3 sm_clocks.py reduce "$out" > "$out/${tag}_sm_clocks_paces.csv"
gpc_map_after "$rows" > "$out/${tag}_sm_clocks_gpc_map.csv"
[ "${SM_CLOCK_UNITS:-1}" = 0 ] && exit 0

{
  silicon_header
  "$bin/h100_power" "$out/${tag}_sm_clocks_units_trace.csv" "$out/${tag}_sm_clocks_units.csv" \
    spin fma wgmma_bf16 wgmma_bf16_zero l2_32k hbm_32k
  silicon_footer
} > "$out/${tag}_sm_clocks_units_rows.csv" 2>> "$out/run.log"
cat "$out/${tag}_sm_clocks_units_rows.csv"
