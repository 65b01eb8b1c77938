#!/usr/bin/env bash
# On the H100 (or H200) machine: how the L2's slice hash spreads a few address patterns
# (h100_l2_slices.cu), from Nsight Compute's max, min and mean of lts__t_sectors over the slices.
# Patterns: single lines (the slice count: sum over mean), 128 lines at strides of 128 B to 64 KiB
# (4 bases each), 32 boxes of 128 rows 16 KiB apart (a GEMM operand at K = 8192 bf16: 4 row blocks
# x 8 line offsets), and 64- and 256-row boxes. Writes $OUT/${GEMM_TAG}_l2_slices_ncu.txt (ncu's
# raw CSV after the program's pattern lines; l2_slices.py reads it) and, for two GEMM twin rows,
# $OUT/${GEMM_TAG}_gemm_slices_ncu.csv.
set -euo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_l2_slices
patterns=()
for j in 0 1 2 3; do patterns+=("1:0:$((j * 128))"); done
for s in 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
  for r in 0 1 2 3; do patterns+=("128:$s:$((r * 8388608 + r * 128))"); done
done
for r in 0 1 2 3; do for k in $(seq 0 7); do patterns+=("128:16384:$((r * 128 * 16384 + k * 128))"); done; done
for r in 0 1 2 3; do patterns+=("64:16384:$((r * 64 * 16384))") ; patterns+=("256:16384:$((r * 256 * 16384))"); done
raw="$out/${tag}_l2_slices_ncu.txt"
{
  silicon_header
  echo "# ncu,$(ncu --version | tail -n 1)"
  # ncu's default cache control flushes the caches before each profiled launch, so a pattern's first
  # pass misses (its sectors count too, a fraction of a line per slice beside 64 passes).
  timeout 500 ncu --clock-control none --metrics lts__t_sectors.sum,lts__t_sectors.avg,lts__t_sectors.max,lts__t_sectors.min \
    --csv --page raw "$bin/h100_l2_slices" "${patterns[@]}"
  silicon_footer
} > "$raw" 2>&1
head -c 3000 "$raw"; echo; wc -l "$raw"
# The GEMM twin's rows (the timed launch after two warm-ups, as run_gemm_requests_ncu.sh): how evenly
# a whole run's sectors fall on the slices (max and min over avg), ping-pong 128x128 8192^3 (the row
# outside 10%) beside cooperative 128x256 8192^3.
build_sm90 gemm_sm90_twin
metrics=lts__t_sectors.sum,lts__t_sectors.avg,lts__t_sectors.max,lts__t_sectors.min
metrics+=,lts__t_sectors_srcunit_tex_op_read.avg,lts__t_sectors_srcunit_tex_op_read.max,lts__t_sectors_srcunit_tex_op_read.min
metrics+=,lts__t_sectors_srcunit_tex_op_read_lookup_miss.avg,lts__t_sectors_srcunit_tex_op_read_lookup_miss.max
metrics+=,lts__t_sectors_srcunit_tex_op_read_lookup_miss.min,sm__cycles_elapsed.avg.per_second
gemm_csv="$out/${tag}_gemm_slices_ncu.csv"
{
  ncu_rows_header
  twin_ncu_rows pp128_8192 8192 8192 8192 pingpong 128 128 6
  twin_ncu_rows coop_8192 8192 8192 8192 cooperative 64 256 4
} > "$gemm_csv"
cat "$gemm_csv"
