#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERMALIGN_BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh" "$build"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
