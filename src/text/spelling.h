// Spelling: terms in Latin letters across scripts, their character n-gram profiles and the closest spellings
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace termalign {

// Lower-cased Latin spelling of a term: other scripts (Cyrillic, Greek, ...) transliterated to Latin and
// diacritics removed (ICU's "Any-Latin; Latin-ASCII" rules), so that "функция" and "function", or "équation"
// and "equation", can be compared letter by letter. With `transliterate` false: only lower-cased.
std::string latin_spelling(const std::string& term, bool transliterate = true);

// The character bigrams and trigrams of a spelling (with boundary marks), hashed and sorted: a term's profile.
// The lowest bit of a hash tells trigrams (1) from bigrams (0), so the two never share a value.
using NgramProfile = std::vector<std::uint32_t>;
NgramProfile ngram_profile(const std::string& spelling);

// Dice coefficient of two profiles, in [0, 1]: 1 for the same spelling, 0 for nothing in common.
double ngram_similarity(const NgramProfile& a, const NgramProfile& b);

// ngram_similarity of the two terms' Latin spellings.
double orthographic_similarity(const std::string& a, const std::string& b, bool transliterate = true);

// Profiles of a whole list (parallel).
std::vector<NgramProfile> ngram_profiles(const std::vector<std::string>& terms, bool transliterate,
                                         int threads = 0);

struct OrthographicMatch {
  std::uint32_t source = 0, target = 0;
  float similarity = 0;
};

// The work bound of orthographic_neighbours: postings counted per source term.
constexpr std::size_t kOrthographicBudget = 2048;

// For each source profile, the m target profiles of highest similarity (at least `minimum`); ties are broken by
// target index. A top-m search over an inverted index of the targets' n-grams: the rarest n-grams first, only
// targets whose profile size can still reach the m-th best similarity found, and a stop when no unread target can
// reach it, so the result equals the brute-force top-m. The work per source term is bounded: at most `budget`
// postings are read, and a source term that reaches the bound keeps the best targets among those read (logged).
// Parallel over the source terms, with a progress line. Result ordered by source, then similarity descending.
std::vector<OrthographicMatch> orthographic_neighbours(const std::vector<NgramProfile>& sources,
                                                       const std::vector<NgramProfile>& targets, std::size_t m,
                                                       double minimum = 0.3, int threads = 0,
                                                       std::size_t budget = kOrthographicBudget);

}  // namespace termalign
