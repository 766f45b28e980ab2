// The Aligner's steps run by hand on its configured lists, and the check that they give align()'s list.
#pragma once

#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "termalign/aligner.h"
#include "termalign/lexicon.h"

namespace termalign_tests {

// The steps as aligner.h says, on config()'s lists: fit, then each run composed, scored and collected, a ranked
// round before each run after the first; then the ranking. `runs`, when given, receives how many runs were made.
inline std::vector<termalign::RankedPair> run_stages(termalign::Aligner& aligner, std::size_t* runs = nullptr) {
  using namespace termalign;
  const std::vector<std::string> sources = read_term_list(aligner.config().input.src_terms).terms;
  const std::vector<std::string> targets = read_term_list(aligner.config().input.tgt_terms).terms;
  aligner.fit_mapping();
  CandidateSet candidates;
  const std::size_t made = aligner.ranked_rounds() + 1;
  if (runs) *runs = made;
  for (std::size_t run = 0; run < made; ++run) {
    if (run > 0) aligner.fit_ranked_round(candidates);
    ComposedTerms X = aligner.compose(sources, Side::source);
    ComposedTerms Z = aligner.compose(targets, Side::target);
    CslsSelection scored = aligner.score(X.vectors, Z.vectors);
    candidates = aligner.collect_evidence(sources, targets, std::move(X), std::move(Z), std::move(scored));
  }
  std::vector<RankedPair> pairs;
  for (const RankedIndex& pair : aligner.rank(candidates))
    pairs.push_back({sources[pair.source], targets[pair.target], pair.score});
  return pairs;
}

// The steps' list is align()'s, pair for pair and score for score.
inline void require_same_list(const std::vector<termalign::RankedPair>& stages,
                              const std::vector<termalign::RankedPair>& aligned) {
  REQUIRE(stages.size() == aligned.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    INFO("pair " << i);
    REQUIRE(stages[i].source == aligned[i].source);
    REQUIRE(stages[i].target == aligned[i].target);
    REQUIRE(stages[i].score == aligned[i].score);
  }
}

}  // namespace termalign_tests
