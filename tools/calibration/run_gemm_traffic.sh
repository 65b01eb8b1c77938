#!/usr/bin/env bash
# On the H100 machine: the memory traffic of each gemm_sm90 validation row, counted by Nsight
# Compute on the timed launch of gemm_sm90_twin.cu (the third: two warm-ups leave the operands in
# the L2 as the timed reps find them; --cache-control none keeps that state). Writes
# h100_gemm_traffic.csv in $OUT (default: this directory): the row's parameters, then DRAM bytes
# read and written, L2 read sectors (32 B) and those that hit, L2 sectors crossing between the two
# L2 partitions (ltcfabric), SM cycles and the SM clock.
# Usage: bash tools/calibration/run_gemm_traffic.sh
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
bin=/tmp/gemm_traffic_bin
mkdir -p "$bin"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a gemm_sm90_twin.cu -lcuda -o "$bin/twin" || exit 1
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second
csv="$out/h100_gemm_traffic.csv"
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  echo "# ncu,$(ncu --version | tail -n 1)"
  echo "m,n,k,schedule,rows_per_wg,tile_n,stages,raster,swizzle,grid,dram_read_bytes,dram_write_bytes,l2_read_sectors,l2_read_hit_sectors,l2_fabric_sectors,sm_cycles,sm_hz"
} > "$csv"
t() {  # t M N K SCHEDULE ROWS TILE_N STAGES RASTER SWIZZLE GRID
  local args=(--m "$1" --n "$2" --k "$3" --schedule "$4" --rows-per-wg "$5" --tile-n "$6" --stages "$7"
              --raster "$8" --swizzle "$9" --grid "${10}" --reps 1)
  timeout 300 ncu --clock-control none --cache-control none -k regex:k_gemm --launch-skip 2 --launch-count 1 \
    --metrics "$metrics" --csv --page raw --print-units base "$bin/twin" "${args[@]}" > "$bin/ncu.txt" 2> "$bin/ncu.err"
  if values=$(python3 ncu_metrics.py "$bin/ncu.txt" ${metrics//,/ }); then
    echo "$(echo "$*" | tr ' ' ,),$values" >> "$csv"
  else
    echo "# FAILED $*" >> "$csv"
  fi
  tail -n 1 "$csv"
}
# The rows of run_gemm_sm90.sh (full) and run_gemm_scaling.sh, then 16384^3 (the sustained row).
C=cooperative; P=pingpong
t 128 256 65536 $C 64 256 4 m 1 1
t 128 128 65536 $P 128 128 6 m 1 1
t 1024 1024 1024 $C 64 256 4 m 1 0
t 2048 2048 2048 $C 64 256 4 m 1 0
t 4096 4096 4096 $C 64 256 4 m 1 0
t 8192 8192 8192 $C 64 256 4 m 1 0
t 8192 8192 1024 $C 64 256 4 m 1 0
t 1024 1024 16384 $C 64 256 4 m 1 0
t 4096 4096 4096 $C 64 256 2 m 1 0
t 4096 4096 4096 $C 64 256 3 m 1 0
t 4096 4096 4096 $C 128 128 4 m 1 0
t 4096 4096 4096 $P 128 128 6 m 1 0
t 4096 4096 4096 $P 64 256 4 m 1 0
t 8192 8192 8192 $P 128 128 6 m 1 0
for s in 2 4; do
  for m in 128 2048 8448 16896; do t $m 256 16384 $C 64 256 $s m 1 0; done
done
t 4096 4096 4096 $P 128 128 6 m 8 0
t 4096 4096 4096 $P 128 128 6 n 1 0
t 16384 16384 16384 $C 64 256 4 m 1 0
cat "$bin/ncu.err" | tail -n 5
