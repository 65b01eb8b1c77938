#!/usr/bin/env bash
# The host work of bwsim runs, counted rather than timed: instructions, L1 data misses and misses
# of a 2 MiB L2 (this VM's per-core L2) under valgrind's cachegrind. The counts are the same from
# run to run, where wall time on a shared 2-core VM moves by 30-50%, so two builds compare to a
# fraction of a percent. Slow (about 40x a plain run), so the runs are smaller than speed.sh's.
#   bash tools/cost.sh [BWSIM ...]   (default build/bwsim; several binaries: one row each per run)
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind > /dev/null || { echo "tools/cost.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=(build/bwsim)
b200=sim_configs/b200.yaml
out=$(mktemp)
trap 'rm -f "$out"' EXIT
count() {
  local name=$1 bin=$2; shift 2
  # The race checks inline, where the binary can run them on a second thread: cachegrind runs
  # threads one at a time through one simulated cache, so only the one-thread work compares.
  local inline=()
  "$bin" run gemm --help 2>&1 | grep -q -- --inline-race-checks && inline=(--inline-race-checks)
  valgrind --tool=cachegrind --cache-sim=yes --LL=2097152,16,64 --cachegrind-out-file=/dev/null \
    "$bin" run "$@" "${inline[@]}" --config "$b200" --json > /dev/null 2> "$out"
  python3 - "$name" "$bin" "$out" <<'PY'
import re, sys
name, binary, path = sys.argv[1:]
text = open(path).read()
def total(label):
    return int(re.search(label + r":\s+([\d,]+)", text).group(1).replace(",", ""))
print(f"{name}\t{binary}\t{total('I   refs') / 1e6:.1f} M instructions\t"
      f"{total('D1  misses') / 1e6:.2f} M L1d misses\t{total('LLd misses') / 1e6:.2f} M L2 misses")
PY
}
for bin in "${binaries[@]}"; do
  count "gemm 4096^3 2-SM, race checks" "$bin" gemm_persistent --m 4096 --n 4096 --k 4096
  count "gemm 4096^3 2-SM, no race checks" "$bin" gemm_persistent --m 4096 --n 4096 --k 4096 --no-check-races
  count "fmha 1x16x4096 d128" "$bin" fmha --batch 1 --heads 16 --seqlen 4096
  count "fmha 1x16x4096 d128, no race checks" "$bin" fmha --batch 1 --heads 16 --seqlen 4096 --no-check-races
done
