#!/usr/bin/env bash
# On the H200 (or H100) machine: h100_wake.cu's rows (who gets going when after a TMA load completes
# an mbarrier) into <tag>_wake.csv in $OUT (default: this directory), and the SASS of its kernel and
# of h100_stage_parts.cu's around their mbarrier waits into <tag>_wake_sass.txt (what the waits
# compile to).
# Usage: GEMM_TAG=h200 bash tools/calibration/run_wake.sh
set -uo pipefail
cd "$(dirname "$0")"
. ./device_common.sh
build_sm90 h100_wake h100_stage_parts
{
  silicon_header
  "$bin/h100_wake"
  silicon_footer
} > "$out/${tag}_wake.csv"
cat "$out/${tag}_wake.csv"
for program in h100_wake h100_stage_parts; do
  echo "## $program"
  cuobjdump -sass "$bin/$program" | grep -vE '^\s*/\*[0-9a-f]+\*/\s+\(\*' | grep -E 'Function|SYNCS|CS2R|UTMALDG|BRA|NANOSLEEP|YIELD|STG|EXIT|WARPSYNC|BSSY|BSYNC'
done > "$out/${tag}_wake_sass.txt"
wc -l "$out/${tag}_wake_sass.txt"
