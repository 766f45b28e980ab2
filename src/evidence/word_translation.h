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

// A term list's words as the word-level evidence reads them: the distinct words of its terms (each term lower-cased,
// split into words, its first kMaxEvidenceWords), each term's words, and their mapped vectors. Made while the word
// vectors are loaded (the scheduler then frees them: at 300k-word vocabularies they are as large as the terms'
// words and the term vectors together), read after the scoring.
constexpr std::size_t kMaxEvidenceWords = 64;  // a line of thousands of words (a malformed list) costs nothing
struct TermWords {
  std::vector<std::string> words;         // by word id, in order of first use in the list
  std::vector<std::size_t> first;         // by term id: its words are word_ids[first[term], first[term + 1])
  std::vector<std::uint32_t> word_ids;    // each term's word ids, in order
  WordVectors vectors;                    // by word id: mapped_word_vectors(words, ...), set by the caller
  std::size_t terms() const { return first.empty() ? 0 : first.size() - 1; }
};

// The words of `terms`, without their vectors.
TermWords term_words(const std::vector<std::string>& terms);

// For each row of `from`, the indices of its `k` rows of `to` with the highest cosine, best first (fewer when `to`
// has fewer usable rows); empty for an unusable row. Blocked products on `threads` threads.
std::vector<std::vector<std::uint32_t>> nearest_rows(const WordVectors& from, const WordVectors& to, std::size_t k,
                                                     int threads);

// The seed lexicon lower-cased, source word -> its target words (or, `reverse`, target word -> source words).
std::unordered_map<std::string, std::vector<std::string>> seed_translations(const PairList& seed, bool reverse);

}  // namespace termalign
