// The re-ranker applied: its learners' scores, over a run's feature columns a block of rows at a time.
#include "rerank/reranker.h"

#include <algorithm>
#include <functional>

#include "rerank/boosted_trees.h"
#include "rerank/bundled_models.h"
#include "rerank/features.h"
#include "rerank/logistic.h"
#include "termalign/error.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

// The model's scores of rows [0, n), `block` (> 0) rows at a time (at least one block, so that an empty run still
// checks the model's columns): columns(first, end) gives the model's columns of those rows. Neither the model's
// columns of millions of candidates nor XGBoost's copy of them is held whole.
Eigen::VectorXd score_in_blocks(const Reranker& model, std::size_t n, std::size_t block, int threads,
                                const std::function<Matrix(std::size_t, std::size_t)>& columns) {
  Eigen::VectorXd scores(static_cast<Eigen::Index>(n));
  Progress progress("re-ranking, candidates", n);
  std::size_t first = 0;
  do {
    const std::size_t end = std::min(n, first + block);
    scores.segment(static_cast<Eigen::Index>(first), static_cast<Eigen::Index>(end - first)) =
        model.score(columns(first, end), threads);
    progress.advance(end - first);
    first = end;
  } while (first < n);
  progress.finish();
  return scores;
}

// score_candidates with the candidates' features computed (a two-stage model adds the first stage's to them).
Eigen::VectorXd score_features(const Reranker& model, detail::FeatureColumns& features, std::size_t candidates,
                               const std::string& origin, int threads) {
  // A block of rows at a time: the block's table, the model's columns of it, and XGBoost's copy of them.
  constexpr std::size_t kScoreBlock = std::size_t{1} << 18;
  const auto score_table = [&](const Reranker& stage) {
    return score_in_blocks(stage, candidates, kScoreBlock, threads, [&](std::size_t first, std::size_t end) {
      return features.rows(first, end).select(stage.features, origin);
    });
  };
  if (model.first_stage) features.add_first_stage(score_table(*model.first_stage));
  return score_table(model);
}

}  // namespace

Eigen::VectorXd score_candidates(const Reranker& model, const CandidateEvidence& evidence,
                                 const std::string& origin, int threads) {
  detail::FeatureColumns features(evidence, threads);
  return score_features(model, features, evidence.size(), origin, threads);
}

FeatureTable with_stage_features(const Reranker& model, const CandidateEvidence& evidence,
                                 const FeatureTable& table, const std::string& origin, int threads) {
  if (!model.first_stage) return table;
  return with_stage_columns(table, evidence, model.first_stage->score(table, origin, threads), threads);
}

const char* to_string(Learner learner) {
  switch (learner) {
    case Learner::logistic:
      return "logistic";
    case Learner::trees:
      return "trees";
    case Learner::ranking:
      return "ranking";
  }
  return "?";
}

Learner parse_learner(const std::string& name) {
  for (auto value : {Learner::logistic, Learner::trees, Learner::ranking}) {
    if (name == to_string(value)) return value;
  }
  throw_usage_error("Unknown learner '" + name + "': expected logistic, trees or ranking.");
}

Eigen::VectorXd Reranker::score(const Matrix& features_matrix, int threads) const {
  TERMALIGN_CHECK(features_matrix.cols() == static_cast<Eigen::Index>(features.size()),
                  "feature count differs from the model's");
  if (learner != Learner::logistic) {
    const std::vector<float> margins = compiled ? compiled->margins(features_matrix, threads)
                                                : predict_boosted_trees(booster, features_matrix, threads);
    Eigen::VectorXd scores(features_matrix.rows());
    for (Eigen::Index i = 0; i < scores.size(); ++i) scores(i) = margins[static_cast<std::size_t>(i)];
    return scores;
  }
  return detail::logistic_scores(*this, features_matrix);
}

Eigen::VectorXd Reranker::score(const FeatureTable& table, const std::string& origin, int threads,
                                Eigen::Index block_rows) const {
  const auto block = static_cast<std::size_t>(std::max<Eigen::Index>(block_rows, 1));
  return score_in_blocks(*this, static_cast<std::size_t>(table.values.rows()), block, threads,
                         [&](std::size_t first, std::size_t end) {
                           return table.select(features, origin, static_cast<Eigen::Index>(first),
                                               static_cast<Eigen::Index>(end - first));
                         });
}

Matrix Reranker::contributions(const Matrix& features_matrix, int threads) const {
  if (learner != Learner::logistic) return boosted_trees_contributions(booster, features_matrix, threads);
  return detail::logistic_contributions(*this, features_matrix);
}

std::string reranker_origin(const CandidateEvidence& evidence, const std::string& setting, bool seedless) {
  return detail::configured_origin(setting, detail::FeatureColumns(evidence, 1).names(), seedless);
}

Eigen::VectorXd rerank(const CandidateEvidence& evidence, const AlignConfig& config, bool seedless) {
  const int threads = config.scoring.threads;
  detail::FeatureColumns features(evidence, threads);
  const Reranker model = detail::configured_model(config.input.reranker, features.names(), seedless);
  const std::string origin = detail::configured_origin(config.input.reranker, features.names(), seedless);
  logger().info("re-ranking {} candidates with {} ({}, {} stage{}, {} features)", evidence.size(), origin,
                to_string(model.learner), model.stages(), model.stages() > 1 ? "s" : "", model.features.size());
  return score_features(model, features, evidence.size(), origin, threads);
}

}  // namespace termalign
