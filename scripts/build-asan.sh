#!/usr/bin/env bash
# Configures and builds the sanitizer build that scripts/sanitize.sh and scripts/fuzz.sh share: clang,
# AddressSanitizer + UndefinedBehaviorSanitizer on everything (TERMALIGN_SANITIZE) and the libFuzzer targets
# (TERMALIGN_BUILD_FUZZERS), at -O1 with line tables only: a third of the build time of -O2 -g, with the same
# reports (file and line in every stack frame); UndefinedBehaviorSanitizer leaves Eigen's own code alone
# (cmake/sanitizer-ignorelist.txt). It is also the project's second build flavour: clang for generic
# x86-64 (no -march=native), so that a decision that depends on the compiler or the instruction set shows up in its
# test run rather than on a user's machine. Its files are compiled in batches (a unity build): a sanitizer build has
# no scores to keep bit for bit.
#
#   scripts/build-asan.sh BUILD-DIR [TARGET...]    (no target: everything, tests and fuzzers)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1
shift
"$root/scripts/bootstrap.sh" --packages  # on a fresh machine, the build's packages first
source "$root/scripts/build_env.sh"
mkdir -p "$build"
# A folder configured by an older script with g++ cannot switch compilers in place: start it afresh.
if [[ -f $build/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++' "$build/CMakeCache.txt"; then
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
fi
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DCMAKE_UNITY_BUILD=ON \
  -DTERMALIGN_NATIVE=OFF -DTERMALIGN_SANITIZE=ON -DTERMALIGN_BUILD_FUZZERS=ON \
  > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}" >&2
