#!/usr/bin/env bash
# On the H200 machine (kind nvidia-h200): the H100 calibration programs on the H200, for the
# transfer check. Builds h100_ubench.cu, h100_launch.cu and h100_units2.cu (sm_90a),
# then runs, one after the other:
#   h100_ubench.cu   twice (the second run kept: every row),
#   h100_launch.cu   three times (the last row kept; the three values in a comment),
#   h100_units2.cu   twice (the second run kept),
#   run_gemm_sm90.sh full with GEMM_TAG=<tag> GEMM_RAGGED=one: h100_wgmma.cu twice (second kept)
#                    and every gemm_sm90_twin configuration, one ragged correctness run per
#                    schedule/tile combo,
# and writes into $OUT (default: this directory), <tag> = GPU_TAG (default h200):
#   <tag>_measured.csv   ubench + launch + wgmma + units2 rows under one scenario,param,cycles
#                        header; comment lines give the date, nvidia-smi (name, clocks, driver),
#                        the SM count and L2 size (the programs' '# device' line), and where each
#                        block of rows comes from;
#   <tag>_gemm_sm90.csv  the GEMM rows (the columns of h100_gemm_sm90.csv);
#   <tag>_smi.log        nvidia-smi at the start, then SM/memory clock, power and temperature every
#                        100 ms over the whole script, with '# hh:mm:ss phase' markers;
#   <tag>_gemm_run.log, <tag>_sass_check.txt, <tag>_build.log: run_gemm_sm90.sh's logs and the
#                        build output.
# Usage: bash tools/calibration/run_h200.sh
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
tag="${GPU_TAG:-h200}"
bin=/tmp/${tag}_bin
mkdir -p "$bin" "$bin/gemm"
t0=$SECONDS
smi="$out/${tag}_smi.log"
nvidia-smi > "$smi" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 >> "$smi" 2>&1 &
smi_pid=$!
mark() {
  echo "# $(date -u +%H:%M:%S) $*" >> "$smi"
  echo "== $* (t=$((SECONDS - t0)) s)"
}
smi_line() {
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
}

mark build
nvcc_flags=(-O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a)
{  # one after the other, as run_h100.sh builds (three nvcc in the background failed on the H100 machine)
  nvcc "${nvcc_flags[@]}" h100_ubench.cu -o "$bin/h100_ubench"
  nvcc "${nvcc_flags[@]}" h100_launch.cu -o "$bin/h100_launch"
  nvcc "${nvcc_flags[@]}" h100_units2.cu -lcuda -o "$bin/h100_units2"
} > "$out/${tag}_build.log" 2>&1
for b in h100_ubench h100_launch h100_units2; do
  [ -x "$bin/$b" ] || { echo "build of $b failed"; cat "$out/${tag}_build.log"; }
done

mark ubench
timeout 120 "$bin/h100_ubench" > /dev/null  # warm-up run (clocks up, caches)
head_smi=$(smi_line)
head_date="# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
timeout 120 "$bin/h100_ubench" > "$bin/ubench.csv" || echo "# FAILED h100_ubench rc=$?" >> "$bin/ubench.csv"
ub_smi=$(smi_line)

mark launch
launch_vals=()
for i in 1 2 3; do
  timeout 120 "$bin/h100_launch" > "$bin/launch.csv" || echo "# FAILED h100_launch rc=$?" >> "$bin/launch.csv"
  launch_vals+=("$(tail -n 1 "$bin/launch.csv" | cut -d, -f3)")
done

mark units2
timeout 120 "$bin/h100_units2" > /dev/null  # warm-up run
un_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
un_smi=$(smi_line)
timeout 120 "$bin/h100_units2" > "$bin/units2.csv" || echo "# FAILED h100_units2 rc=$?" >> "$bin/units2.csv"

csv="$out/${tag}_measured.csv"
rows() { grep -v -e '^scenario,param,cycles$' -e '^# device,' "$1"; }
assemble() {  # <tag>_measured.csv from what has run so far
{
  echo "$head_date"
  echo "$head_smi"
  grep -m 1 '^# device,' "$bin/ubench.csv"
  echo "scenario,param,cycles"
  echo "# h100_ubench.cu, second of two runs (nvidia-smi after it: $(echo "$ub_smi" | cut -d, -f3-))"
  rows "$bin/ubench.csv"
  echo "# h100_launch.cu, last of three runs: ${launch_vals[*]}"
  rows "$bin/launch.csv"
  echo "# h100_wgmma.cu (run_gemm_sm90.sh, second of two runs): $(grep -h '^# date\|^# nvidia-smi' "$bin/gemm/${tag}_wgmma.csv" 2> /dev/null | tr '\n' ' ')"
  grep -v -e '^#' -e '^scenario,param,cycles$' "$bin/gemm/${tag}_wgmma.csv" 2> /dev/null
  echo "# h100_units2.cu, second of two runs: $un_date $(echo "$un_smi" | cut -d, -f3-)"
  rows "$bin/units2.csv"
} > "$csv"
}
assemble  # in case the GEMM part does not finish

mark gemm_sm90
OUT="$bin/gemm" GEMM_TAG="$tag" GEMM_RAGGED=one bash run_gemm_sm90.sh full > "$bin/gemm/stdout.txt" 2>&1
cp "$bin/gemm/${tag}_gemm_sm90.csv" "$out/${tag}_gemm_sm90.csv"
cp "$bin/gemm/run.log" "$out/${tag}_gemm_run.log"
cp "$bin/gemm/sass_check.txt" "$out/${tag}_sass_check.txt"
cat "$bin/gemm/build.log" >> "$out/${tag}_build.log"
mark done
assemble

kill "$smi_pid" 2>/dev/null
wait "$smi_pid" 2>/dev/null
cat "$csv"
echo "== ${tag}_gemm_sm90.csv"
cat "$out/${tag}_gemm_sm90.csv"
echo "== gemm checks"
grep -E "^check" "$out/${tag}_gemm_run.log"
grep -E "HGMMA|STL|LDL" "$out/${tag}_sass_check.txt" | head -n 8
echo "== total $((SECONDS - t0)) s"
