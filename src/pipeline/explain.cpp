#include "pipeline/explain.h"

#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <iterator>
#include <unordered_map>

#include "pipeline/stages.h"
#include "rerank/reranker.h"
#include "termalign/error.h"
#include "text/spelling.h"

namespace termalign {

namespace {

std::uint64_t pair_key(std::uint32_t source, std::uint32_t target) {
  return (static_cast<std::uint64_t>(source) << 32) | target;
}

}  // namespace

Explanation explain_ranking(const CandidateSet& candidates, const std::vector<RankedIndex>& ranked,
                            const AlignConfig& config) {
  const CandidateEvidence& evidence = candidates.evidence;
  std::unordered_map<std::uint64_t, std::size_t> place;
  place.reserve(evidence.size());
  for (std::size_t i = 0; i < evidence.size(); ++i)
    place.emplace(pair_key(evidence.source[i], evidence.target[i]), i);

  // Each ranked pair's candidate.
  std::vector<std::size_t> candidate(ranked.size());
  for (std::size_t r = 0; r < ranked.size(); ++r) {
    const auto found = place.find(pair_key(ranked[r].source, ranked[r].target));
    TERMALIGN_CHECK(found != place.end(), "a ranked pair is one of the candidates");
    candidate[r] = found->second;
  }
  const bool reranked = uses_reranker(config);
  Reranker model;
  Matrix features, contributions;  // of the ranked pairs, in their order
  // What the agreement order (forms.agreement_order) added to each candidate's model score, by candidate.
  Eigen::VectorXd order_shift;
  const bool ordered =
      reranked && config.forms.agreement_order && !evidence.source_forms.empty() && !evidence.target_forms.empty();
  if (ordered) {
    const Eigen::VectorXd model_scores = rerank(evidence, config, candidates.decisions.seedless_models);
    order_shift = pipeline::agreement_order(evidence, model_scores) - model_scores;
  }
  if (reranked) {
    const int threads = config.scoring.threads;
    const FeatureTable table = candidate_feature_table(evidence, threads);
    const bool seedless = candidates.decisions.seedless_models;
    model = configured_reranker(config.input.reranker, table, seedless);
    const std::string origin = reranker_origin(config.input.reranker, table, seedless);
    // A two-stage model: its second stage's inputs (with the first stage's columns, from every candidate).
    const Matrix all = with_stage_features(model, evidence, table, origin, threads).select(model.features, origin);
    features.resize(static_cast<Eigen::Index>(ranked.size()), all.cols());
    for (std::size_t r = 0; r < ranked.size(); ++r)
      features.row(static_cast<Eigen::Index>(r)) = all.row(static_cast<Eigen::Index>(candidate[r]));
    contributions = model.contributions(features, threads);
  }
  Explanation explanation;
  explanation.columns = {"score"};
  const std::size_t runs = candidates.earlier_scores.empty() ? 0 : candidates.earlier_scores.size() + 1;
  TERMALIGN_CHECK(runs == 0 || reranked, "the runs' mean is of re-ranked runs");
  for (std::size_t run = 1; run <= runs; ++run) explanation.columns.push_back("run_score:" + std::to_string(run));
  for (const char* column : {"csls", "cosine", "r_T", "r_S", "orthographic", "orthographic_bonus"})
    explanation.columns.emplace_back(column);
  const Eigen::Index run_columns = static_cast<Eigen::Index>(runs);
  const Eigen::Index base_columns = static_cast<Eigen::Index>(explanation.columns.size());
  if (reranked) {
    explanation.columns.push_back("reranker_bias");
    for (const std::string& name : model.features) {
      explanation.columns.push_back("feature:" + name);
      explanation.columns.push_back("contribution:" + name);
    }
    // Last, so that the features' columns keep their places: the run's own score is the bias, the contributions
    // and this.
    explanation.columns.push_back("form_order_shift");
  }
  const Eigen::Index pairs = static_cast<Eigen::Index>(ranked.size());
  explanation.values.resize(pairs, static_cast<Eigen::Index>(explanation.columns.size()));
  explanation.sources.reserve(ranked.size());
  explanation.targets.reserve(ranked.size());
  for (Eigen::Index r = 0; r < pairs; ++r) {
    const RankedIndex& pair = ranked[static_cast<std::size_t>(r)];
    const std::size_t i = candidate[static_cast<std::size_t>(r)];
    const std::string& source = candidates.source_terms.terms[pair.source];
    const std::string& target = candidates.target_terms.terms[pair.target];
    explanation.sources.push_back(source);
    explanation.targets.push_back(target);
    const float orthographic =
        evidence.orthographic.empty()
            ? static_cast<float>(orthographic_similarity(source, target, config.orthography.transliterate))
            : evidence.orthographic[i];
    const double weight = config.orthography.weight;
    auto row = explanation.values.row(r);
    row(0) = pair.score;
    if (runs > 0) {
      double own = contributions(r, features.cols());  // the bias, the contributions, the agreement order
      for (Eigen::Index j = 0; j < features.cols(); ++j) own += contributions(r, j);
      if (ordered) own += order_shift(static_cast<Eigen::Index>(i));
      for (std::size_t run = 0; run + 1 < runs; ++run)
        row(1 + static_cast<Eigen::Index>(run)) = candidates.earlier_scores[run][i];
      row(run_columns) = static_cast<float>(own);
    }
    row.segment(1 + run_columns, base_columns - 1 - run_columns) << evidence.csls[i], evidence.cosine[i],
        candidates.source_means.empty() ? NAN : candidates.source_means[pair.source],
        candidates.target_means.empty() ? NAN : candidates.target_means[pair.target], orthographic,
        reranked || weight <= 0 ? 0.0f : static_cast<float>(weight * orthographic);
    if (reranked) {
      row(base_columns) = contributions(r, features.cols());
      for (Eigen::Index j = 0; j < features.cols(); ++j) {
        row(base_columns + 1 + 2 * j) = features(r, j);
        row(base_columns + 2 + 2 * j) = contributions(r, j);
      }
      row(base_columns + 1 + 2 * features.cols()) =
          ordered ? static_cast<float>(order_shift(static_cast<Eigen::Index>(i))) : 0.0f;
    }
  }
  return explanation;
}

std::string format_explanation(const Explanation& explanation) {
  fmt::memory_buffer out;
  const auto put = [&out](const auto&... parts) { fmt::format_to(std::back_inserter(out), parts...); };
  put("rank\tsource\ttarget");
  for (const std::string& column : explanation.columns) put("\t{}", column);
  put("\n");
  for (Eigen::Index r = 0; r < explanation.values.rows(); ++r) {
    const auto pair = static_cast<std::size_t>(r);
    put("{}\t{}\t{}", r + 1, explanation.sources[pair], explanation.targets[pair]);
    for (const float value : explanation.values.row(r)) {
      if (std::isnan(value)) {
        put("\tnan");
      } else {
        put("\t{}", value);
      }
    }
    put("\n");
  }
  return fmt::to_string(out);
}

}  // namespace termalign
