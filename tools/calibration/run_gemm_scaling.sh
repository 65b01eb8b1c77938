#!/usr/bin/env bash
# On the H100 machine: gemm_sm90_twin scaling runs (its CLI as in run_gemm_sm90.sh), written to
# h100_gemm_scaling.csv (the columns of h100_gemm_sm90.csv, headed by date and nvidia-smi comment
# lines) in $OUT (default: this directory); stderr goes to gemm_scaling.log there.
# - cooperative 64/256, --stages 2 and 4, M = 128*G, N = 256, K = 16384, --grid G for
#   G in 1, 16, 66, 132: each CTA one 128 x 256 tile (its own A rows, every CTA the same B);
# - ping-pong 128/128 at 4096^3 with --swizzle 8 (raster m), and with --raster n (swizzle 1).
# All with --reps 5 --check 0.
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
csv="$out/h100_gemm_scaling.csv"
log="$out/gemm_scaling.log"
bin=/tmp/gemm_sm90_twin
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a gemm_sm90_twin.cu -lcuda -o "$bin" > "$log" 2>&1 ||
  { echo "build failed"; cat "$log"; exit 1; }
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
} > "$csv"
first=1
g() {  # g ARGS...: one configuration, one CSV row (or a comment saying why none)
  local extra=()
  if [ $first = 1 ]; then extra=(--header); first=0; fi
  echo "+ gemm_sm90_twin $*" >> "$log"
  timeout 60 "$bin" "${extra[@]}" "$@" --reps 5 --check 0 >> "$csv" 2>> "$log"
  local rc=$?
  [ $rc -eq 0 ] || echo "# FAILED rc=$rc $*" >> "$csv"
}
CO="--schedule cooperative --rows-per-wg 64 --tile-n 256"
PP="--schedule pingpong --rows-per-wg 128 --tile-n 128"
for s in 2 4; do
  for G in 1 16 66 132; do
    g $CO --stages $s --m $((128 * G)) --n 256 --k 16384 --grid $G
  done
done
g $PP --m 4096 --n 4096 --k 4096 --swizzle 8
g $PP --m 4096 --n 4096 --k 4096 --raster n
cat "$csv"
