#!/usr/bin/env bash
# On the H100/H200 machine: h100_epilogue.cu's rows (the GEMM epilogue's parts and the prologue's
# steps) into <tag>_epilogue.csv under $OUT.
# Usage: OUT=dir bash tools/calibration/run_epilogue.sh   (GEMM_TAG, default h100)
set -uo pipefail
cd "$(dirname "$0")"
source device_common.sh
build_sm90 h100_epilogue
csv="$out/${tag}_epilogue.csv"
{ silicon_header; "$bin/h100_epilogue"; } > "$csv"
cat "$csv"
