#!/usr/bin/env bash
# Installs the Debian packages termalign needs (only those missing; silent when all are there) and builds it.
# Usage: scripts/bootstrap.sh [build-dir] [extra cmake arguments...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shift || true

packages=(build-essential cmake pkg-config libeigen3-dev libfasttext-dev libspdlog-dev catch2 libcli11-dev
          libtomlplusplus-dev libicu-dev libopenblas-dev libbenchmark-dev python3-numpy python3-matplotlib clang
          libclang-rt-14-dev zlib1g-dev libxgboost-dev)
"$root/scripts/install-packages.sh" "${packages[@]}"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$(nproc)" -- --no-print-directory >&2
