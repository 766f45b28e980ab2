#!/usr/bin/env bash
# The alignment tests in a second build flavour: clang at -O1, generic x86-64 (-DTERMALIGN_NATIVE=OFF), so that a
# decision that depends on the compiler or the instruction set shows up here rather than on a user's machine. The
# release build (scripts/test.sh) is gcc at -O3 for this CPU; both must give the pinned figures within their margins.
# The build has MPI (scripts/test_mpi.sh BUILD-DIR can use it). CI builds this flavour once, with the sanitizers
# (scripts/build-asan.sh), and runs the whole suite there; this script is the quick check without them.
#
#   scripts/test_portable.sh [build-dir]     (default build-portable)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${TERMALIGN_PORTABLE_BUILD_DIR:-$root/build-portable}}
"$root/scripts/bootstrap.sh" --packages  # Open MPI among them
source "$root/scripts/build_env.sh"
if [[ -f $build/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++' "$build/CMakeCache.txt"; then
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
fi
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DTERMALIGN_NATIVE=OFF -DTERMALIGN_WITH_MPI=ON \
  -DTERMALIGN_TEST_SPEC="[align]" \
  >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)" --target termalign termalign_tests >&2
cd "$build"
./termalign --version
ctest --output-on-failure -j "$(nproc)"
