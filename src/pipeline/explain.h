// Why each pair of the final list is ranked where it is: the parts of its score.
#pragma once

#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/types.h"

namespace termalign {

// The parts of the score of each ranked pair, best first.
struct Explanation {
  // The names of the values: score (the final score, the list's), then, after ranked rounds with the mean over
  // the runs, each run's own score (run_score:1 to run_score:N, the last run's last; score is their mean; a run
  // that lacked the pair counts the score RunHistory gives it), then csls, cosine, r_T, r_S (CSLS = 2 cosine - r_T
  // - r_S), orthographic (n-gram Dice of the Latin spellings) and orthographic_bonus (weight x orthographic, added
  // to CSLS without a re-ranker). With a re-ranker, then its bias (reranker_bias) and, for each feature of the
  // model, its value (feature:NAME) and its contribution to the last run's score (contribution:NAME: for trees
  // XGBoost's SHAP value, for the logistic regression weight x standardised value): the bias plus the
  // contributions is the last run's score (score itself without ranked rounds), to float rounding.
  std::vector<std::string> columns;
  std::vector<std::string> sources, targets;  // by pair (rank - 1)
  Matrix values;                              // pairs x columns; NaN: r_T or r_S of a term without a vector
};

// The explanation of `ranked` (the final list of `candidates`, as final_ranking gives it) under `config`.
Explanation explain_ranking(const CandidateSet& candidates, const std::vector<RankedIndex>& ranked,
                            const AlignConfig& config);

// TSV with a header (rank, source, target, then the columns), one line per pair, best first; each value the
// shortest text that reads back to it as a float, "nan" for none. What `termalign align --explain` writes.
std::string format_explanation(const Explanation& explanation);

}  // namespace termalign
