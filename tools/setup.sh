#!/usr/bin/env bash
# Idempotent set-up: installs missing Debian packages, configures and builds into build/.
# Safe to run on a fresh machine with nothing installed, and cheap to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev libspdlog-dev
          libyaml-cpp-dev nlohmann-json3-dev libcli11-dev pybind11-dev python3-dev python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The Python module is built for Debian's python3 (its pybind11, headers and matplotlib), whatever
# other python3 comes first on the PATH. The build is profile-guided (CMakeLists.txt, BWSIM_PGO):
# bwsim is built instrumented, runs tools/pgo_train.sh, and everything is then built with the
# profiles it left. A build/ configured with BWSIM_PGO=off stays so; one set to generate (as
# `cmake -B build -DBWSIM_PGO=generate` does, to train again after large changes) is trained.
pgo=$(sed -n 's/^BWSIM_PGO:[A-Z]*=//p' build/CMakeCache.txt 2>/dev/null || true)
if [ ! -f build/build.ninja ] || ! grep -q '^Python3_EXECUTABLE:[A-Z]*=/usr/bin/python3$' build/CMakeCache.txt ||
   { [ "$pgo" != use ] && [ "$pgo" != off ]; }; then
  configure=(cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3)
  if [ "$pgo" = off ]; then
    "${configure[@]}" >&2
  else
    "${configure[@]}" -DBWSIM_PGO=generate >&2
    cmake --build build --parallel "$(nproc)" --target bwsim >&2
    echo "setup: the profile-guided build's training runs (tools/pgo_train.sh)" >&2
    tools/pgo_train.sh
    cmake -S . -B build -DBWSIM_PGO=use >&2
  fi
fi
cmake --build build --parallel "$(nproc)" >&2
