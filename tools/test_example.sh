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
# The user's command line: their kernel beside the built-in ones, checked (config from the install
# prefix); its two injected bugs end with their exit codes and located messages.
# (into a file: grep -q closing a pipe early would end my_bwsim with SIGPIPE, a failure under pipefail)
"$work/build/my_bwsim" list > "$work/list.txt"
grep -q '^colsum' "$work/list.txt"
"$work/build/my_bwsim" run colsum --rows 4096 --functional --check --config "$work/prefix/share/bwsim/sim_configs/b200.yaml"
expect_failure() {  # BUG_FLAG EXIT_CODE PHRASE
  local code=0
  "$work/build/my_bwsim" run colsum --rows 256 "$1" > "$work/out.txt" 2>&1 || code=$?
  [ "$code" -eq "$2" ] && grep -q "$3" "$work/out.txt" ||
    { cat "$work/out.txt"; echo "test_example: $1 exited $code, expected $2 with '$3'"; exit 1; }
}
expect_failure --forget-release 5 "tiles.empty"
expect_failure --early-release 3 "race-stage-reuse"
echo "test_example: the out-of-tree kernel builds, passes its tests and runs under my_bwsim"
