#!/usr/bin/env bash
# Runs the whole test suite: set-up (packages, configure, build), then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
ctest --test-dir build --output-on-failure --timeout 300 -j "$(nproc)"
