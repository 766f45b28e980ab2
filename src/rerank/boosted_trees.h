// Gradient-boosted trees through XGBoost's C API (Debian's libxgboost-dev): training, prediction and per-feature
// contributions over dense float features.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rerank/compiled_trees.h"
#include "termalign/embeddings.h"

namespace termalign {

struct BoostedTreesOptions {
  std::string objective = "binary:logistic";  // or "rank:pairwise" (all rows one group: a global ranking)
  // 150 rounds at 0.1 give the cross-validated AP of 300 at 0.05 on enfr/train (0.700 and 0.730 against 0.701 and
  // 0.729, with and without corpora) at half the prediction time (docs/accuracy.md).
  int rounds = 150;
  int max_depth = 4;
  double eta = 0.1;
  double subsample = 0.8;
  double colsample = 0.8;
  double min_child_weight = 1;
  double lambda = 1;
  int threads = 0;  // 0 = all cores
  std::uint32_t seed = 1;
};

// Trains on rows `x` (labels 1 for a gold pair) and returns the model as XGBoost's JSON text. With `names` (one
// per column), the model keeps them (XGBoost's feature_names).
std::string train_boosted_trees(const Matrix& x, const std::vector<std::uint8_t>& labels,
                                const BoostedTreesOptions& options, const std::vector<std::string>& names = {});

// What a model's text holds, read by XGBoost: its column count and the feature names it keeps (none for models
// trained without). An internal error with XGBoost's message when the text is no model.
struct BoostedTreesInfo {
  std::size_t features = 0;
  std::vector<std::string> names;
};
BoostedTreesInfo inspect_boosted_trees(const std::string& model);

// The raw margin of each row (monotone in the predicted probability).
std::vector<float> predict_boosted_trees(const std::string& model, const Matrix& x, int threads = 0);

// The model's trees for predictions without XGBoost (compiled_trees.h: the same margins, bit for bit); null when
// that evaluator cannot take the model (predict_boosted_trees then predicts).
std::shared_ptr<const detail::CompiledTrees> compile_boosted_trees(const std::string& model);

// rows x (columns + 1): each feature's SHAP contribution to the margin, then the bias; a row sums to its margin.
Matrix boosted_trees_contributions(const std::string& model, const Matrix& x, int threads = 0);

}  // namespace termalign
