#!/usr/bin/env bash
# The main job on the bundled sample: installs what is missing, builds, aligns data/sample with the default
# configuration, scores the submission against the sample's gold and prints its Average Precision. It installs and
# builds only what the CLI needs (scripts/bootstrap.sh --cli); the test command (scripts/test.sh) adds the rest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERMALIGN_BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh" --cli "$build"
out="$build/sample"
mkdir -p "$out"
"$build/termalign" align --config "$root/configs/sample.toml" --out "$out/submission.tsv" --scores "$out/scores.tsv"
"$build/termalign" evaluate --gold "$root/data/sample/terms-en-fr.txt" --pred "$out/submission.tsv" \
  --src-terms "$root/data/sample/terms-en.txt" --tgt-terms "$root/data/sample/terms-fr.txt" \
  --breakdown --curve "$out/curve.tsv"
echo "submission: $out/submission.tsv ($(wc -l <"$out/submission.tsv") pairs); resolved configuration:" \
  "$out/submission.tsv.config.toml"
