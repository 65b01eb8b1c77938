#!/usr/bin/env bash
# On the H100/H200 machine: how long the validation GEMMs' k-block loops take between a wait's
# return and the instruction it gates. Builds gemm_sm90_twin.cu and runs shapes of the validation
# with --phase-log (the instrumented instantiation; the timed kernels' code is unchanged) and
# --path-log: per CTA the producer's mean cycles from an empty barrier's wait returning to its
# k-block's first TMA load (the source of gemm_sm90's producer_path_cycles), and each consumer
# warpgroup's from a full barrier's wait returning to its first wgmma's issue (the source of its
# consumer_path_cycles, from the ping-pong shapes: the cooperative ones add the two warpgroups' wait
# for the tensor pipe). Writes <tag>_gemm_sm90_paths.csv (configuration, then the path log's columns) and
# the twin's SASS of those stretches (<tag>_gemm_sm90_paths_sass.txt: per instantiation, the
# instructions from each such wait to the load or wgmma it gates) in $OUT.
# Usage: GEMM_TAG=h200 OUT=dir bash tools/calibration/run_gemm_paths.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 gemm_sm90_twin
csv="$out/${tag}_gemm_sm90_paths.csv"
{ silicon_header; echo "config,cta,producer_cycles,wg0_cycles,wg1_cycles,kblocks"; } > "$csv"
run() {  # name, then the twin's arguments
  local name=$1
  shift
  rm -f "$bin/paths.csv"
  if "$bin/gemm_sm90_twin" "$@" --reps 3 --phase-log "$bin/phases.csv" --path-log "$bin/paths.csv" >> "$out/run.log" 2>&1; then
    tail -n +2 "$bin/paths.csv" | sed "s/^/$name,/" >> "$csv"
  else
    echo "# FAILED $name" >> "$csv"
  fi
}
coop="--schedule cooperative --rows-per-wg 64 --tile-n 256"
run one_cta_k65536 --m 128 --n 256 --k 65536 $coop --stages 4 --grid 1
run pp128_one_cta_k65536 --m 128 --n 128 --k 65536 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --grid 1
run coop2_4096 --m 4096 --n 4096 --k 4096 $coop --stages 2
run coop3_4096 --m 4096 --n 4096 --k 4096 $coop --stages 3
run coop_4096 --m 4096 --n 4096 --k 4096 $coop --stages 4
run pp128_4096 --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
run pp64_4096 --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 64 --tile-n 256 --stages 4
run pp128_8192 --m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
silicon_footer >> "$csv"
cuobjdump -sass "$bin/gemm_sm90_twin" | python3 sass_paths.py > "$out/${tag}_gemm_sm90_paths_sass.txt"
python3 gemm_paths.py "$csv"
