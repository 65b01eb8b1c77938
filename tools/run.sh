#!/usr/bin/env bash
# The main job: set-up (packages, configure, build), then simulate a kernel on the B200 config,
# print its summary and write a trace. Extra arguments go to `bwsim run`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
mkdir -p out
exec build/bwsim run tma_copy --rows 4096 --cols 4096 --ctas 148 --trace out/tma_copy.trace.json "$@"
