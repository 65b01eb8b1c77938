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
if ((${#test_packages[@]})); then
  echo "test: installing ${test_packages[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${test_packages[@]}" >&2
fi
ctest --test-dir build --output-on-failure --timeout 300 -j "$(nproc)"
