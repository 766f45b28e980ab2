#!/usr/bin/env bash
# Installs the build in BUILD into a fresh prefix under WORK and builds and runs tests/package/consumer against it.
# Usage: check_package.sh BUILD WORK [CXX]
set -euo pipefail
build=$1 work=$2 cxx=${3:-c++}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
test -f "$work/prefix/lib/cmake/termalign/termalignConfig.cmake" || test -f "$work"/prefix/lib*/cmake/termalign/termalignConfig.cmake
test -x "$work/prefix/share/termalign/plot_curve.py"
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log"
cmake --build "$work/consumer" -j 2 >"$work/build.log"
"$work/consumer/consumer"
rm -rf "$work"
