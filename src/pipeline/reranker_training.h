// Training the re-ranker on a dataset's gold, with an honest (cross-validated) estimate of its AP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rerank/boosted_trees.h"
#include "rerank/reranker.h"
#include "termalign/config.h"

namespace termalign {

struct RerankerTrainingOptions {
  std::string gold;              // gold pairs of the training dataset
  std::size_t folds = 2;         // cross-validation folds over source terms (at least 2)
  double l2 = 1.0;               // L2 penalty of the logistic regression
  std::uint32_t seed = 1;        // the assignment of source terms to folds
  std::string learner = "auto";  // logistic, trees, ranking, or auto: the best by cross-validated AP
  BoostedTreesOptions trees;     // the trees' settings (objective set by the learner)
  bool ablation = false;         // also the cross-validated AP with each feature group left out in turn
  // 2: a second model over the features and the first's cross-validated scores (Reranker::first_stage); 1: one.
  std::size_t stages = 2;
  // The second stage's trees: fewer and shallower than the first's, since its inputs already hold the first's
  // verdict (60 rounds at depth 3 against 150 at 4: 2-fold CV, fold seeds 1-4, en-fr 0.7416 -> 0.7451, fr-en
  // 0.7435 -> 0.7475; docs/accuracy.md).
  int second_rounds = 60;
  int second_max_depth = 3;
};

struct AblationRow {
  std::string group;  // the feature group left out
  std::size_t features = 0;
  double cross_validated_ap = 0;
};

// One candidate's cross-validated score: by the model of the folds that did not hold its source term.
struct HeldOutScore {
  std::string source, target;
  bool gold = false;
  std::uint32_t fold = 0;
  double score = 0;
};

struct RerankerTrainingResult {
  Reranker model;  // trained on every candidate
  std::size_t candidates = 0, positives = 0;
  std::size_t gold_pairs = 0;   // gold pairs of listed terms
  double candidate_recall = 0;  // share of the gold pairs among the candidates (the AP's ceiling)
  double csls_ap = 0;           // AP of the same candidates ranked by CSLS alone
  double unsupervised_ap = 0;   // ranked by CSLS plus the orthographic bonus (align --reranker none)
  // Cross-validated AP of each learner tried (learner, AP), and of the chosen one.
  std::vector<std::pair<std::string, double>> learners;
  double cross_validated_ap = 0;  // AP when each source term is scored by a model that never saw it
  double one_stage_ap = 0;        // the same for the chosen learner's first stage alone
  std::vector<AblationRow> ablation;
  // The cross-validated list of the chosen learner, ranked and capped as align's (its AP is cross_validated_ap).
  std::vector<HeldOutScore> held_out;
};

// Generates candidates as `align` does with `config` (full evidence), labels them with the gold, estimates the
// AP by cross-validation over source terms (each fold's candidates scored by a model trained on the other folds,
// then one ranking of all of them, capped, scored), and trains the final model on all candidates.
RerankerTrainingResult train_reranker(const AlignConfig& config, const RerankerTrainingOptions& options);

// The Markdown table of a result: learners, the ablation rows, candidate recall.
std::string format_training_report(const RerankerTrainingResult& result, std::size_t folds);

// The held-out list as TSV with a header (rank, source, target, gold 0/1, fold, score), for error analysis.
std::string format_held_out(const RerankerTrainingResult& result);

}  // namespace termalign
