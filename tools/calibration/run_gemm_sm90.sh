#!/usr/bin/env bash
# On the H100 machine: build h100_wgmma.cu and gemm_sm90_twin.cu for sm_90a, check their SASS
# (HGMMA/QGMMA present, no local memory), run the wgmma microbenchmarks twice (the second run is
# kept) and every gemm_sm90 configuration of the validation, and write h100_wgmma.csv and
# h100_gemm_sm90.csv (each headed by date and nvidia-smi comment lines, like run_h100.sh),
# smi.log (SM clock and power sampled every 50 ms), sass_check.txt, build.log and run.log into
# $OUT (default: this directory).
# Usage: bash tools/calibration/run_gemm_sm90.sh [full|quick]
#   quick: build, SASS check, the ragged correctness runs, the wgmma ubench once and three timings.
# Every CSV header names the GPU (serial, UUID): the device tool may lend another machine per call.
# Environment: GEMM_TAG (default h100) names the two CSVs <tag>_wgmma.csv and <tag>_gemm_sm90.csv;
#   GEMM_RAGGED=one keeps one ragged correctness run (1000 x 744 x 520) per schedule/tile combo
#   instead of two (default all).
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
mode="${1:-full}"
tag="${GEMM_TAG:-h100}"
ragged="${GEMM_RAGGED:-all}"
bin=/tmp/gemm_sm90_bin
mkdir -p "$bin"
log="$out/run.log"
: > "$log"

nvcc_flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v)
{
  nvcc --version | tail -n 2
  nvcc "${nvcc_flags[@]}" h100_wgmma.cu -lcuda -o "$bin/h100_wgmma" && echo "built h100_wgmma"
  nvcc "${nvcc_flags[@]}" gemm_sm90_twin.cu -lcuda -o "$bin/gemm_sm90_twin" && echo "built gemm_sm90_twin"
} > "$out/build.log" 2>&1
grep -E "C75|error|built" "$out/build.log"
[ -x "$bin/h100_wgmma" ] && [ -x "$bin/gemm_sm90_twin" ] || { echo "build failed"; tail -n 40 "$out/build.log"; exit 1; }

# SASS: per binary, the count of each opcode of interest (STL/LDL must be 0).
{
  for b in h100_wgmma gemm_sm90_twin; do
    cuobjdump -sass "$bin/$b" > "$bin/$b.sass"
    echo "== $b"
    for op in HGMMA QGMMA WARPGROUP.ARRIVE WARPGROUP.DEPBAR WARPSYNC STL LDL; do
      printf '%s %s\n' "$op" "$(grep -cE "\b${op}\b" "$bin/$b.sass")"
    done
    echo "-- per function: HGMMA QGMMA STL LDL"
    awk '/Function :/ {f=$3} /HGMMA/ {h[f]++} /QGMMA/ {q[f]++} /STL/ {s[f]++} /LDL/ {l[f]++} /Function :/ {seen[f]=1}
         END {for (f in seen) printf "%s %d %d %d %d\n", f, h[f], q[f], s[f], l[f]}' "$bin/$b.sass" | sort
  done
} > "$out/sass_check.txt" 2>&1
head -n 30 "$out/sass_check.txt"

nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv -lms 50 > "$out/smi.log" 2>&1 &
smi_pid=$!

header() {
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  echo "# gpu,$(nvidia-smi --query-gpu=serial,uuid --format=csv,noheader)"
}

# ---- wgmma unit benchmarks ----
wg_csv="$out/${tag}_wgmma.csv"
if [ "$mode" = full ]; then
  timeout 120 "$bin/h100_wgmma" > /dev/null 2>> "$log"  # warm-up run (clocks up)
fi
{
  header
  timeout 120 "$bin/h100_wgmma" 2>> "$log" || echo "# FAILED h100_wgmma rc=$?"
} > "$wg_csv"
cat "$wg_csv"

# ---- GEMM configurations ----
gm_csv="$out/${tag}_gemm_sm90.csv"
header > "$gm_csv"
first=1
g() {  # g ARGS...: one configuration, one CSV row (or a comment saying why none)
  local extra=()
  if [ $first = 1 ]; then extra=(--header); first=0; fi
  echo "+ gemm_sm90_twin $*" >> "$log"
  timeout 60 "$bin/gemm_sm90_twin" "${extra[@]}" "$@" >> "$gm_csv" 2>> "$log"
  local rc=$?
  if [ $rc -ne 0 ]; then
    if [ $rc -eq 124 ]; then echo "# TIMEOUT $*" >> "$gm_csv"; else echo "# FAILED rc=$rc $*" >> "$gm_csv"; fi
  fi
  tail -n 1 "$gm_csv"
}
CO="--schedule cooperative --rows-per-wg 64 --tile-n 256"
CO128="--schedule cooperative --rows-per-wg 128 --tile-n 128"
PP="--schedule pingpong --rows-per-wg 128 --tile-n 128"
PP64="--schedule pingpong --rows-per-wg 64 --tile-n 256"

# e) ragged correctness (checks only), all four schedule/tile combos
for s in "$CO" "$CO128" "$PP" "$PP64"; do
  g $s --m 1000 --n 744 --k 520 --check 1 --reps 2
  [ "$ragged" = one ] || g $s --m 333 --n 1000 --k 200 --check 1 --reps 2
done
if [ "$mode" = quick ]; then
  g $CO --m 128 --n 256 --k 65536 --grid 1 --check 1
  g $CO --m 4096 --n 4096 --k 4096 --check 1
  g $PP --m 4096 --n 4096 --k 4096 --check 1
else
  # a) one CTA, long K
  g $CO --m 128 --n 256 --k 65536 --grid 1 --check 1
  g $PP --m 128 --n 128 --k 65536 --grid 1 --check 1
  # b) cooperative 64/256 scaling
  g $CO --m 1024 --n 1024 --k 1024 --check 1
  g $CO --m 2048 --n 2048 --k 2048
  g $CO --m 4096 --n 4096 --k 4096 --check 1
  g $CO --m 8192 --n 8192 --k 8192
  g $CO --m 8192 --n 8192 --k 1024
  g $CO --m 1024 --n 1024 --k 16384 --check 1
  # c) at 4096^3: stages, tiles, schedules
  g $CO --m 4096 --n 4096 --k 4096 --stages 2
  g $CO --m 4096 --n 4096 --k 4096 --stages 3
  g $CO128 --m 4096 --n 4096 --k 4096 --check 1
  g $PP --m 4096 --n 4096 --k 4096 --check 1
  g $PP64 --m 4096 --n 4096 --k 4096 --check 1
  # d) pingpong at 8192^3
  g $PP --m 8192 --n 8192 --k 8192
fi

kill "$smi_pid" 2>/dev/null
wait "$smi_pid" 2>/dev/null
echo "== checks"
grep -E "^check" "$log"
echo "failed or timed-out rows: $(grep -c "FAIL\|TIMEOUT" "$gm_csv")"
