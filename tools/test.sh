#!/usr/bin/env bash
# Runs the whole test suite: set-up (packages, configure, build), then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# The HTML report test renders the page in Debian's headless Chromium.
if ! command -v chromium >/dev/null; then
  echo "test: installing chromium" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
fi
ctest --test-dir build --output-on-failure --timeout 300 -j "$(nproc)"
