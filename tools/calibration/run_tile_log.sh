#!/usr/bin/env bash
# On the H100/H200 machine: build gemm_sm90_twin.cu and time the GEMMs of the validation whose
# predictions miss with --tile-log, writing per configuration <tag>_gemm_sm90_tiles_<name>.csv (each CTA's
# SM and every tile's start, the last of the timed launches) and the usual result rows into
# <tag>_gemm_sm90_tile_log_rows.csv under $OUT. A diagnostic: how far apart in time the CTAs that share an
# operand tile read it, which decides whether the second read hits in the L2.
# Usage: OUT=dir bash tools/calibration/run_tile_log.sh   (GEMM_TAG, default h100)
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
tag="${GEMM_TAG:-h100}"
bin=/tmp/gemm_sm90_bin
mkdir -p "$bin"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a gemm_sm90_twin.cu -lcuda -o "$bin/gemm_sm90_twin" \
  > "$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
rows="$out/${tag}_gemm_sm90_tile_log_rows.csv"
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
} > "$rows"
run() {  # name, then the twin's arguments
  local name=$1
  shift
  local log="$out/${tag}_gemm_sm90_tiles_${name}.csv"
  "$bin/gemm_sm90_twin" "$@" --reps 5 --tile-log "$log" >> "$rows" 2>> "$out/run.log"
  { head -n 2 "$rows"; echo "# gemm_sm90_twin --tile-log (run_tile_log.sh, configuration $name)"; cat "$log"; } > "$log.tmp"
  mv "$log.tmp" "$log"
}
"$bin/gemm_sm90_twin" --header --m 128 --n 128 --k 64 --reps 1 --schedule pingpong --rows-per-wg 128 --tile-n 128 >> "$rows"
run pp128_8192 --m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
run coop_8192 --m 8192 --n 8192 --k 8192 --schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4
run pp128_4096 --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
run coop2_4096 --m 4096 --n 4096 --k 4096 --schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 2
run coop_4096 --m 4096 --n 4096 --k 4096 --schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4
run pp128_8192_b --m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6
# the same work on other SMs: does a CTA's pace follow its SM or its tiles?
run pp128_4096_rot40 --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --rotate 40
run pp128_4096_rot77 --m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6 --rotate 77
nvidia-smi --query-gpu=serial,uuid --format=csv,noheader | sed 's/^/# gpu,/' >> "$rows"
cuobjdump -sass "$bin/gemm_sm90_twin" | awk '/Function :/ {f=$3} /HGMMA/ {h[f]++} /WARPGROUP.ARRIVE/ {a[f]++}
  END {for (f in h) printf "# sass,%s,HGMMA %d,WARPGROUP.ARRIVE %d\n", f, h[f], a[f]}' >> "$rows"
cat "$rows"
