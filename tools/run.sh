#!/usr/bin/env bash
# The main job: set-up (packages, configure, build), then simulate the persistent 2-SM 8192^3 bf16
# GEMM on the whole B200 config (74 CTA pairs), print its time and TFLOP/s and write a trace
# (SMs 0-3). Extra arguments go to `bwsim run gemm_persistent`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
mkdir -p out
exec build/bwsim run gemm_persistent --config sim_configs/b200.yaml --m 8192 --n 8192 --k 8192 \
  --trace out/gemm.trace.json "$@"
