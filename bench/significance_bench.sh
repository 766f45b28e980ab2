#!/usr/bin/env bash
# Times `termalign evaluate` comparing two runs (paired bootstrap + randomisation test, 10,000 resamples each) at
# BUCC test size: 20k source terms, a gold of 16k pairs, two ranked lists of 100k pairs (5 per source term), and
# beside it the NumPy reference (bench/reference/significance_reference.py, vectorised over batches of resamples)
# on the same files with R_REF resamples, its time also scaled to R.
#
#   bench/significance_bench.sh [--build DIR] [--work DIR] [--resamples R] [--threads T] [--reference-resamples R_REF]
#                               (R_REF = 0: no reference)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build work=$root/build/significance-bench resamples=10000 threads=2 reference_resamples=500
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --resamples) resamples=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --reference-resamples) reference_resamples=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
/usr/bin/python3 - "$work" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(1)
n_terms, per_term = 20000, 5
in_gold = rng.random(n_terms) < 0.8
with open(f"{out}/gold.tsv", "w") as gold:
    for s in np.flatnonzero(in_gold):
        gold.write(f"s{s}\tt{s}_0\n")
for name, skill in (("run1", 1.0), ("run2", 1.1)):
    score = rng.normal(size=(n_terms, per_term))
    score[:, 0] += skill
    order = np.argsort(-score, axis=None)
    with open(f"{out}/{name}.tsv", "w") as run:
        run.writelines(f"s{i // per_term}\tt{i // per_term}_{i % per_term}\n" for i in order)
PY
export OMP_NUM_THREADS=$threads
/usr/bin/time -f "wall %e s, CPU %U s user + %S s system, peak RSS %M kB" "$build/termalign" -q evaluate --gold "$work/gold.tsv" \
  --pred "$work/run1.tsv" --pred "$work/run2.tsv" --resamples "$resamples" --format tsv
if [[ $reference_resamples -gt 0 ]]; then
  echo "NumPy reference, $reference_resamples resamples:"
  reference=$(/usr/bin/python3 "$root/bench/reference/significance_reference.py" "$work/gold.tsv" "$work/run1.tsv" \
    "$work/run2.tsv" --resamples "$reference_resamples")
  echo "$reference"
  /usr/bin/python3 - "$reference" "$reference_resamples" "$resamples" <<'PY'
import re
import sys
text, measured, wanted = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
read, boot, rand = (float(x) for x in re.search(r"read ([\d.]+), bootstrap ([\d.]+), randomisation ([\d.]+)",
                                                 text).groups())
print(f"NumPy reference scaled to {wanted} resamples: {read + (boot + rand) * wanted / measured:.1f} s")
PY
fi
