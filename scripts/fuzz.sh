#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer; the build of
# scripts/build-asan.sh, shared with scripts/sanitize.sh) and runs each from its seed corpus, as many at a time as
# there are cores (each target gets a core of its own for its whole time).
#
#   scripts/fuzz.sh [SECONDS]                 each target for SECONDS (default 60) with a random seed, growing the
#                                             corpus of earlier runs kept in <build>/corpus (exploration)
#   scripts/fuzz.sh --seed S [SECONDS]        each target for SECONDS from the seeds alone with libFuzzer's seed S:
#                                             the same inputs in the same order on every machine, so a longer run
#                                             with the same seed covers what a shorter one tries (what CI runs)
#   scripts/fuzz.sh --seed S --runs N         each target for N inputs instead of a time
#
# A crash leaves its input in <build>/crashes/ and fails the script; add it to tests/fuzz/corpus/<target>/ and
# keep a test of the fixed behaviour in tests/test_robustness*.cpp.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=60
runs=""
seed=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    [0-9]*) seconds=$1; shift ;;
    *) echo "fuzz.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -z $runs || -n $seed ]] || { echo "fuzz.sh: --runs needs --seed" >&2; exit 2; }
build=${TERMALIGN_FUZZ_BUILD_DIR:-$root/build-asan}
"$root/scripts/build-asan.sh" "$build" fuzzers
mkdir -p "$build/crashes"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_container_overflow=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# run TARGET: fuzzes one target, its output in <build>/TARGET.log; prints one line of outcome.
run() {
  local target=$1 seeds=$root/tests/fuzz/corpus/$1 corpus budget
  if [[ -n $seed ]]; then
    corpus="$build/corpus-seed$seed/$target"  # starts empty every time: the run depends on the seeds alone
    rm -rf "$corpus"
    if [[ -n $runs ]]; then
      budget=(-runs="$runs" -seed="$seed")
      echo "== $target: $runs inputs, seed $seed"
    else
      budget=(-max_total_time="$seconds" -seed="$seed")
      echo "== $target: ${seconds} s, seed $seed"
    fi
  else
    corpus="$build/corpus/$target"  # grows from run to run; the seeds stay untouched
    budget=(-max_total_time="$seconds")
    echo "== $target: ${seconds} s"
  fi
  mkdir -p "$corpus"
  if ! "$build/$target" "${budget[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/crashes/$target-" "$corpus" "$seeds" \
      > "$build/$target.log" 2>&1; then
    echo "FAILED: $target (see $build/$target.log; inputs in $build/crashes/)"
    tail -n 40 "$build/$target.log"
    return 1
  fi
  grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$build/$target.log" | tr '\n' ' '
  echo
}

# Up to nproc targets at a time; each one's report printed whole, in the order of the targets.
targets=()
for seeds in "$root"/tests/fuzz/corpus/*/; do targets+=("$(basename "$seeds")"); done
failed=0
jobs=$(nproc)
for ((first = 0; first < ${#targets[@]}; first += jobs)); do
  pids=()
  for target in "${targets[@]:first:jobs}"; do
    run "$target" > "$build/$target.outcome" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "$build/${targets[first + i]}.outcome"
  done
done
exit "$failed"
