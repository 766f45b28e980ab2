#!/usr/bin/env bash
# Times the word-forms stage of `align` (bench_forms: term_forms_of_pair beside Hunspell's stem() of every word)
#   a. on enru/train's term lists (964 x 2,892), when ../shared/data is there;
#   b. at BUCC test size (1,270 x 9,712 terms), en-ru: terms of 1 to 3 words in a row drawn (seeded) from
#      enru/train's corpora, so that the words are real forms of the language, inflected as it inflects them.
#
#   bench/forms_bench.sh [--build DIR] [--data DIR] [--work DIR]
# DIR of --build: a build configured with -DTERMALIGN_BUILD_BENCH=ON (bench_forms is built there when missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-bench data=$root/../shared/data work=${TMPDIR:-/tmp}/termalign-forms-bench
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
train=$data/enru/train
if [[ ! -f $train/terms-en.txt ]]; then
  echo "forms_bench.sh: skipped: $train has no term lists (the bench needs ../shared/data)"
  exit 0
fi
[[ -x $build/bench_forms ]] || cmake --build "$build" --target bench_forms
mkdir -p "$work"
/usr/bin/python3 - "$train" "$work" <<'PY'
import random, re, sys
train, work = sys.argv[1], sys.argv[2]
rng = random.Random(60)
word = re.compile(r"^[^\W\d_]+$")
def draw(corpus, count):
    sentences = []
    with open(corpus, encoding="utf-8") as lines:
        for index, line in enumerate(lines):
            if index >= 200000:
                break
            words = [w.lower() for w in line.split() if word.match(w)]
            if words:
                sentences.append(words)
    terms = set()
    while len(terms) < count:
        words = rng.choice(sentences)
        length = min(len(words), rng.choice((1, 1, 2, 2, 3)))
        start = rng.randrange(len(words) - length + 1)
        terms.add(" ".join(words[start:start + length]))
    return sorted(terms)
for language, count in (("en", 1270), ("ru", 9712)):
    with open(f"{work}/terms-{language}.txt", "w", encoding="utf-8") as out:
        out.write("\n".join(draw(f"{train}/corpus-{language}.txt", count)) + "\n")
PY
echo "enru/train:"
"$build/bench_forms" "$train/terms-en.txt" en "$train/terms-ru.txt" ru --repeats 5
echo "BUCC test size, en-ru terms from the corpora:"
"$build/bench_forms" "$work/terms-en.txt" en "$work/terms-ru.txt" ru --repeats 5
