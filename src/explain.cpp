#include "termalign/explain.h"

#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <iterator>
#include <unordered_map>

#include "termalign/error.h"
#include "termalign/orthography.h"
#include "termalign/reranker.h"

namespace termalign {

namespace {

std::uint64_t pair_key(std::uint32_t source, std::uint32_t target) {
  return (static_cast<std::uint64_t>(source) << 32) | target;
}

// A value of the table: the shortest text that reads back to it (as a float when it is one); "nan" for a term
// without a vector.
template <class Value>
std::string number(Value value) {
  return std::isnan(value) ? std::string("nan") : fmt::format("{}", value);
}

}  // namespace

std::string format_explanation(const CandidateSet& candidates, const std::vector<RankedIndex>& ranked,
                               const AlignConfig& config) {
  const CandidateEvidence& evidence = candidates.evidence;
  std::unordered_map<std::uint64_t, std::size_t> place;
  place.reserve(evidence.size());
  for (std::size_t i = 0; i < evidence.size(); ++i)
    place.emplace(pair_key(evidence.source[i], evidence.target[i]), i);

  const bool reranked = uses_reranker(config);
  Reranker model;
  Matrix features, contributions;
  if (reranked) {
    const int threads = config.scoring.threads;
    const FeatureTable table = candidate_feature_table(evidence, threads);
    model = configured_reranker(config.input.reranker, table);
    const std::string origin = reranker_origin(config.input.reranker, table);
    // A two-stage model: its second stage's inputs (with the first stage's columns) and contributions.
    features = with_stage_features(model, evidence, table, origin, threads).select(model.features, origin);
    contributions = model.contributions(features, threads);
  }
  fmt::memory_buffer out;
  const auto put = [&out](const auto&... parts) { fmt::format_to(std::back_inserter(out), parts...); };
  put("rank\tsource\ttarget\tscore\tcsls\tcosine\tr_T\tr_S\torthographic\torthographic_bonus");
  if (reranked) {
    put("\treranker_bias");
    for (const std::string& name : model.features) put("\tfeature:{}\tcontribution:{}", name, name);
  }
  put("\n");
  for (std::size_t r = 0; r < ranked.size(); ++r) {
    const RankedIndex& pair = ranked[r];
    const auto found = place.find(pair_key(pair.source, pair.target));
    TERMALIGN_CHECK(found != place.end(), "a ranked pair is one of the candidates");
    const std::size_t i = found->second;
    const std::string& source = candidates.source_terms.terms[pair.source];
    const std::string& target = candidates.target_terms.terms[pair.target];
    const float orthographic =
        evidence.orthographic.empty()
            ? static_cast<float>(orthographic_similarity(source, target, config.orthography.transliterate))
            : evidence.orthographic[i];
    const float r_t = candidates.source_means.empty() ? NAN : candidates.source_means[pair.source];
    const float r_s = candidates.target_means.empty() ? NAN : candidates.target_means[pair.target];
    put("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", r + 1, source, target, number(pair.score),
        number(evidence.csls[i]), number(evidence.cosine[i]), number(r_t), number(r_s), number(orthographic),
        number(reranked ? 0.0
                        : config.orthography.weight * (config.orthography.weight > 0 ? orthographic : 0.0f)));
    if (reranked) {
      const auto row = static_cast<Eigen::Index>(i);
      put("\t{}", number(contributions(row, features.cols())));
      for (Eigen::Index j = 0; j < features.cols(); ++j) {
        put("\t{}\t{}", number(features(row, j)), number(contributions(row, j)));
      }
    }
    put("\n");
  }
  return fmt::to_string(out);
}

}  // namespace termalign
