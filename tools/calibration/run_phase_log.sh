#!/usr/bin/env bash
# On the H100/H200 machine: where the validation GEMMs spend their time tile by tile. Builds
# gemm_sm90_twin.cu and runs the shapes of the validation (and single-CTA runs that isolate one SM's
# pipeline) with --phase-log, writing <tag>_gemm_sm90_phases_<name>.csv (each consumer warpgroup's
# mainloop start, mainloop end and epilogue end per tile, the last timed launch), with --chunk-log
# <tag>_gemm_sm90_chunks_<name>.csv (each epilogue chunk's wait, bar.sync and TMA store issue, SM
# cycles after its tile's mainloop end, and the tile's mainloop start after its CTA's start) and the result
# rows into <tag>_gemm_sm90_phase_rows.csv, each configuration also without the log (the phase
# probes are in their own kernel instantiation; the rows show they leave the time alone) and the
# SASS counts per instantiation. tools/calibration/phase_log.py summarises the files, and bwsim run
# gemm_sm90 --phase-log writes the model's.
# Usage: OUT=dir bash tools/calibration/run_phase_log.sh   (GEMM_TAG, default h100)
set -uo pipefail
cd "$(dirname "$0")"
source device_common.sh
build_sm90 gemm_sm90_twin
rows="$out/${tag}_gemm_sm90_phase_rows.csv"
silicon_header > "$rows"
"$bin/gemm_sm90_twin" --header --m 128 --n 128 --k 64 --reps 1 >> "$rows"
run() {  # name, then the twin's arguments
  local name=$1
  shift
  local log="$out/${tag}_gemm_sm90_phases_${name}.csv" chunks="$out/${tag}_gemm_sm90_chunks_${name}.csv"
  "$bin/gemm_sm90_twin" "$@" --reps 5 >> "$rows" 2>> "$out/run.log"
  "$bin/gemm_sm90_twin" "$@" --reps 5 --phase-log "$log" --chunk-log "$chunks" >> "$rows" 2>> "$out/run.log"
  for f in "$log" "$chunks"; do
    { silicon_header; echo "# gemm_sm90_twin --phase-log (run_phase_log.sh, configuration $name: $*)"; cat "$f"; } > "$f.tmp"
    mv "$f.tmp" "$f"
  done
}
coop="--schedule cooperative --rows-per-wg 64 --tile-n 256"
run one_cta_k1024 --m 128 --n 256 --k 1024 $coop --stages 4 --grid 1
run one_cta_k65536 --m 128 --n 256 --k 65536 $coop --stages 4 --grid 1
run coop_1024 --m 1024 --n 1024 --k 1024 $coop --stages 4
run coop_2048 --m 2048 --n 2048 --k 2048 $coop --stages 4
run coop_1024x16384 --m 1024 --n 1024 --k 16384 $coop --stages 4
run coop_8192x1024 --m 8192 --n 8192 --k 1024 $coop --stages 4
run coop_4096 --m 4096 --n 4096 --k 4096 $coop --stages 4
run coop2_4096 --m 4096 --n 4096 --k 4096 $coop --stages 2
run pp128_4096 --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
run pp64_4096 --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 64 --tile-n 256 --stages 4
# without the epilogue's stores (diagnostic): what they cost the other warpgroup's mainloop
run pp128_4096_noepi --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --no-epilogue
run coop_4096_noepi --m 4096 --n 4096 --k 4096 $coop --stages 4 --no-epilogue
run pp128_4096_onecta_noepi --m 128 --n 256 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --grid 1 --no-epilogue
run pp128_4096_onecta --m 128 --n 256 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --grid 1
cuobjdump -sass "$bin/gemm_sm90_twin" | awk '/Function :/ {f=$3} /HGMMA/ {h[f]++} /WARPGROUP.ARRIVE/ {a[f]++}
  END {for (f in h) printf "# sass,%s,HGMMA %d,WARPGROUP.ARRIVE %d\n", f, h[f], a[f]}' >> "$rows"
cat "$rows"
