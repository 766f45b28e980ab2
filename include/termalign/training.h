// Training the re-ranker on a dataset's gold, with an honest (cross-validated) estimate of its AP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "termalign/config.h"
#include "termalign/reranker.h"

namespace termalign {

struct RerankerTrainingOptions {
  std::string gold;        // gold pairs of the training dataset
  std::size_t folds = 2;   // cross-validation folds over source terms (at least 2)
  double l2 = 1.0;         // L2 penalty of the logistic regression
  std::uint32_t seed = 1;  // the assignment of source terms to folds
};

struct RerankerTrainingResult {
  Reranker model;  // trained on every candidate
  std::size_t candidates = 0, positives = 0;
  double csls_ap = 0;             // AP of the same candidates ranked by CSLS alone
  double cross_validated_ap = 0;  // AP when each source term is scored by a model that never saw it
};

// Generates candidates as `align` does with `config`, labels them with the gold, estimates the AP by
// cross-validation over source terms (each fold's candidates scored by a model trained on the other folds, then
// one ranking of all of them, capped, scored), and trains the final model on all candidates.
RerankerTrainingResult train_reranker(const AlignConfig& config, const RerankerTrainingOptions& options);

}  // namespace termalign
