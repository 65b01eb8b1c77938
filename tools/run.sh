#!/usr/bin/env bash
# The main job: set-up (packages, configure, build), then simulate an 8192^3 bf16 GEMM on all 148
# SMs of the B200 config, print its time and TFLOP/s and write a trace (SMs 0-3).
# Extra arguments go to `bwsim run gemm`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
mkdir -p out
exec build/bwsim run gemm --config sim_configs/b200.yaml --m 8192 --n 8192 --k 8192 --ctas 148 \
  --trace out/gemm.trace.json "$@"
