// Why each pair of the final list is ranked where it is: the parts of its score.
#pragma once

#include <string>
#include <vector>

#include "termalign/align.h"
#include "termalign/config.h"
#include "termalign/ranking.h"

namespace termalign {

// TSV with a header, one line per ranked pair, best first: rank, source, target, score (the final score), csls,
// cosine, r_T, r_S (CSLS = 2 cosine - r_T - r_S), orthographic (n-gram Dice of the Latin spellings) and
// orthographic_bonus (weight x orthographic, added to CSLS without a re-ranker). With a re-ranker, then its bias
// and, for each feature, its value (feature:NAME) and its contribution to the logit (contribution:NAME, weight x
// standardised value): the bias plus the contributions is the score.
std::string format_explanation(const CandidateSet& candidates, const std::vector<RankedIndex>& ranked,
                               const AlignConfig& config);

}  // namespace termalign
