#!/usr/bin/env bash
# On the H200 (or H100) machine: h100_stage_parts.cu's rows with its loops counting the stage and
# phase (`lean`: no run-time division between a wait's return and the refill) into
# <tag>_stage_parts_lean.csv, the same program's rows as first measured (divisions) into
# <tag>_stage_parts_again.csv, and the lean loop's per-k-block trace of the variants in
# <tag>_stage_parts_trace.csv.gz into <tag>_stage_parts_lean_trace.csv.gz, all in $OUT (default:
# this directory).
# Usage: GEMM_TAG=h200 bash tools/calibration/run_stage_parts_lean.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_stage_parts
{ silicon_header; "$bin/h100_stage_parts" lean; silicon_footer; } > "$out/${tag}_stage_parts_lean.csv"
{ silicon_header; "$bin/h100_stage_parts"; silicon_footer; } > "$out/${tag}_stage_parts_again.csv"
{
  silicon_header
  header=1
  for variant in a ab b bb aa abh; do
    for sms in 16 132; do
      "$bin/h100_stage_parts" lean trace "$variant" "$sms" | { if [ $header = 1 ]; then cat; else tail -n +2; fi; }
      header=0
    done
  done
  silicon_footer
} | gzip > "$out/${tag}_stage_parts_lean_trace.csv.gz"
grep -E "cycles_per_kblock" "$out/${tag}_stage_parts_lean.csv" | head -60
