#!/usr/bin/env bash
# Trains the bundled re-ranker models on ../shared/data/enfr/train (the shipped recipe: `train-reranker` with its
# default options: the learner chosen by 2-fold cross-validated AP over source terms, in two stages) and writes the
# cross-validated figures, with each feature group left out in turn:
#   models/reranker-enfr.txt         without corpora (the fallback of runs without --src-corpus/--tgt-corpus)
#   models/reranker-enfr-corpus.txt  with the corpora's evidence
#   models/reranker-enfr-seedless.txt, models/reranker-enfr-corpus-seedless.txt
#                                    the same trained with a seed induced from the vectors (--seed auto): the
#                                    models of runs without a seed lexicon
#   docs/reranker-training.md        the four reports (Markdown tables), as train-reranker --report writes them
# Usage: scripts/train_models.sh [build-dir] [data-dir] [--seedless-only]. The library embeds the models: rebuild
# after a run. --seedless-only trains the seedless variants alone and prints their reports.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
data=${2:-$root/../shared/data}
train=$data/enfr/train
seedless_only=${3:-}
inputs=(--src-vectors "$data/vectors/en.bin" --tgt-vectors "$data/vectors/fr.bin" --src-terms "$train/terms-en.txt"
        --tgt-terms "$train/terms-fr.txt" --gold "$train/terms-en-fr.txt" --ablation true)
common=("${inputs[@]}" --seed "$train/seed-en-fr.txt")
corpora=(--src-corpus "$train/corpus-en.txt" --tgt-corpus "$train/corpus-fr.txt")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$build/termalign" train-reranker "${inputs[@]}" --seed auto --out "$scratch/plain-seedless.txt" \
  --report "$scratch/plain-seedless.md" >&2
"$build/termalign" train-reranker "${inputs[@]}" --seed auto "${corpora[@]}" --out "$scratch/corpus-seedless.txt" \
  --report "$scratch/corpus-seedless.md" >&2
cp "$scratch/plain-seedless.txt" "$root/models/reranker-enfr-seedless.txt"
cp "$scratch/corpus-seedless.txt" "$root/models/reranker-enfr-corpus-seedless.txt"
if [[ $seedless_only == --seedless-only ]]; then
  cat "$scratch/plain-seedless.md" "$scratch/corpus-seedless.md"
  exit 0
fi
"$build/termalign" train-reranker "${common[@]}" --out "$scratch/plain.txt" --report "$scratch/plain.md" >&2
"$build/termalign" train-reranker "${common[@]}" "${corpora[@]}" --out "$scratch/corpus.txt" \
  --report "$scratch/corpus.md" >&2
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
  echo "Trained as above with \`--seed auto\` instead of the seed lexicon: the models of runs without one."
  echo
  echo "### Without corpora"
  echo
  cat "$scratch/plain-seedless.md"
  echo
  echo "### With the corpora"
  echo
  cat "$scratch/corpus-seedless.md"
} >"$scratch/report.md"
cp "$scratch/plain.txt" "$root/models/reranker-enfr.txt"
cp "$scratch/corpus.txt" "$root/models/reranker-enfr-corpus.txt"
cp "$scratch/report.md" "$root/docs/reranker-training.md"
cat "$root/docs/reranker-training.md"
