#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rerank/boosted_trees.h"
#include "rerank/compiled_trees.h"
#include "rerank/reranker.h"

using namespace termalign;

namespace {

// Rows of `columns` values: mostly normal around 0 with a spread of `spread`, some NaN (missing), some 0 and 1
// exactly (the flags' values, at which splits sit), some infinite.
Matrix mixed_rows(std::size_t rows, Eigen::Index columns, float spread, std::uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0, spread);
  Matrix x(static_cast<Eigen::Index>(rows), columns);
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index c = 0; c < columns; ++c) {
      const auto kind = generator() % 16;
      x(r, c) = kind == 0   ? std::numeric_limits<float>::quiet_NaN()
                : kind == 1 ? 0.0f
                : kind == 2 ? 1.0f
                : kind == 3 ? std::numeric_limits<float>::infinity()
                            : normal(generator);
    }
  }
  return x;
}

// The number of rows whose margins differ in any bit.
std::size_t bitwise_differences(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return differ;
}

}  // namespace

TEST_CASE("compiled trees give XGBoost's margins bit for bit: the bundled models' stages", "[reranker]") {
  for (const bool with_corpora : {false, true}) {
    const Reranker model = bundled_reranker(with_corpora);
    for (const Reranker* stage : {&model, model.first_stage.get()}) {
      REQUIRE(stage != nullptr);
      REQUIRE(stage->compiled != nullptr);  // the bundled models are evaluated natively
      const auto columns = static_cast<Eigen::Index>(stage->features.size());
      for (const float spread : {0.1f, 1.0f, 10.0f}) {
        // 3000 rows: several blocks of the evaluator's 64 rows and a partial one, on 2 threads.
        const Matrix x = mixed_rows(3000, columns, spread, 11);
        CAPTURE(with_corpora, stage == &model, spread);
        const std::vector<float> native = stage->compiled->margins(x, 2);
        CHECK(bitwise_differences(native, predict_boosted_trees(stage->booster, x, 2)) == 0);
        CHECK(bitwise_differences(native, stage->compiled->margins(x, 1)) == 0);
      }
    }
  }
}

TEST_CASE("compiled trees of a freshly trained model, and a model they would get wrong is left to XGBoost",
          "[reranker]") {
  std::mt19937 generator(5);
  std::uniform_real_distribution<float> uniform(0, 1);
  Matrix x(2000, 3);
  std::vector<std::uint8_t> labels(2000);
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index c = 0; c < 3; ++c) x(r, c) = r % 7 == 0 && c == 1 ? NAN : uniform(generator);
    labels[static_cast<std::size_t>(r)] = x(r, 0) + (std::isnan(x(r, 1)) ? 0.3f : x(r, 1)) > 1.0f;
  }
  BoostedTreesOptions options;
  options.rounds = 20;
  const std::string model = train_boosted_trees(x, labels, options);
  const auto compiled = compile_boosted_trees(model);
  REQUIRE(compiled != nullptr);
  const Matrix rows = mixed_rows(500, 3, 1.0f, 3);
  CHECK(bitwise_differences(compiled->margins(rows, 2), predict_boosted_trees(model, rows, 2)) == 0);

  // The same trees with one leaf's value changed: the probe rows tell them from XGBoost's, so compile refuses.
  const auto xgboost = [&](const Matrix& probe) { return predict_boosted_trees(model, probe, 1); };
  REQUIRE(detail::CompiledTrees::compile(model, 3, xgboost) != nullptr);
  std::string changed = model;
  const std::size_t at = changed.find("\"split_conditions\":[");
  REQUIRE(at != std::string::npos);
  changed.insert(at + std::string("\"split_conditions\":[").size(), "1");  // the first value's leading digit
  CHECK(detail::CompiledTrees::compile(changed, 3, xgboost) == nullptr);
  // A model of other shapes than the columns given is refused too.
  CHECK(detail::CompiledTrees::compile(model, 2, xgboost) == nullptr);
}
