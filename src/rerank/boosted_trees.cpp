#include "rerank/boosted_trees.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>

#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "util/parallel.h"

namespace termalign {

namespace {

void check(int status, const char* what) {
  if (status != 0) throw Error(ErrorKind::internal, std::string(what) + ": XGBoost: " + XGBGetLastError());
}

struct MatrixHandle {
  DMatrixHandle handle = nullptr;
  explicit MatrixHandle(const Matrix& x) {
    check(XGDMatrixCreateFromMat(x.data(), static_cast<bst_ulong>(x.rows()), static_cast<bst_ulong>(x.cols()),
                                 std::numeric_limits<float>::quiet_NaN(), &handle),
          "features");
  }
  ~MatrixHandle() { XGDMatrixFree(handle); }
  MatrixHandle(const MatrixHandle&) = delete;
  MatrixHandle& operator=(const MatrixHandle&) = delete;
};

struct Booster {
  BoosterHandle handle = nullptr;
  Booster(const DMatrixHandle* matrices, bst_ulong count) {
    check(XGBoosterCreate(matrices, count, &handle), "booster");
  }
  ~Booster() { XGBoosterFree(handle); }
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  void set(const char* name, const std::string& value) {
    check(XGBoosterSetParam(handle, name, value.c_str()), name);
  }
};

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// Prediction of `type` (1: margin, 2: contributions) for every row. Margins are predicted in place from the rows
// (XGBoost reads them where they are: no DMatrix copy; the same margins); contributions need a DMatrix.
std::vector<float> predict(const std::string& model, const Matrix& x, int type, int threads,
                           std::vector<bst_ulong>& shape) {
  Booster booster(nullptr, 0);
  check(XGBoosterLoadModelFromBuffer(booster.handle, model.data(), static_cast<bst_ulong>(model.size())),
        "re-ranker model");
  booster.set("nthread", std::to_string(resolve_threads(threads)));
  const std::string config = "{\"type\": " + std::to_string(type) +
                             ", \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
                             "\"strict_shape\": false";
  const bst_ulong* out_shape = nullptr;
  bst_ulong dimensions = 0;
  const float* result = nullptr;
  if (type == 1 && x.rows() > 0) {
    // The rows as a NumPy __array_interface__ (row-major float32), NaN missing as in the DMatrix.
    const std::string rows = "{\"data\": [" + std::to_string(reinterpret_cast<std::uintptr_t>(x.data())) +
                             ", true], \"shape\": [" + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) +
                             "], \"typestr\": \"<f4\", \"version\": 3}";
    const std::string in_place = config + ", \"missing\": NaN, \"cache_id\": 0}";
    check(XGBoosterPredictFromDense(booster.handle, rows.c_str(), in_place.c_str(), nullptr, &out_shape,
                                    &dimensions, &result),
          "prediction");
  } else {
    const MatrixHandle matrix(x);
    check(XGBoosterPredictFromDMatrix(booster.handle, matrix.handle, (config + "}").c_str(), &out_shape,
                                      &dimensions, &result),
          "prediction");
  }
  shape.assign(out_shape, out_shape + dimensions);
  std::size_t size = 1;
  for (const bst_ulong extent : shape) size *= extent;
  return std::vector<float>(result, result + size);
}

}  // namespace

std::string train_boosted_trees(const Matrix& x, const std::vector<std::uint8_t>& labels,
                                const BoostedTreesOptions& options, const std::vector<std::string>& names) {
  TERMALIGN_CHECK(static_cast<std::size_t>(x.rows()) == labels.size(), "one label per row");
  TERMALIGN_CHECK(names.empty() || names.size() == static_cast<std::size_t>(x.cols()), "one name per column");
  const MatrixHandle matrix(x);
  std::vector<float> label_values(labels.begin(), labels.end());
  check(XGDMatrixSetFloatInfo(matrix.handle, "label", label_values.data(), label_values.size()), "labels");
  if (options.objective.rfind("rank:", 0) == 0) {
    const unsigned group = static_cast<unsigned>(x.rows());
    check(XGDMatrixSetUIntInfo(matrix.handle, "group", &group, 1), "group");
  }
  Booster booster(&matrix.handle, 1);
  booster.set("objective", options.objective);
  booster.set("tree_method", "hist");
  booster.set("max_depth", std::to_string(options.max_depth));
  booster.set("eta", number(options.eta));
  booster.set("subsample", number(options.subsample));
  booster.set("colsample_bytree", number(options.colsample));
  booster.set("min_child_weight", number(options.min_child_weight));
  booster.set("lambda", number(options.lambda));
  booster.set("seed", std::to_string(options.seed));
  booster.set("nthread", std::to_string(resolve_threads(options.threads)));
  booster.set("verbosity", "0");
  for (int round = 0; round < options.rounds; ++round) {
    throw_if_interrupted();  // a round of a large training takes a second or more
    check(XGBoosterUpdateOneIter(booster.handle, round, matrix.handle), "training");
  }
  if (!names.empty()) {  // kept in the model's JSON (learner.feature_names)
    std::vector<const char*> pointers;
    for (const std::string& name : names) pointers.push_back(name.c_str());
    check(XGBoosterSetStrFeatureInfo(booster.handle, "feature_name", pointers.data(), pointers.size()),
          "feature names");
  }
  bst_ulong length = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(booster.handle, "{\"format\": \"json\"}", &length, &bytes), "saving");
  return std::string(bytes, length);
}

BoostedTreesInfo inspect_boosted_trees(const std::string& model) {
  Booster booster(nullptr, 0);
  check(XGBoosterLoadModelFromBuffer(booster.handle, model.data(), static_cast<bst_ulong>(model.size())),
        "re-ranker model");
  BoostedTreesInfo info;
  bst_ulong features = 0;
  check(XGBoosterGetNumFeature(booster.handle, &features), "re-ranker model");
  info.features = static_cast<std::size_t>(features);
  bst_ulong count = 0;
  const char** names = nullptr;
  check(XGBoosterGetStrFeatureInfo(booster.handle, "feature_name", &count, &names), "re-ranker model");
  info.names.assign(names, names + count);
  return info;
}

std::vector<float> predict_boosted_trees(const std::string& model, const Matrix& x, int threads) {
  std::vector<bst_ulong> shape;
  return predict(model, x, 1, threads, shape);
}

std::shared_ptr<const detail::CompiledTrees> compile_boosted_trees(const std::string& model) {
  Booster booster(nullptr, 0);
  check(XGBoosterLoadModelFromBuffer(booster.handle, model.data(), static_cast<bst_ulong>(model.size())),
        "re-ranker model");
  bst_ulong features = 0, length = 0;
  check(XGBoosterGetNumFeature(booster.handle, &features), "re-ranker model");
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(booster.handle, "{\"format\": \"json\"}", &length, &bytes), "re-ranker model");
  return detail::CompiledTrees::compile(std::string(bytes, length), static_cast<std::size_t>(features),
                                        [&](const Matrix& x) { return predict_boosted_trees(model, x, 1); });
}

Matrix boosted_trees_contributions(const std::string& model, const Matrix& x, int threads) {
  std::vector<bst_ulong> shape;
  const std::vector<float> values = predict(model, x, 2, threads, shape);
  const Eigen::Index columns = x.cols() + 1;
  TERMALIGN_CHECK(values.size() == static_cast<std::size_t>(x.rows() * columns), "one contribution per feature");
  Matrix contributions(x.rows(), columns);
  std::copy(values.begin(), values.end(), contributions.data());
  return contributions;
}

}  // namespace termalign
