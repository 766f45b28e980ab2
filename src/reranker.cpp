#include "termalign/reranker.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "termalign/error.h"
#include "termalign/io.h"

namespace termalign {

namespace {

constexpr const char* kRerankerHeader = "termalign-reranker 1";

// For each candidate: its 1-based rank by `values` (descending; ties by candidate order) within its group, and the
// group's best and second-best values.
struct GroupStats {
  std::vector<float> rank, best, second;
};

GroupStats group_stats(const std::vector<std::uint32_t>& group, const std::vector<float>& values) {
  const std::size_t n = group.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (group[a] != group[b]) return group[a] < group[b];
    if (values[a] != values[b]) return values[a] > values[b];
    return a < b;
  });
  GroupStats stats{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin;
    while (end < n && group[order[end]] == group[order[begin]]) ++end;
    const float best = values[order[begin]];
    const float second = end - begin > 1 ? values[order[begin + 1]] : best;
    for (std::size_t i = begin; i < end; ++i) {
      stats.rank[order[i]] = static_cast<float>(i - begin + 1);
      stats.best[order[i]] = best;
      stats.second[order[i]] = second;
    }
    begin = end;
  }
  return stats;
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = {"csls",
                                                 "cosine",
                                                 "csls_below_source_best",
                                                 "csls_below_target_best",
                                                 "source_rank",
                                                 "target_rank",
                                                 "csls_above_runner_up",
                                                 "orthographic",
                                                 "ortho_below_source_best",
                                                 "identical",
                                                 "word_alignment",
                                                 "same_word_count",
                                                 "word_count_difference",
                                                 "log_length_ratio",
                                                 "multi_word_source",
                                                 "reverse_rank",
                                                 "orthographic_if_single_word",
                                                 "word_alignment_if_multi_word",
                                                 "csls_if_multi_word"};
  return names;
}

Matrix candidate_features(const CandidateEvidence& evidence) {
  const std::size_t n = evidence.size();
  const GroupStats by_source = group_stats(evidence.source, evidence.csls);
  const GroupStats by_target = group_stats(evidence.target, evidence.csls);
  const GroupStats ortho_by_source = group_stats(evidence.source, evidence.orthographic);
  Matrix features(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(feature_names().size()));
  for (std::size_t i = 0; i < n; ++i) {
    const float csls = evidence.csls[i];
    // Margin over the best competitor of the same source: the runner-up if this is the best, else the best.
    const float competitor = by_source.rank[i] == 1 ? by_source.second[i] : by_source.best[i];
    const float words_source = evidence.source_words[i], words_target = evidence.target_words[i];
    const float length_ratio = std::log((1.0f + evidence.source_length[i]) / (1.0f + evidence.target_length[i]));
    const float row[] = {csls, evidence.cosine[i], csls - by_source.best[i], csls - by_target.best[i],
                         1.0f / by_source.rank[i], 1.0f / by_target.rank[i], csls - competitor,
                         evidence.orthographic[i], evidence.orthographic[i] - ortho_by_source.best[i],
                         static_cast<float>(evidence.identical[i]), evidence.word_alignment[i],
                         words_source == words_target ? 1.0f : 0.0f, std::abs(words_source - words_target),
                         std::abs(length_ratio), words_source > 1 ? 1.0f : 0.0f,
                         evidence.reverse_rank[i] > 0 ? 1.0f / evidence.reverse_rank[i] : 0.0f,
                         // Spelling matters most for single words, word-by-word evidence for multi-word terms.
                         words_source == 1 ? evidence.orthographic[i] : 0.0f,
                         words_source > 1 ? evidence.word_alignment[i] : 0.0f, words_source > 1 ? csls : 0.0f};
    static_assert(sizeof row / sizeof row[0] == 19, "one value per feature name");
    for (Eigen::Index j = 0; j < features.cols(); ++j) features(static_cast<Eigen::Index>(i), j) = row[j];
  }
  return features;
}

Eigen::VectorXd Reranker::score(const Matrix& features_matrix) const {
  TERMALIGN_CHECK(features_matrix.cols() == weights.size(), "feature count differs from the model's");
  const Eigen::MatrixXd x = features_matrix.cast<double>();
  Eigen::VectorXd logits(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    logits(i) = bias + ((x.row(i).transpose() - mean).cwiseQuotient(scale)).dot(weights);
  }
  return logits;
}

