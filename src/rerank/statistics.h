// The run-wide statistics the re-ranker's features are computed from: where a candidate's value stands among its
// source's or its target's candidates, a value's quantile among the run's candidates, nested terms' support.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "termalign/types.h"

namespace termalign::detail {

// Similarities differ in scale from one vector space to another: a cosine that is high in one is ordinary in
// another, and a model that split on raw values would not carry over. Each similarity therefore enters as its
// quantile among the run's candidates, and each margin in units of the similarity's spread among them.
struct RunScale {
  std::vector<float> quantile;  // (rank - 1) / (n - 1) by ascending value, ties sharing their mean rank; in [0, 1]
  float spread = 1;             // the interquartile range (1 when it is 0)
};
RunScale run_scale(const std::vector<float>& values, int threads);

// Where each candidate's value stands within its group (the candidates of one source term, or of one target term):
// its 1-based rank (descending; ties by candidate order) and its margins, in units of the run scale's spread when
// one is given. The values, the groups and the scale must outlive it.
struct Standing {
  const std::vector<float>* values = nullptr;         // by candidate
  const std::vector<std::uint32_t>* group = nullptr;  // by candidate: its group's id
  const RunScale* scale = nullptr;                    // null: margins as they are
  std::vector<float> rank;                            // by candidate
  std::vector<float> best, second;                    // by group id; the second is the best in a group of one

  float inverse_rank(std::size_t i) const { return 1.0f / rank[i]; }
  float below_best(std::size_t i) const { return ((*values)[i] - best[(*group)[i]]) / spread(); }
  // Over the best other candidate: the runner-up for the best, the best for the others (0 for one alone).
  float above_other(std::size_t i) const {
    const std::uint32_t g = (*group)[i];
    return ((*values)[i] - (rank[i] == 1 ? second[g] : best[g])) / spread();
  }
  float spread() const { return scale ? scale->spread : 1.0f; }
};
Standing standing(const std::vector<std::uint32_t>& group, const std::vector<float>& values,
                  const RunScale* scale = nullptr, int threads = 1);

// The z-score of each candidate's value among its group's values (0 in a group of one or of equal values).
std::vector<float> group_z(const std::vector<std::uint32_t>& group, const std::vector<float>& values);

// Nested terms' support of each candidate, from the first stage's scores: `parts` the best score among the
// candidates that pair a part of its source term with a part of its target term, `wholes` the best among those
// that pair terms holding them; kNoNestedPair where there is none.
constexpr float kNoNestedPair = -20.0f;
struct NestedSupport {
  std::vector<float> parts, wholes;
};
NestedSupport nested_support(const CandidateEvidence& evidence, const std::vector<float>& scores);

}  // namespace termalign::detail
