#include "rerank/compiled_trees.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string_view>

#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign::detail {

namespace {

// The arrays named `key` in `json`, one per occurrence, in order (each tree of the model has one of each), as the
// texts of their elements.
std::vector<std::vector<std::string_view>> arrays_named(std::string_view json, std::string_view key) {
  const std::string opening = "\"" + std::string(key) + "\":[";
  std::vector<std::vector<std::string_view>> arrays;
  for (std::size_t at = json.find(opening); at != std::string_view::npos; at = json.find(opening, at)) {
    at += opening.size();
    const std::size_t end = json.find(']', at);
    if (end == std::string_view::npos) return {};
    std::vector<std::string_view>& elements = arrays.emplace_back();
    while (at < end) {
      const std::size_t comma = std::min(json.find(',', at), end);
      elements.push_back(json.substr(at, comma - at));
      at = comma + 1;
    }
    at = end;
  }
  return arrays;
}

// The string value of the first `"key":"value"` in `json` (`key` may hold the keys of enclosing objects:
// `objective":{"name`), or empty.
std::string string_named(std::string_view json, std::string_view key) {
  const std::string opening = "\"" + std::string(key) + "\":\"";
  const std::size_t at = json.find(opening);
  if (at == std::string_view::npos) return {};
  const std::size_t begin = at + opening.size(), end = json.find('"', begin);
  return end == std::string_view::npos ? std::string() : std::string(json.substr(begin, end - begin));
}

bool parse_int(std::string_view text, long& value) {
  const std::string copy(text);
  char* end = nullptr;
  value = std::strtol(copy.c_str(), &end, 10);
  return !copy.empty() && *end == '\0';
}

bool parse_float(std::string_view text, float& value) {
  const std::string copy(text);
  char* end = nullptr;
  value = std::strtof(copy.c_str(), &end);  // correctly rounded, as XGBoost reads its own numbers
  return !copy.empty() && *end == '\0';
}

bool parse_flag(std::string_view text, bool& value) {
  if (text == "true" || text == "1") return value = true, true;
  if (text == "false" || text == "0") return value = false, true;
  return false;
}

// Rows that cross every split of the trees: each column at one of its thresholds, just below or above one,
// missing, or far out.
Matrix probe_rows(const std::vector<std::vector<float>>& thresholds, std::size_t rows) {
  std::mt19937 generator(1);
  Matrix x(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(thresholds.size()));
  const float missing = std::numeric_limits<float>::quiet_NaN();
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index c = 0; c < x.cols(); ++c) {
      const std::vector<float>& column = thresholds[static_cast<std::size_t>(c)];
      const auto pick = generator() % 8;
      if (r == 0 || pick == 0) {
        x(r, c) = missing;
      } else if (pick == 1 || column.empty()) {
        x(r, c) = pick % 2 == 0 ? -1e30f : 1e30f;
      } else {
        const float threshold = column[generator() % column.size()];
        x(r, c) = pick < 4   ? threshold
                  : pick < 6 ? std::nextafter(threshold, -std::numeric_limits<float>::infinity())
                             : std::nextafter(threshold, std::numeric_limits<float>::infinity());
      }
    }
  }
  return x;
}

}  // namespace

