// Word-level translations for the candidate evidence: the seed lexicon's, plus nearest neighbours in the mapped
// space. Shared by the compositional evidence (compositional.h) and the corpus context vectors
// (corpus_evidence.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "mapping/composition.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"

namespace termalign {

// Mapped unit vectors of words; a word with no usable vector gets a zero row (its cosines are all 0).
struct WordVectors {
  Matrix vectors;  // words x d'
  std::vector<std::uint8_t> usable;
};

// Each word composed as a one-word term by `composer` (lower-case fallback, compound pieces, sub-words as the
// configuration says), times `transform`, renormalised; on `threads` threads.
WordVectors mapped_word_vectors(const std::vector<std::string>& words, const TermComposer& composer,
                                const Matrix& transform, int threads);

// For each row of `from`, the indices of its `k` rows of `to` with the highest cosine, best first (fewer when `to`
// has fewer usable rows); empty for an unusable row. Blocked products on `threads` threads.
std::vector<std::vector<std::uint32_t>> nearest_rows(const WordVectors& from, const WordVectors& to, std::size_t k,
                                                     int threads);

// The seed lexicon lower-cased, source word -> its target words (or, `reverse`, target word -> source words).
std::unordered_map<std::string, std::vector<std::string>> seed_translations(const PairList& seed, bool reverse);

}  // namespace termalign
