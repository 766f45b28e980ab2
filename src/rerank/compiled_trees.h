// The trees of an XGBoost model evaluated without XGBoost: its margins, bit for bit, at several times the speed
// (XGBoost's predictor copies each row into a feature vector of its own, then walks 12-byte nodes through a
// per-node accessor; the re-ranking of 3.4M candidates took 7 s of a 2-minute run at 130k x 290k terms).
// XGBoost still trains the models, reads them, and computes the contributions (SHAP) for --explain.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "termalign/embeddings.h"

namespace termalign::detail {

class CompiledTrees {
 public:
  // The model's trees as XGBoost saves them (`json`: its JSON, as XGBoosterSaveModelToBuffer writes it); null
  // when the model holds what this evaluator does not (categorical splits, several outputs, DART weights) or when
  // its margins differ from `xgboost_margins` on probe rows that cross every split at its threshold, beside it and
  // missing. `xgboost_margins` predicts rows with XGBoost.
  static std::shared_ptr<const CompiledTrees> compile(
      const std::string& json, std::size_t features,
      const std::function<std::vector<float>(const Matrix&)>& xgboost_margins);

  // The margin of each row of `x` (its columns the model's features, NaN missing), on `threads` threads: the
  // base margin plus each tree's leaf, in float, in the trees' order, as XGBoost adds them.
  std::vector<float> margins(const Matrix& x, int threads) const;

 private:
  struct Node {
    std::int32_t left = -1, right = -1;  // a leaf: itself
    std::uint32_t feature = 0;           // the split's column; bit 31: missing goes left
    float value = 0;                     // the split's threshold (left when below), or the leaf's value
  };
  static constexpr std::uint32_t kDefaultLeft = 1u << 31;
  float base_margin_ = 0;
  std::size_t features_ = 0;
  std::vector<std::uint32_t> roots_;   // each tree's first node in nodes_
  std::vector<std::uint32_t> depths_;  // each tree's depth (splits on its longest path)
  std::vector<Node> nodes_;           // the trees' nodes, children by index in nodes_
};

}  // namespace termalign::detail
