#!/usr/bin/env bash
# On the H100 (or H200) machine: the SMEM data port of generic ld.shared / st.shared
# (h100_smem_port.cu: 1-32 warps per SM, st.shared.b32, st.shared.v4, ld.shared.v4). Writes
# $OUT/${GEMM_TAG:-h100}_smem_port.csv: the silicon header, then the program's rows.
# Usage: [OUT=dir] [GEMM_TAG=h200] bash tools/calibration/run_smem_port.sh
set -euo pipefail
cd "$(dirname "$0")"
source ./device_common.sh
build_sm90 h100_smem_port
csv="$out/${tag}_smem_port.csv"
{ silicon_header; "$bin/h100_smem_port"; } > "$csv"
cat "$csv"
