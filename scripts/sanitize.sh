#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer (scripts/build-asan.sh: clang, -O1) and
# runs the whole test suite under them. Usage: scripts/sanitize.sh [build-dir] (default build-asan, which
# scripts/fuzz.sh shares)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${TERMALIGN_SANITIZE_BUILD_DIR:-$root/build-asan}}
"$root/scripts/build-asan.sh" "$build"
# libfasttext is not instrumented: its std::vector annotations would raise false container overflows.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_container_overflow=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# A test per core, each with a thread per core: waiting OpenMP threads sleep, leaving the cores to the other tests.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
cd "$build"
# OpenBLAS is not instrumented, while Eigen's product compiled here (-O1, AddressSanitizer) is several times slower.
# Where OpenBLAS's kernel rounds alike (asked for, one that does not is a usage error), the suite runs with
# its tiles, and then the tile tests run again with Eigen's product, so that the code around it is checked too.
if TERMALIGN_TILE_KERNEL=openblas ./termalign --version > /dev/null 2>&1; then
  TERMALIGN_TILE_KERNEL=openblas ctest --output-on-failure -j "$(nproc)"
  echo "== [scoring] and [bf16] tests with Eigen's tile product"
  TERMALIGN_TILE_KERNEL=eigen ./termalign_tests "[scoring],[bf16]"
else
  ctest --output-on-failure -j "$(nproc)"
fi