Reranker train_logistic(const Matrix& features_matrix, const std::vector<std::uint8_t>& labels, double l2) {
  const Eigen::Index n = features_matrix.rows(), f = features_matrix.cols();
  TERMALIGN_CHECK(static_cast<std::size_t>(n) == labels.size(), "one label per candidate");
  Reranker model;
  model.features = feature_names();
  const Eigen::MatrixXd raw = features_matrix.cast<double>();
  model.mean = n ? Eigen::VectorXd(raw.colwise().mean().transpose()) : Eigen::VectorXd::Zero(f);
  model.scale = Eigen::VectorXd::Ones(f);
  for (Eigen::Index j = 0; j < f && n > 1; ++j) {
    const double deviation =
        std::sqrt((raw.col(j).array() - model.mean(j)).square().sum() / static_cast<double>(n));
    if (deviation > 1e-12) model.scale(j) = deviation;
  }
  // Design matrix with a trailing column of ones for the bias.
  Eigen::MatrixXd x(n, f + 1);
  x.leftCols(f) = (raw.rowwise() - model.mean.transpose()).array().rowwise() / model.scale.transpose().array();
  x.col(f).setOnes();
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) y(i) = labels[static_cast<std::size_t>(i)] ? 1.0 : 0.0;
  Eigen::VectorXd w = Eigen::VectorXd::Zero(f + 1);
  Eigen::VectorXd penalty = Eigen::VectorXd::Constant(f + 1, l2);
  penalty(f) = 0;
  for (int iteration = 0; iteration < 50; ++iteration) {
    const Eigen::VectorXd p =
        (-(x * w)).array().exp().matrix().unaryExpr([](double e) { return 1.0 / (1.0 + e); });
    const Eigen::VectorXd gradient = x.transpose() * (p - y) + penalty.cwiseProduct(w);
    const Eigen::VectorXd curvature = (p.array() * (1.0 - p.array())).matrix();
    Eigen::MatrixXd hessian = x.transpose() * curvature.asDiagonal() * x;
    hessian.diagonal() += penalty + Eigen::VectorXd::Constant(f + 1, 1e-9);
    const Eigen::VectorXd step = hessian.ldlt().solve(gradient);
    w -= step;
    if (step.norm() < 1e-8) break;
  }
  model.weights = w.head(f);
  model.bias = w(f);
  return model;
}

std::string format_reranker(const Reranker& model) {
  std::string text = std::string(kRerankerHeader) + "\n";
  char line[256];
  for (std::size_t j = 0; j < model.features.size(); ++j) {
    const auto index = static_cast<Eigen::Index>(j);
    std::snprintf(line, sizeof line, "%s %.17g %.17g %.17g\n", model.features[j].c_str(), model.mean(index),
                  model.scale(index), model.weights(index));
    text += line;
  }
  std::snprintf(line, sizeof line, "bias %.17g\n", model.bias);
  text += line;
  return text;
}

void save_reranker(const std::string& path, const Reranker& model) {
  write_file_atomically(path, format_reranker(model));
}

Reranker load_reranker(const std::string& path) {
  std::istringstream stream(read_file(path));
  std::string line;
  if (!std::getline(stream, line) || line != kRerankerHeader) {
    throw_input_error(path, 1, "not a termalign re-ranker model (bad header).");
  }
  Reranker model;
  const auto& expected = feature_names();
  const auto f = static_cast<Eigen::Index>(expected.size());
  model.mean.resize(f), model.scale.resize(f), model.weights.resize(f);
  for (Eigen::Index j = 0; j < f; ++j) {
    std::string name;
    if (!std::getline(stream, line) ||
        !(std::istringstream(line) >> name >> model.mean(j) >> model.scale(j) >> model.weights(j))) {
      throw_input_error(path, static_cast<std::size_t>(j) + 2, "expected 'feature mean scale weight'.");
    }
    if (name != expected[static_cast<std::size_t>(j)]) {
      throw_input_error(path, static_cast<std::size_t>(j) + 2,
                        "feature '" + name + "' where this termalign expects '" +
                            expected[static_cast<std::size_t>(j)] +
                            "': the model was trained by another version; train it again.");
    }
    model.features.push_back(name);
  }
  std::string word;
  if (!std::getline(stream, line) || !(std::istringstream(line) >> word >> model.bias) || word != "bias") {
    throw_input_error(path, static_cast<std::size_t>(f) + 2, "expected 'bias VALUE'.");
  }
  return model;
}

}  // namespace termalign
