#!/usr/bin/env bash
# On the H200 (or H100) machine: every k-block's issue and barrier completions (clock64 from the
# CTA's start) of h100_stage_parts.cu's 2-stage ring, CTAs 0-15, for the variants whose cycles
# per k-block the model misses most (stage_parts_tolerances: the period of a latency-bound ring is
# about 200 cycles per k-block longer on silicon than its medians' latencies make it). Writes
# <tag>_stage_parts_trace.csv.gz in $OUT (default: this directory); stage_parts_trace.py reads it.
# Usage: GEMM_TAG=h200 bash tools/calibration/run_stage_parts_trace.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_stage_parts
{
  silicon_header
  header=1
  for variant in a ab b bb aa abh; do
    for sms in 16 132; do
      "$bin/h100_stage_parts" trace "$variant" "$sms" | { if [ $header = 1 ]; then cat; else tail -n +2; fi; }
      header=0
    done
  done
  silicon_footer
} | gzip > "$out/${tag}_stage_parts_trace.csv.gz"
zcat "$out/${tag}_stage_parts_trace.csv.gz" | wc -l
