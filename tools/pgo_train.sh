#!/usr/bin/env bash
# The runs whose profile the bwsim build is optimised for (tools/setup.sh: BWSIM_PGO=generate,
# these runs, then BWSIM_PGO=use): the README's jobs at smaller sizes, so every hot path is taken
# (timing mode with race checks on the thread and without, the 1-SM and 2-SM GEMMs, attention
# forward and backward, the Hopper GEMM, functional mode with its reference check). About 5 s
# instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."
b200=sim_configs/b200.yaml
run() { build/bwsim run "$@" --json > /dev/null; }
run gemm_persistent --config "$b200" --m 4096 --n 4096 --k 4096
run gemm_persistent --config "$b200" --m 4096 --n 4096 --k 4096 --variant 1sm --no-check-races
run fmha --config "$b200" --batch 1 --heads 16 --seqlen 4096
run fmha --config "$b200" --batch 1 --heads 16 --seqlen 4096 --no-check-races
run fmha_bwd --config "$b200" --batch 1 --heads 4 --seqlen 2048
run gemm_persistent --config "$b200" --m 512 --n 512 --k 512 --functional --check
run gemm_sm90 --config sim_configs/h100.yaml --m 4096 --n 4096 --k 4096
