// Seeds read off the term lists. The task's two lists hold translations of each other, so the term pairs a first
// mapping is surest of give word pairs of the domain's own vocabulary, in both scripts (`курсор` / `cursor`,
// `ячейка` / `cell`), which no seed of words spelt alike holds.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mapping/composition.h"
#include "termalign/lexicon.h"
#include "termalign/types.h"

namespace termalign {

// The mutual CSLS nearest neighbours (neighbourhood k) between the mapped term vectors X: n1 x d and Z: n2 x d
// (unit rows), best first (CSLS descending, then source row, then target row); the first `limit` (0: all).
std::vector<Candidate> confident_term_pairs(const Matrix& X, const Matrix& Z, int k, std::size_t limit,
                                            int threads = 0);

// A term list and how its words are looked up: `words` composes one word (the known words only, as a seed's
// entries are looked up), `transform` maps the composed row into the shared space.
struct TermSide {
  const std::vector<std::string>& terms;
  const std::vector<std::uint32_t>& term_ids;  // composed row -> index in `terms`
  const TermComposer& words;
  const Matrix& transform;
};

// The word pairs of `pairs` (rows of the two composed lists): a pair of one-word terms gives its two words; a pair
// with a longer term gives each source word with the target word of the pair closest to it in the shared space
// when each is the other's closest within the pair (`3d objects` / `трехмерные объекты`: `objects` / `объекты`).
// Words are the terms' white-space separated tokens that `words` knows; distinct pairs in the order of `pairs`.
// path: `path`.
PairList term_word_pairs(const std::vector<Candidate>& pairs, const TermSide& source, const TermSide& target,
                         const std::string& path);

}  // namespace termalign
