// Checks of each input against what it should look like and against the other inputs, so that a plausible mistake
// (swapped columns, swapped term lists, vectors of the wrong language) is named instead of giving a poor result.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "termalign/embeddings.h"
#include "termalign/lexicon.h"

namespace termalign {

// How many pairs fit two sets as written (source in the first, target in the second) and reversed.
struct Orientation {
  std::size_t pairs = 0, as_written = 0, reversed = 0;
  // Far better reversed: more than twice as many pairs, and enough of them not to be chance (5 % of the pairs).
  bool looks_reversed() const;
};

using Membership = std::function<bool(const std::string&)>;
Orientation count_orientation(const PairList& pairs, const Membership& in_source, const Membership& in_target);

// When `orientation` looks reversed: an input error naming the file and the cause, or with `allow_reversed` a
// warning. `against` says what the pairs were compared with ("the term lists a.txt and b.txt").
void check_orientation(const PairList& pairs, const Orientation& orientation, const std::string& against,
                       bool allow_reversed);

// A gold or prediction file against the term lists (source terms on the left).
void check_pairs_against_lists(const PairList& pairs, const TermList& source_terms, const TermList& target_terms,
                               bool allow_reversed);
// Gold pairs with a term outside the lists, which no submission can hold (the AP cannot reach 1): a warning with
// their count and an example, e.g. for lists that are not the gold's. Returns their count.
std::size_t warn_gold_outside_lists(const PairList& gold, const TermList& source_terms,
                                    const TermList& target_terms);
// Predictions against the gold: more hits reversed than as written.
void check_predictions_against_gold(const PairList& predictions, const PairList& gold, bool allow_reversed);
// A seed lexicon against the two vocabularies (a word as written or lower-cased).
void check_seed_against_vectors(const PairList& seed, const Embeddings& source, const Embeddings& target,
                                bool allow_reversed);

// Below this share of usable seed pairs, a warning names the likely causes.
constexpr double kLowSeedCoverage = 0.2;
void warn_if_low_seed_coverage(const std::string& seed_path, std::size_t usable, std::size_t pairs,
                               const std::string& source_vectors, const std::string& target_vectors);

// Below this share of a list's terms found in its corpus, a warning names the likely cause (a BUCC corpus holds
// every term of its list).
constexpr double kLowCorpusCoverage = 0.5;
// Warns when under kLowCorpusCoverage of each list's terms occur in its corpus (`found` terms of the list):
// corpora swapped (the lists occur more in each other's corpus is not computed: both shares low is the sign) or a
// corpus of other texts. Returns whether a list is below it.
bool check_terms_in_corpora(const TermList& source_terms, std::size_t source_found,
                            const std::string& source_corpus, const TermList& target_terms,
                            std::size_t target_found, const std::string& target_corpus);

}  // namespace termalign
