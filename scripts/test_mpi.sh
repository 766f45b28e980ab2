#!/usr/bin/env bash
# The MPI build (TERMALIGN_WITH_MPI=ON) on the bundled sample: installs Open MPI when missing, builds termalign in
# <build> (default build-mpi), then for several configurations compares `mpirun -np 2` and `mpirun -np 3`
# (oversubscribed, default precision: bf16 where the CPU has it) with the single-process run in fp32 byte for byte
# (submission and score list), and checks that a rank
# failing on bad input ends the whole job with its error sentence and exit code, without touching the output.
#
#   scripts/test_mpi.sh [build-dir]          the checks (CI runs them)
#   scripts/test_mpi.sh --scaling [build]    also the strong scaling at P = 1, 2 on 20k x 20k synthetic terms
#                                            (bench/generate_synthetic.py, which needs NumPy), default and plain
#                                            method
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scaling=0
if [[ ${1:-} == --scaling ]]; then scaling=1; shift; fi
build=${1:-${TERMALIGN_MPI_BUILD_DIR:-$root/build-mpi}}
"$root/scripts/bootstrap.sh" --packages  # on a fresh machine, the build's packages first (Open MPI among them)
source "$root/scripts/build_env.sh"
# A folder already configured keeps its flavour (CI passes the test build, build/, which has MPI).
if [[ -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -DTERMALIGN_WITH_MPI=ON >/dev/null
else
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERMALIGN_WITH_MPI=ON -DTERMALIGN_BUILD_TESTS=OFF \
    >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target termalign >&2
termalign=$build/termalign
# Open MPI refuses to start as root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Without a network between machines, the shared-memory and loopback transports are all it needs.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
export TERMALIGN_LOG_LEVEL=error  # the sample's warnings, once per run and rank, would bury the results
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

sample=(--config "$root/configs/sample.toml")
# The seedless run (its ranked rounds and their mean included), a dictionary's run without a seed lexicon (the
# sample's seed lexicon read as a dictionary: its frequent pairs seed the map) and gzipped fastText models with the
# sample's corpora (their context words asked of the models before the one pass) too.
gzip -c "$root/models/sample/en.bin" >"$work/en.bin.gz"
gzip -c "$root/models/sample/fr.bin" >"$work/fr.bin.gz"
declare -A variants=(
  [default]=""
  [reranker]="--reranker $root/models/reranker-enfr.txt"
  [mutual]="--mutual-m 3 --orthographic-candidates 0"
  [vocabulary]="--neighbourhood vocabulary --k 5"
  [limit-only]="--top-m 0 --cap 500 --orthographic-weight 0 --orthographic-candidates 0"
  [seedless]="--seed auto"
  [dictionary]="--seed auto --dictionary $root/data/sample/seed-en-fr.txt"
  [bin-gz]="--src-vectors $work/en.bin.gz --tgt-vectors $work/fr.bin.gz"
)
for name in default reranker mutual vocabulary limit-only seedless dictionary bin-gz; do
  read -r -a extra <<<"${variants[$name]}"
  # The single process in fp32; the MPI runs in the default precision (bf16 where the CPU has it): the same bytes.
  "$termalign" align -q "${sample[@]}" "${extra[@]}" --precision fp32 --out "$work/$name-1.tsv" \
    --scores "$work/$name-1.scores"
  for np in 2 3; do
    timeout 300 mpirun -np "$np" --oversubscribe "$termalign" align -q "${sample[@]}" "${extra[@]}" \
      --out "$work/$name-$np.tsv" --scores "$work/$name-$np.scores"
    if cmp -s "$work/$name-1.tsv" "$work/$name-$np.tsv" && cmp -s "$work/$name-1.scores" "$work/$name-$np.scores"
    then
      echo "mpi: $name, -np $np: identical to the single process in fp32 ($(wc -l <"$work/$name-1.tsv") pairs)"
    else
      echo "mpi: $name, -np $np: DIFFERS from the single process"
      failed=1
    fi
  done
done

# A rank that fails: rank 1 is given a missing term list (MPMD launch). The job must end (not hang) with the
# error sentence and exit code 3, the existing output must stay as it was, and no temporary file may be left.
echo "previous output" >"$work/failed.tsv"
status=0
# Every output is given (the sample configuration's own folder may not exist): rank 1 alone is at fault.
outputs=(--out "$work/failed.tsv" --scores "$work/failed.scores")
timeout 120 mpirun -np 1 "$termalign" align -q "${sample[@]}" "${outputs[@]}" : \
  -np 1 "$termalign" align -q "${sample[@]}" "${outputs[@]}" --src-terms "$work/missing.txt" \
  >"$work/failed.log" 2>&1 || status=$?
leftovers=$(find "$work" -name 'failed.*.tmp.*' | wc -l)  # rank 0 had created its temporary files
if [[ $status == 3 ]] && grep -q "missing.txt: cannot open file" "$work/failed.log" &&
   [[ $(cat "$work/failed.tsv") == "previous output" && $leftovers == 0 ]]; then
  echo "mpi: a failing rank ends the job: exit 3, '$(grep -o 'missing.txt: cannot open file[^.]*' "$work/failed.log" | head -1)'"
else
  echo "mpi: a failing rank did not end the job as it should (exit $status; 124 means it hung;" \
       "$leftovers temporary files left):"
  cat "$work/failed.log"
  failed=1
fi

if [[ $scaling == 1 ]]; then
  data=${TMPDIR:-/tmp}/termalign-bench/data-20k
  if [[ ! -f $data/terms-en.txt ]]; then
    /usr/bin/python3 "$root/bench/generate_synthetic.py" --out "$data" --src-terms 20000 --tgt-terms 20000 \
      --words 30000 --dim 300 --seed 1 2>/dev/null
  fi
  run=(align -q --src-vectors "$data/en.vec" --tgt-vectors "$data/fr.vec" --seed "$data/seed-en-fr.txt"
       --src-terms "$data/terms-en.txt" --tgt-terms "$data/terms-fr.txt" --threads 1)
  # The default configuration, and the plain method of bench/run_benchmarks.sh (scoring dominates it).
  plain=(--normalization unit-center-unit --whiten false --src-reweight 0 --tgt-reweight 0 --dewhiten none
         --refine-iterations 0 --k 10 --top-m 10 --orthographic-weight 0 --orthographic-candidates 0 --reranker none)
  for method in default plain; do
    extra=()
    [[ $method == plain ]] && extra=("${plain[@]}")
    for np in 1 2; do
      start=$(date +%s.%N)
      mpirun -np "$np" --bind-to core "$termalign" "${run[@]}" "${extra[@]}" --out "$work/scaling-$method-$np.tsv"
      seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
      echo "mpi scaling: 20k x 20k, $method configuration, 1 thread per rank, P = $np: $seconds s"
    done
    cmp -s "$work/scaling-$method-1.tsv" "$work/scaling-$method-2.tsv" &&
      echo "mpi scaling: $method: outputs identical" || { echo "mpi scaling: $method: outputs DIFFER"; failed=1; }
  done
fi
exit "$failed"
