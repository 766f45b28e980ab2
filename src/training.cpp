#include "termalign/training.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "termalign/align.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

double ranked_ap(const CandidateSet& candidates, const Eigen::VectorXd& scores, const PairList& gold) {
  PairList predictions;
  predictions.path = "(candidates)";
  for (const RankedPair& pair : rank_candidates(candidates, scores))
    predictions.pairs.emplace_back(pair.source, pair.target);
  return evaluate(gold, predictions, &candidates.source_terms, &candidates.target_terms, EvaluationOptions{}).ap;
}

Matrix select_rows(const Matrix& matrix, const std::vector<std::size_t>& rows) {
  Matrix selected(static_cast<Eigen::Index>(rows.size()), matrix.cols());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    selected.row(static_cast<Eigen::Index>(i)) = matrix.row(static_cast<Eigen::Index>(rows[i]));
  }
  return selected;
}

}  // namespace

RerankerTrainingResult train_reranker(const AlignConfig& config, const RerankerTrainingOptions& options) {
  if (options.folds < 2)
    throw_usage_error("Cross-validation needs at least 2 folds (got " + std::to_string(options.folds) + ").");
  if (!config.input.reranker.empty()) {
    throw_usage_error("A re-ranker is being trained: do not give one to apply (--reranker).");
  }
  const PairList gold = read_pairs(options.gold, PairFileKind::gold);
  const CandidateSet candidates = generate_candidates(config, true);
  const CandidateEvidence& evidence = candidates.evidence;
  const Matrix features = candidate_features(evidence);

  std::set<std::pair<std::string, std::string>> gold_pairs(gold.pairs.begin(), gold.pairs.end());
  std::vector<std::uint8_t> labels(evidence.size());
  RerankerTrainingResult result;
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    labels[i] = gold_pairs.count({candidates.source_terms.terms[evidence.source[i]],
                                  candidates.target_terms.terms[evidence.target[i]]}) != 0;
    result.positives += labels[i];
  }
  result.candidates = evidence.size();
  if (result.positives == 0) {
    throw_input_error(options.gold, 0, "no candidate pair is in the gold: is it the gold of these term lists?");
  }

  // Folds over source terms, so that no term is scored by a model trained on its own pairs.
  std::vector<std::uint32_t> fold_of(candidates.source_terms.size());
  std::vector<std::uint32_t> order(fold_of.size());
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937(options.seed));
  for (std::size_t i = 0; i < order.size(); ++i) fold_of[order[i]] = static_cast<std::uint32_t>(i % options.folds);

  Eigen::VectorXd held_out_scores(static_cast<Eigen::Index>(evidence.size()));
  for (std::uint32_t fold = 0; fold < options.folds; ++fold) {
    std::vector<std::size_t> train_rows, test_rows;
    for (std::size_t i = 0; i < evidence.size(); ++i) {
      (fold_of[evidence.source[i]] == fold ? test_rows : train_rows).push_back(i);
    }
    std::vector<std::uint8_t> train_labels;
    for (std::size_t i : train_rows) train_labels.push_back(labels[i]);
    const Reranker model = train_logistic(select_rows(features, train_rows), train_labels, options.l2);
    const Eigen::VectorXd scores = model.score(select_rows(features, test_rows));
    for (std::size_t i = 0; i < test_rows.size(); ++i) {
      held_out_scores(static_cast<Eigen::Index>(test_rows[i])) = scores(static_cast<Eigen::Index>(i));
    }
  }
  result.cross_validated_ap = ranked_ap(candidates, held_out_scores, gold);
  Eigen::VectorXd csls_scores(static_cast<Eigen::Index>(evidence.size()));
  for (std::size_t i = 0; i < evidence.size(); ++i) csls_scores(static_cast<Eigen::Index>(i)) = evidence.csls[i];
  result.csls_ap = ranked_ap(candidates, csls_scores, gold);
  result.model = train_logistic(features, labels, options.l2);
  logger().info("re-ranker: {} candidates, {} in the gold; AP by CSLS {:.4f}, {}-fold cross-validated AP {:.4f}",
                result.candidates, result.positives, result.csls_ap, options.folds, result.cross_validated_ap);
  return result;
}

}  // namespace termalign
