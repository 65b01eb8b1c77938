#!/usr/bin/env bash
# Issue 21's runs, each timed end to end with its peak memory (GNU time's wall seconds and
# maximum resident set): bash tools/speed.sh [BWSIM] (default build/bwsim). Compare builds by
# running this for each binary in turn on one machine. bwsim run checks races on a second thread on
# a host of two cores or more; the "inline" rows keep them on the simulation's thread.
set -euo pipefail
cd "$(dirname "$0")/.."
bwsim=${1:-build/bwsim}
b200=sim_configs/b200.yaml
run() {
  local name=$1; shift
  /usr/bin/time -f "$name\t%e s\t%M KB" "$bwsim" run "$@" --config "$b200" --json > /dev/null
}
run "gemm 8192^3 2-SM, race checks" gemm_persistent --m 8192 --n 8192 --k 8192
run "gemm 8192^3 2-SM, race checks inline" gemm_persistent --m 8192 --n 8192 --k 8192 --inline-race-checks
run "gemm 8192^3 2-SM, no race checks" gemm_persistent --m 8192 --n 8192 --k 8192 --no-check-races
run "fmha 1x16x16384 d128" fmha --batch 1 --heads 16 --seqlen 16384
run "fmha 1x16x16384 d128, race checks inline" fmha --batch 1 --heads 16 --seqlen 16384 --inline-race-checks
run "gemm 16384^3 2-SM" gemm_persistent --m 16384 --n 16384 --k 16384
run "gemm 16384^3 2-SM, race checks inline" gemm_persistent --m 16384 --n 16384 --k 16384 --inline-race-checks
run "gemm 1024^3 functional + check" gemm_persistent --m 1024 --n 1024 --k 1024 --functional --check
