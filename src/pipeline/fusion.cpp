// The mean over the runs (fusion.h).
#include "pipeline/fusion.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign::pipeline {

namespace {

std::uint64_t pair_key(const CandidateEvidence& evidence, std::size_t i) {
  return static_cast<std::uint64_t>(evidence.source[i]) << 32 | evidence.target[i];
}

}  // namespace

void RunHistory::add(const CandidateSet& candidates, const Eigen::VectorXd& scores) {
  const CandidateEvidence& evidence = candidates.evidence;
  Run run;
  run.by_pair.reserve(evidence.size());
  run.source_floor.assign(candidates.source_terms.size(), std::numeric_limits<float>::quiet_NaN());
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const float score = static_cast<float>(scores(static_cast<Eigen::Index>(i)));
    run.by_pair.emplace_back(pair_key(evidence, i), score);
    float& floor = run.source_floor[evidence.source[i]];
    if (std::isnan(floor) || score < floor) floor = score;
  }
  std::sort(run.by_pair.begin(), run.by_pair.end());
  if (scores.size() > 0) run.lowest = static_cast<float>(scores.minCoeff());
  runs_.push_back(std::move(run));
}

void RunHistory::attach(CandidateSet& candidates, int threads) const {
  const CandidateEvidence& evidence = candidates.evidence;
  candidates.earlier_scores.assign(runs_.size(), std::vector<float>(evidence.size()));
  constexpr std::size_t kBlock = 16384;
  parallel_for((evidence.size() + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(evidence.size(), (block + 1) * kBlock); ++i) {
      const std::uint64_t key = pair_key(evidence, i);
      for (std::size_t r = 0; r < runs_.size(); ++r) {
        const Run& run = runs_[r];
        const std::pair<std::uint64_t, float> first(key, std::numeric_limits<float>::lowest());
        const auto found = std::lower_bound(run.by_pair.begin(), run.by_pair.end(), first);
        float score = run.lowest;
        if (found != run.by_pair.end() && found->first == key) {
          score = found->second;
        } else if (const std::uint32_t source = evidence.source[i];
                   source < run.source_floor.size() && !std::isnan(run.source_floor[source])) {
          score = run.source_floor[source];
        }
        candidates.earlier_scores[r][i] = score;
      }
    }
  });
  logger().info("the list ranks each candidate by its mean score over the {} runs (seed_ranked_fusion)",
                runs_.size() + 1);
}

}  // namespace termalign::pipeline
