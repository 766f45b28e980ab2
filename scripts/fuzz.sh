#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer) and runs each
# for N seconds (default 60) from its seed corpus. Usage: scripts/fuzz.sh [seconds]
# A crash leaves its input in <build>/crashes/ and fails the script; keep it as a regression test (see
# tests/test_robustness.cpp, "fuzz regressions").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
build=${TERMALIGN_FUZZ_BUILD_DIR:-$root/build-fuzz}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DTERMALIGN_BUILD_FUZZERS=ON -DTERMALIGN_BUILD_TESTS=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j2 --target fuzzers
mkdir -p "$build/crashes"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_container_overflow=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for seeds in "$root"/tests/fuzz/corpus/*/; do
  target=$(basename "$seeds")
  corpus="$build/corpus/$target"  # grows from run to run; the seeds stay untouched
  mkdir -p "$corpus"
  echo "== $target: ${seconds} s"
  if ! "$build/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/crashes/$target-" "$corpus" "$seeds" \
      > "$build/$target.log" 2>&1; then
    echo "FAILED: $target (see $build/$target.log; inputs in $build/crashes/)"
    tail -n 40 "$build/$target.log"
    failed=1
  else
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$build/$target.log" | tr '\n' ' '
    echo
  fi
done
exit "$failed"
