#!/usr/bin/env bash
# On the H100/H200 machine: h100_epilogue.cu's rows, the GEMM epilogue's parts and the TMA store
# order into <tag>_epilogue.csv, the prologue's steps into <tag>_prologue_steps.csv and the tile
# scheduler's arithmetic (scalar_* rows) into <tag>_tile_math.csv, under $OUT.
# Usage: OUT=dir bash tools/calibration/run_epilogue.sh   (GEMM_TAG, default h100)
set -uo pipefail
cd "$(dirname "$0")"
source device_common.sh
build_sm90 h100_epilogue
rows="$bin/epilogue_rows.csv"
"$bin/h100_epilogue" > "$rows"
{ silicon_header; grep -v '^prologue_\|^scalar_' "$rows"; } > "$out/${tag}_epilogue.csv"
{ silicon_header; grep '^prologue_' "$rows"; } > "$out/${tag}_prologue_steps.csv"
{ silicon_header; grep '^scalar_' "$rows"; } > "$out/${tag}_tile_math.csv"
cat "$out/${tag}_epilogue.csv" "$out/${tag}_prologue_steps.csv" "$out/${tag}_tile_math.csv"
