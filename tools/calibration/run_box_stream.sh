#!/usr/bin/env bash
# On the H100 (or H200) machine: h100_box_stream.cu (hot TMA box streams, one factor at a time),
# then h100_gemm_loads.cu's B boxes alone (and both boxes) at one SM with 1, 2 and 6 stages, as
# comment lines: the lean producer loop's rate beside the program's. Writes <tag>_box_stream.csv in
# $OUT (default: this directory). Usage: GEMM_TAG=h200 bash tools/calibration/run_box_stream.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_box_stream h100_gemm_loads
csv="$out/${tag}_box_stream.csv"
{
  silicon_header
  "$bin/h100_box_stream"
  for parts in "b --stages 1" "b --stages 2" "b --stages 6" "ab --stages 6"; do
    # shellcheck disable=SC2086
    echo "# h100_gemm_loads --m 8448 --n 128 --k 8192 --grid 1 --parts $parts: $("$bin/h100_gemm_loads" --m 8448 \
      --n 128 --k 8192 --rows 128 --tile-n 128 --grid 1 --parts $parts | tail -n 1)"
  done
  silicon_footer
} > "$csv"
cat "$csv"