std::shared_ptr<const CompiledTrees> CompiledTrees::compile(
    const std::string& json, std::size_t features,
    const std::function<std::vector<float>(const Matrix&)>& xgboost_margins) {
  const auto unsupported = [](const char* why) {
    logger().debug("re-ranker trees evaluated by XGBoost: {}", why);
    return std::shared_ptr<const CompiledTrees>();
  };
  if (json.find("\"name\":\"gbtree\"") == std::string::npos) return unsupported("not a gbtree booster");
  const auto tree_info = arrays_named(json, "tree_info");
  if (tree_info.size() != 1) return unsupported("no tree_info");
  for (const std::string_view group : tree_info[0])
    if (group != "0") return unsupported("several outputs");
  float base_score = 0;
  if (!parse_float(string_named(json, "base_score"), base_score)) return unsupported("no base_score");
  const std::string objective = string_named(json, "objective\":{\"name");
  auto compiled = std::make_shared<CompiledTrees>();
  compiled->features_ = features;
  // XGBoost's ProbToMargin: the logistic objectives keep the base score as a probability.
  const bool logistic = objective == "binary:logistic" || objective == "reg:logistic";
  compiled->base_margin_ = logistic ? -std::log(1.0f / base_score - 1.0f) : base_score;

  const auto left = arrays_named(json, "left_children"), right = arrays_named(json, "right_children");
  const auto columns = arrays_named(json, "split_indices"), values = arrays_named(json, "split_conditions");
  const auto default_left = arrays_named(json, "default_left"), split_type = arrays_named(json, "split_type");
  const std::size_t trees = left.size();
  if (tree_info[0].size() != trees || right.size() != trees || columns.size() != trees || values.size() != trees ||
      default_left.size() != trees || split_type.size() != trees)
    return unsupported("trees without their arrays");
  std::vector<std::vector<float>> thresholds(features);
  for (std::size_t t = 0; t < trees; ++t) {
    const std::size_t nodes = left[t].size(), first = compiled->nodes_.size();
    if (nodes == 0 || right[t].size() != nodes || columns[t].size() != nodes || values[t].size() != nodes ||
        default_left[t].size() != nodes || split_type[t].size() != nodes)
      return unsupported("a tree's arrays differ in length");
    compiled->roots_.push_back(static_cast<std::uint32_t>(first));
    std::vector<std::uint32_t> depth(nodes, 0);  // children come after their parent in XGBoost's arrays
    std::uint32_t deepest = 0;
    for (std::size_t i = 0; i < nodes; ++i) {
      long l = 0, r = 0, column = 0;
      bool missing_left = false;
      Node node;
      if (!parse_int(left[t][i], l) || !parse_int(right[t][i], r) || !parse_int(columns[t][i], column) ||
          !parse_float(values[t][i], node.value) || !parse_flag(default_left[t][i], missing_left))
        return unsupported("a node it cannot read");
      if (split_type[t][i] != "0") return unsupported("categorical splits");
      if (l == -1) {  // a leaf: its value, and itself as both children (a walk of the tree's depth stays there)
        node.left = node.right = static_cast<std::int32_t>(first + i);
        compiled->nodes_.push_back(node);
        continue;
      }
      if (l <= static_cast<long>(i) || r <= static_cast<long>(i) || static_cast<std::size_t>(std::max(l, r)) >= nodes ||
          column < 0 || static_cast<std::size_t>(column) >= features)
        return unsupported("a node out of its tree");
      depth[static_cast<std::size_t>(l)] = depth[static_cast<std::size_t>(r)] = depth[i] + 1;
      deepest = std::max(deepest, depth[i] + 1);
      node.left = static_cast<std::int32_t>(first + static_cast<std::size_t>(l));
      node.right = static_cast<std::int32_t>(first + static_cast<std::size_t>(r));
      node.feature = static_cast<std::uint32_t>(column) | (missing_left ? kDefaultLeft : 0u);
      thresholds[static_cast<std::size_t>(column)].push_back(node.value);
      compiled->nodes_.push_back(node);
    }
    compiled->depths_.push_back(deepest);
  }
  // What a parse cannot show (how XGBoost breaks a tie at a threshold, treats a missing value, starts the sum) is
  // checked on rows that exercise each: any difference leaves the model to XGBoost.
  const Matrix probe = probe_rows(thresholds, 1024);
  const std::vector<float> expected = xgboost_margins(probe), found = compiled->margins(probe, 1);
  if (expected.size() != found.size() ||
      !std::equal(expected.begin(), expected.end(), found.begin(),
                  [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }))
    return unsupported("its margins differ from XGBoost's");
  logger().debug("re-ranker trees evaluated natively: {} trees, {} nodes", trees, compiled->nodes_.size());
  return compiled;
}

std::vector<float> CompiledTrees::margins(const Matrix& x, int threads) const {
  const auto rows = static_cast<std::size_t>(x.rows());
  TERMALIGN_CHECK(static_cast<std::size_t>(x.cols()) == features_, "one column per feature of the trees");
  std::vector<float> result(rows, base_margin_);
  // A block of rows at a time, tree by tree (the tree's nodes stay in cache), each row's leaves added in the
  // trees' order. Every row walks the tree's depth (a leaf leads to itself), without a branch on the values: the
  // rows' walks overlap, where a walk that stops at its leaf mispredicts a branch at every split.
  constexpr std::size_t kBlock = 64;
  parallel_for((rows + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    const std::size_t begin = block * kBlock, end = std::min(rows, begin + kBlock);
    std::uint32_t at[kBlock];
    for (std::size_t tree = 0; tree < roots_.size(); ++tree) {
      std::fill(at, at + (end - begin), roots_[tree]);
      for (std::uint32_t level = 0; level < depths_[tree]; ++level) {
        for (std::size_t r = begin; r < end; ++r) {
          const Node& node = nodes_[at[r - begin]];
          const float value = x.data()[r * features_ + (node.feature & ~kDefaultLeft)];
          const bool go_left = std::isnan(value) ? (node.feature & kDefaultLeft) != 0 : value < node.value;
          at[r - begin] = static_cast<std::uint32_t>(go_left ? node.left : node.right);
        }
      }
      for (std::size_t r = begin; r < end; ++r) result[r] += nodes_[at[r - begin]].value;
    }
  });
  return result;
}

}  // namespace termalign::detail
