// Seeds that are not given as a lexicon file.
#pragma once

#include "termalign/embeddings.h"
#include "termalign/lexicon.h"

namespace termalign {

// vecmap's --identical: every word of the source vocabulary also in the target vocabulary (written alike, byte for
// byte), paired with itself, in the source file's order (most frequent first). Only the loaded words count (with
// LoadOptions::restrict_words: the most frequent ones and the words of the terms). path: "identical".
PairList identical_seed(const Embeddings& source, const Embeddings& target);

}  // namespace termalign
