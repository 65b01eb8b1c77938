#!/usr/bin/env bash
# Installs the bwsim of build directory $1 to a temporary prefix, builds examples/my_kernel against
# it as a user's own project would (find_package(bwsim)), runs its tests and its command line.
set -euo pipefail
build="${1:?usage: test_example.sh BUILD_DIR}"
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$src/examples/my_kernel" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/build" --parallel 2
ctest --test-dir "$work/build" --output-on-failure
# The user's command line: their kernel beside the built-in ones, checked; the default config found
# in the install prefix.
"$work/build/my_bwsim" list | grep -q '^colsum'
"$work/build/my_bwsim" run colsum --rows 4096 --functional --check --config "$work/prefix/share/bwsim/sim_configs/b200.yaml"
set +e
"$work/build/my_bwsim" run colsum --rows 256 --forget-release > "$work/deadlock.txt" 2>&1
code=$?
set -e
[ "$code" -eq 5 ] && grep -q "tiles.empty" "$work/deadlock.txt" ||
  { cat "$work/deadlock.txt"; echo "test_example: --forget-release exited $code, expected 5 (a deadlock naming tiles.empty)"; exit 1; }
set +e
"$work/build/my_bwsim" run colsum --rows 256 --early-release > "$work/race.txt" 2>&1
code=$?
set -e
[ "$code" -eq 3 ] && grep -q "race-stage-reuse" "$work/race.txt" ||
  { cat "$work/race.txt"; echo "test_example: --early-release exited $code, expected 3 (race-stage-reuse)"; exit 1; }
echo "test_example: the out-of-tree kernel builds, passes its tests and runs under my_bwsim"
