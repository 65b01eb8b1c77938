#!/usr/bin/env bash
# On the H100 (or H200) machine: the power calibration rows and the sustained GEMM rows (issue 18).
# Builds h100_power.cu and gemm_sm90_twin.cu for sm_90a, counts the instructions of interest in
# their SASS, then writes into $OUT (default: this directory), each CSV headed by date and
# nvidia-smi comment lines:
#   <tag>_power.csv, <tag>_power_trace.csv   (h100_power: one unit at a time; its NVML trace)
#   <tag>_gemm_sustained.csv                  (the twin with --sustain-ms, back to back)
#   <tag>_gemm_sustained_trace.csv            (the twin's batches and NVML samples)
#   power_sass.txt, power_smi.txt             (SASS counts; nvidia-smi -q power/clock/voltage)
# Usage: bash tools/calibration/run_power.sh [TAG]   (TAG: h100 (default) or h200)
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
tag="${1:-h100}"
bin=/tmp/power_bin
mkdir -p "$bin"
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a)
nvcc "${flags[@]}" h100_power.cu -lcuda -ldl -o "$bin/h100_power" || exit 1
nvcc "${flags[@]}" gemm_sm90_twin.cu -lcuda -ldl -o "$bin/gemm_sm90_twin" || exit 1

{
  cuobjdump -sass "$bin/h100_power" > "$bin/h100_power.sass"
  echo "per function: HGMMA QGMMA FFMA FMUL LDS.128 LOP3 UTMALDG STL LDL"
  awk '/Function :/ {f=$3; seen[f]=1} /HGMMA/ {h[f]++} /QGMMA/ {q[f]++} /FFMA/ {a[f]++} /FMUL/ {m[f]++}
       /LDS.128/ {l[f]++} /LOP3/ {o[f]++} /UTMALDG/ {t[f]++} /STL/ {s[f]++} /LDL/ {d[f]++}
       END {for (f in seen) printf "%s %d %d %d %d %d %d %d %d %d\n", f, h[f], q[f], a[f], m[f], l[f], o[f], t[f], s[f], d[f]}' \
    "$bin/h100_power.sass" | sort
} > "$out/power_sass.txt" 2>&1
cat "$out/power_sass.txt"
nvidia-smi -q -d POWER,CLOCK,VOLTAGE,PERFORMANCE,TEMPERATURE > "$out/power_smi.txt" 2>&1

header() {
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv,noheader)"
}

{
  header
  "$bin/h100_power" "$out/${tag}_power_trace.csv"
} > "$out/${tag}_power.csv"
cat "$out/${tag}_power.csv"

g="$out/${tag}_gemm_sustained.csv"
t="$out/${tag}_gemm_sustained_trace.csv"
header > "$g"
echo "m,n,k,kind,t_s,a,b,c,d" > "$t"   # batch: us_per_gemm,clock_mhz,energy_w; sample: sm_mhz,power_w,temp_c,reasons
first=--header
for size in ${SIZES:-4096 8192 16384}; do
  sleep 3  # the board cools and the clock recovers between runs
  "$bin/gemm_sm90_twin" $first --m $size --n $size --k $size --schedule cooperative --rows-per-wg 64 --tile-n 256 \
    --sustain-ms 10000 >> "$g" 2> "$bin/batches.txt"
  first=
  grep -E '^(batch|sample),' "$bin/batches.txt" | sed "s/^/$size,$size,$size,/" >> "$t"
  tail -n 1 "$g"
done
