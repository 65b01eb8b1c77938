#!/usr/bin/env bash
# On the H200 (or H100) machine: h100_stage_parts.cu's rows with its loops counting the stage and
# phase (`lean`: no run-time division between a wait's return and the refill) into
# <tag>_stage_parts_lean.csv, the first-measured loop's rows again (that kernel's code unchanged) into
# <tag>_stage_parts_again.csv, and both loops' per-k-block traces of the variants below into
# <tag>_stage_parts_trace.csv.gz and <tag>_stage_parts_lean_trace.csv.gz, all in $OUT (default:
# this directory). stage_parts_trace.py reads the traces.
# Usage: GEMM_TAG=h200 bash tools/calibration/run_stage_parts_lean.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_stage_parts
{ silicon_header; "$bin/h100_stage_parts" lean; silicon_footer; } > "$out/${tag}_stage_parts_lean.csv"
{ silicon_header; "$bin/h100_stage_parts"; silicon_footer; } > "$out/${tag}_stage_parts_again.csv"
# trace FILE [lean]: the per-k-block trace of every variant below at 16 and 132 SMs, gzipped.
trace() {
  local file=$1 header=1
  shift
  {
    silicon_header
    for variant in a ab b bb aa abh; do
      for sms in 16 132; do
        "$bin/h100_stage_parts" "$@" trace "$variant" "$sms" | { if [ $header = 1 ]; then cat; else tail -n +2; fi; }
        header=0
      done
    done
    silicon_footer
  } | gzip > "$out/$file"
}
trace "${tag}_stage_parts_trace.csv.gz"
trace "${tag}_stage_parts_lean_trace.csv.gz" lean
grep -E "cycles_per_kblock" "$out/${tag}_stage_parts_lean.csv" | head -60
