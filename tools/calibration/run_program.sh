#!/usr/bin/env bash
# On the H100 (or H200) machine: build one calibration program, PROGRAM.cu (h100_units2,
# h100_loaded, h100_hbm_boxes: each prints its own CSV), run it once to warm up (clocks up,
# caches), then again, and write the second run's rows to PROGRAM.csv with the date and the
# device's name, clocks and driver in its header. Usage: run_program.sh PROGRAM [ARG...] (the
# arguments go to both runs). CSV names the output file (default PROGRAM.csv) in $OUT (default:
# this directory).
set -euo pipefail
cd "$(dirname "$0")"
program="${1:?usage: run_program.sh PROGRAM [ARG...] (PROGRAM: the .cu file without its extension)}"
shift
[ -f "$program.cu" ] || { echo "run_program.sh: no $program.cu in $(pwd)" >&2; exit 2; }
. ./device_common.sh
csv="$out/${CSV:-$program.csv}"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a "$program.cu" -lcuda -o "/tmp/$program" 2> "/tmp/$program.build.log"
"/tmp/$program" "$@" > /dev/null  # warm-up run
{
  silicon_header
  "/tmp/$program" "$@"
} > "$csv"
cat "$csv"
