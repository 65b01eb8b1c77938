#!/usr/bin/env bash
# On the H100 (or H200) machine: the CUDA-core unit rows and the softmax twin (issue 19).
# (a) run_program.sh h100_cudacore: builds h100_cudacore.cu for sm_90a, runs it once to warm up, then
#     again, and writes h100_cudacore.csv (date and nvidia-smi header lines, then the rows);
# (b) compiles h100_cudacore.cu into sm_90a and sm_100a cubins (the same flags), dumps their SASS with
#     cuobjdump -sass and counts the opcodes of each kernel's loop body with sass_counts.py:
#       softmax_sass.csv   arch,kernel,opcode,count,per_element  (k_softmax: one row tile; per_element
#                          = count / 128 columns)
#       softmax_pipes.csv  arch,kernel,pipe,count,per_element    (the same by pipe, sass_counts.py's
#                          assignment)
#       softmax_sass.txt   the loop bodies' SASS, and what lies outside them
#       cudacore_sass.csv, cudacore_sass.txt                     (k_units: one iteration of 512 steps
#                          of the unit rows; per_element = count)
# Everything goes to $OUT (default: this directory). (b) runs even when (a) failed; the exit status is
# non-zero when either failed or a softmax result disagreed with the CPU reference.
# Usage: bash tools/calibration/run_cudacore.sh
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
status=0

if ! bash run_program.sh h100_cudacore; then
  status=1
  echo "run_cudacore.sh: run_program.sh h100_cudacore failed; its build log:" >&2
  cat /tmp/h100_cudacore.build.log >&2 || true
fi
if grep -q "CHECK FAILED" "$out/h100_cudacore.csv" 2> /dev/null; then
  status=1
  echo "run_cudacore.sh: a softmax result differs from the CPU reference (see h100_cudacore.csv)" >&2
fi

sass=/tmp/cudacore_sass
mkdir -p "$sass"
dumps=()
for arch in sm_90a sm_100a; do
  cc="compute_${arch#sm_}"
  if nvcc -O2 -std=c++17 "-gencode=arch=$cc,code=$arch" -cubin h100_cudacore.cu -o "$sass/$arch.cubin" \
      2> "$sass/$arch.build.log" && cuobjdump -sass "$sass/$arch.cubin" > "$sass/$arch.sass"; then
    dumps+=("$arch=$sass/$arch.sass")
  else
    status=1
    echo "run_cudacore.sh: no SASS for $arch:" >&2
    cat "$sass/$arch.build.log" >&2 || true
  fi
done
if ((${#dumps[@]})); then
  python3 sass_counts.py --match k_softmax --elements 128 --pipes "$out/softmax_pipes.csv" \
    --listing "$out/softmax_sass.txt" "${dumps[@]}" > "$out/softmax_sass.csv" || status=1
  python3 sass_counts.py --match k_units --elements 1 --listing "$out/cudacore_sass.txt" "${dumps[@]}" \
    > "$out/cudacore_sass.csv" || status=1
  cat "$out/softmax_pipes.csv" || true
fi
exit "$status"
