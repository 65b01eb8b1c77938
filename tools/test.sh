#!/usr/bin/env bash
# Runs the whole test suite: set-up (packages, configure, build), then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# The HTML report test renders the page in Debian's headless Chromium; the Slurm integration test
# (tools/test_slurm.sh) starts a one-node Slurm of Debian's packages.
test_packages=()
command -v chromium >/dev/null || test_packages+=(chromium)
command -v slurmctld >/dev/null || test_packages+=(slurmctld)
command -v slurmd >/dev/null || test_packages+=(slurmd)
command -v sbatch >/dev/null || test_packages+=(slurm-client)
command -v npm >/dev/null || test_packages+=(npm)
if ((${#test_packages[@]})); then
  echo "test: installing ${test_packages[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${test_packages[@]}" >&2
fi
# speedscope (the offline trace viewer the viewer test opens a trace in), from npm as pinned in
# tools/viewer/package-lock.json, into build/viewer.
if [ ! -f build/viewer/node_modules/speedscope/dist/release/index.html ] ||
   ! cmp -s tools/viewer/package-lock.json build/viewer/package-lock.json; then
  echo "test: installing speedscope (npm)" >&2
  mkdir -p build/viewer
  cp tools/viewer/package.json tools/viewer/package-lock.json build/viewer/
  npm ci --prefix build/viewer --no-audit --no-fund >&2
fi
ctest --test-dir build --output-on-failure --timeout 300 -j "$(nproc)"
