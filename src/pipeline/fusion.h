// The mean over the runs of an align() (seed_ranked_fusion): the runs before the last keep their own scores, and
// the last run's candidates get each earlier run's score of them.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "termalign/types.h"

namespace termalign::pipeline {

class RunHistory {
 public:
  // Keeps `candidates`' own scores (run_scores, by candidate) as the next earlier run's.
  void add(const CandidateSet& candidates, const Eigen::VectorXd& scores);
  // Each earlier run's score of each of `candidates` (CandidateSet::earlier_scores, in the runs' order): its own,
  // or, for a candidate the run lacked, the lowest score that run gave a candidate of the same source term (the
  // run ranked the pair below all of them: it was not among the source term's candidates); the run's lowest
  // score when the source term had none.
  void attach(CandidateSet& candidates, int threads) const;
  std::size_t size() const { return runs_.size(); }
  void clear() { runs_.clear(); }

 private:
  struct Run {
    std::vector<std::pair<std::uint64_t, float>> by_pair;  // sorted by pair: source id in the high half
    std::vector<float> source_floor;                       // by source id: its lowest score; NaN: no candidate
    float lowest = 0;
  };
  std::vector<Run> runs_;
};

}  // namespace termalign::pipeline
