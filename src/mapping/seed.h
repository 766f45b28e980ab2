// Seeds that are not given as a lexicon file.
#pragma once

#include "termalign/embeddings.h"
#include "termalign/lexicon.h"

namespace termalign {

// vecmap's --identical: every word of the source vocabulary also in the target vocabulary (written alike, byte for
// byte), paired with itself, in the source file's order (most frequent first). Only the loaded words count (with
// LoadOptions::restrict_words: the most frequent ones and the words of the terms). path: "identical".
PairList identical_seed(const Embeddings& source, const Embeddings& target);

// The identical seed plus the words spelt alike across scripts: each other source word paired with the first
// (most frequent) target word of the same Latin spelling (latin_spelling: `файл` and `fajl`, `équation` and
// `equation`), then, among the words still unpaired whose Latin spellings have at least 4 letters, each pair of
// words that are each other's closest spelling with a character n-gram Dice of at least `min_similarity`
// (`сервер` / `server`, `fonction` / `function`). In the source file's order; path: "transliterated".
PairList transliterated_seed(const Embeddings& source, const Embeddings& target, double min_similarity,
                             int threads = 0);

}  // namespace termalign
