#!/usr/bin/env bash
# Trains the bundled re-ranker models on ../shared/data/enfr/train (the shipped recipe: `train-reranker` with its
# default options: the learner chosen by 2-fold cross-validated AP over source terms, in two stages) and writes the
# cross-validated figures, with each feature group left out in turn:
#   models/reranker-enfr.txt         without corpora (the fallback of runs without --src-corpus/--tgt-corpus)
#   models/reranker-enfr-corpus.txt  with the corpora's evidence
#   models/reranker-enfr-seedless.txt, models/reranker-enfr-corpus-seedless.txt
#                                    the same trained with a seed induced from the vectors (--seed auto): the
#                                    models of runs without a seed lexicon
#   models/reranker-enfr-dict.txt, models/reranker-enfr-corpus-dict.txt
#                                    the same with a bilingual dictionary (--dictionary): FreeDict English-French
#                                    both ways (Debian's dict-freedict-eng-fra and -fra-eng) and every other pair of
#                                    the seed lexicon posing as a dictionary, so that its coverage of the terms'
#                                    words is nearer a large dictionary's (FreeDict en-fr has 8.8k headwords, en-de
#                                    460k): the models of runs with a dictionary
#   docs/reranker-training.md        the six reports (Markdown tables), as train-reranker --report writes them
# Usage: scripts/train_models.sh [build-dir] [data-dir] [--seedless-only | --dictionary-only]. The library embeds
# the models: rebuild after a run. --seedless-only (--dictionary-only) trains the seedless (dictionary) variants
# alone and prints their reports.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
data=${2:-$root/../shared/data}
train=$data/enfr/train
only=${3:-}
inputs=(--src-vectors "$data/vectors/en.bin" --tgt-vectors "$data/vectors/fr.bin" --src-terms "$train/terms-en.txt"
        --tgt-terms "$train/terms-fr.txt" --gold "$train/terms-en-fr.txt" --ablation true)
common=("${inputs[@]}" --seed "$train/seed-en-fr.txt")
corpora=(--src-corpus "$train/corpus-en.txt" --tgt-corpus "$train/corpus-fr.txt")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The models of the task's condition first (no seed lexicon, then the corpora's before the plain one's), each
# copied into models/ as soon as it is trained.
if [[ $only != --dictionary-only ]]; then
  "$build/termalign" train-reranker "${inputs[@]}" --seed auto "${corpora[@]}" --out "$scratch/corpus-seedless.txt" \
    --report "$scratch/corpus-seedless.md" >&2
  cp "$scratch/corpus-seedless.txt" "$root/models/reranker-enfr-corpus-seedless.txt"
  "$build/termalign" train-reranker "${inputs[@]}" --seed auto --out "$scratch/plain-seedless.txt" \
    --report "$scratch/plain-seedless.md" >&2
  cp "$scratch/plain-seedless.txt" "$root/models/reranker-enfr-seedless.txt"
  if [[ $only == --seedless-only ]]; then
    cat "$scratch/plain-seedless.md" "$scratch/corpus-seedless.md"
    exit 0
  fi
  "$build/termalign" train-reranker "${common[@]}" "${corpora[@]}" --out "$scratch/corpus.txt" \
    --report "$scratch/corpus.md" >&2
  cp "$scratch/corpus.txt" "$root/models/reranker-enfr-corpus.txt"
  "$build/termalign" train-reranker "${common[@]}" --out "$scratch/plain.txt" --report "$scratch/plain.md" >&2
  cp "$scratch/plain.txt" "$root/models/reranker-enfr.txt"
fi
# The dictionary variants.
dictd=${TERMALIGN_DICTD_DIR:-/usr/share/dictd}
for database in freedict-eng-fra freedict-fra-eng; do
  [[ -f $dictd/$database.index ]] || { echo "train_models.sh: $dictd/$database.index is missing: apt-get install dict-$database" >&2; exit 3; }
done
awk 'NR % 2 == 0' "$train/seed-en-fr.txt" >"$scratch/seed-half.txt"
dictionary=(--dictionary "$dictd/freedict-eng-fra" --dictionary "$dictd/freedict-fra-eng"
            --dictionary "$scratch/seed-half.txt")
"$build/termalign" train-reranker "${common[@]}" "${corpora[@]}" "${dictionary[@]}" --out "$scratch/corpus-dict.txt" \
  --report "$scratch/corpus-dict.md" >&2
cp "$scratch/corpus-dict.txt" "$root/models/reranker-enfr-corpus-dict.txt"
"$build/termalign" train-reranker "${common[@]}" "${dictionary[@]}" --out "$scratch/plain-dict.txt" \
  --report "$scratch/plain-dict.md" >&2
cp "$scratch/plain-dict.txt" "$root/models/reranker-enfr-dict.txt"
if [[ $only == --dictionary-only ]]; then
  cat "$scratch/plain-dict.md" "$scratch/corpus-dict.md"
  exit 0
fi
{
  echo "# The bundled re-ranker models: cross-validated figures"
  echo
  echo "Written by \`scripts/train_models.sh\` on enfr/train (en.bin, fr.bin; 2 folds over source terms, fold seed 1)."
  echo "Each figure is the AP of all candidates ranked together, each source term scored by a model trained on"
  echo "the other fold. The learners' rows are one stage with every feature. The shipped model is the chosen"
  echo "learner in two stages (the second reads the first's cross-validated scores; docs/accuracy.md); the ablation"
  echo "rows leave one group out of both stages. Each model file's first lines (\`# ...\`) record how it was made:"
  echo "the feature revision, the recipe, the inputs' fingerprints and the options."
  echo
  echo "## Without corpora (models/reranker-enfr.txt)"
  echo
  cat "$scratch/plain.md"
  echo
  echo "## With the corpora (models/reranker-enfr-corpus.txt)"
  echo
  cat "$scratch/corpus.md"
  echo
  echo "## Without a seed lexicon (models/reranker-enfr-seedless.txt, models/reranker-enfr-corpus-seedless.txt)"
  echo
  echo "Trained as above with \`--seed auto\` instead of the seed lexicon (and so the normalisation \`auto\`"
  echo "resolves to unit-center-unit): the models of runs without one."
  echo
  echo "### Without corpora"
  echo
  cat "$scratch/plain-seedless.md"
  echo
  echo "### With the corpora"
  echo
  cat "$scratch/corpus-seedless.md"
  echo
  echo "## With a bilingual dictionary (models/reranker-enfr-dict.txt, models/reranker-enfr-corpus-dict.txt)"
  echo
  echo "Trained as the first two with \`--dictionary\` of FreeDict English-French both ways and every other pair of"
  echo "the seed lexicon posing as a dictionary: the models of runs with a dictionary."
  echo
  echo "### Without corpora"
  echo
  cat "$scratch/plain-dict.md"
  echo
  echo "### With the corpora"
  echo
  cat "$scratch/corpus-dict.md"
} >"$scratch/report.md"
cp "$scratch/report.md" "$root/docs/reranker-training.md"
cat "$root/docs/reranker-training.md"
