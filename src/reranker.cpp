#include "termalign/reranker.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "detail/bundled_models.h"
#include "termalign/boosted_trees.h"
#include "termalign/error.h"
#include "termalign/io.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

constexpr const char* kLogisticHeader = "termalign-reranker 1";
constexpr const char* kTreesHeader = "termalign-reranker-trees 1";

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

// The z-score of each candidate's value among its group's values (0 in a group of one or of equal values).
std::vector<float> group_z(const std::vector<std::uint32_t>& group, const std::vector<float>& values) {
  std::unordered_map<std::uint32_t, std::pair<double, double>> sums;  // group -> sum, sum of squares
  std::unordered_map<std::uint32_t, std::size_t> sizes;
  for (std::size_t i = 0; i < group.size(); ++i) {
    auto& sum = sums[group[i]];
    sum.first += values[i];
    sum.second += double(values[i]) * values[i];
    ++sizes[group[i]];
  }
  std::vector<float> z(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    const auto& sum = sums[group[i]];
    const double count = static_cast<double>(sizes[group[i]]);
    const double mean = sum.first / count;
    const double variance = std::max(0.0, sum.second / count - mean * mean);
    z[i] = variance > 1e-12 ? static_cast<float>((values[i] - mean) / std::sqrt(variance)) : 0.0f;
  }
  return z;
}

// Similarities differ in scale from one vector space to another: a cosine that is high in one is ordinary in
// another, and a model that split on raw values would not carry over. Each similarity therefore enters as its
// quantile among the run's candidates, and each margin in units of the similarity's spread among them.
struct RunScale {
  std::vector<float> quantile;  // (rank - 1) / (n - 1) by ascending value, ties sharing their mean rank; in [0, 1]
  float spread = 1;             // the interquartile range (1 when it is 0)
};

RunScale run_scale(const std::vector<float>& values) {
  const std::size_t n = values.size();
  RunScale scale;
  scale.quantile.assign(n, 0.0f);
  if (n < 2) return scale;
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return values[a] != values[b] ? values[a] < values[b] : a < b;
  });
  const double last = static_cast<double>(n - 1);
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin;
    while (end < n && values[order[end]] == values[order[begin]]) ++end;
    const float q = static_cast<float>(0.5 * static_cast<double>(begin + end - 1) / last);
    for (std::size_t i = begin; i < end; ++i) scale.quantile[order[i]] = q;
    begin = end;
  }
  const float iqr = values[order[(3 * (n - 1)) / 4]] - values[order[(n - 1) / 4]];
  scale.spread = iqr > 0 ? iqr : 1.0f;
  return scale;
}

// Columns added one candidate at a time.
class TableBuilder {
 public:
  explicit TableBuilder(std::size_t rows) : rows_(rows) {}
  void add(const std::string& name, std::vector<float> column) {
    names_.push_back(name);
    columns_.push_back(std::move(column));
  }
  // Each column is freed once copied: the table and the columns are not both held whole.
  FeatureTable build() {
    FeatureTable table;
    table.names = std::move(names_);
    table.values.resize(static_cast<Eigen::Index>(rows_), static_cast<Eigen::Index>(columns_.size()));
    for (std::size_t j = 0; j < columns_.size(); ++j) {
      for (std::size_t i = 0; i < rows_; ++i)
        table.values(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = columns_[j][i];
      columns_[j] = std::vector<float>();
    }
    return table;
  }

 private:
  std::size_t rows_;
  std::vector<std::string> names_;
  std::vector<std::vector<float>> columns_;
};

// A candidate's margin below the best value of its group, and 1 / its rank in the group. With a run scale, the
// margin is in its spreads (name suffix _s).
void add_rank_features(TableBuilder& table, const std::string& prefix, const std::vector<std::uint32_t>& group,
                       const std::vector<float>& values, const std::string& group_name,
                       const RunScale* scale = nullptr) {
  const GroupStats stats = group_stats(group, values);
  const float spread = scale ? scale->spread : 1.0f;
  std::vector<float> below(values.size()), rank(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    below[i] = (values[i] - stats.best[i]) / spread;
    rank[i] = 1.0f / stats.rank[i];
  }
  table.add(prefix + "_below_" + group_name + "_best" + (scale ? "_s" : ""), std::move(below));
  table.add(prefix + "_" + group_name + "_rank", std::move(rank));
}

}  // namespace

Matrix FeatureTable::select(const std::vector<std::string>& wanted, const std::string& origin) const {
  return select(wanted, origin, 0, values.rows());
}

Matrix FeatureTable::select(const std::vector<std::string>& wanted, const std::string& origin, Eigen::Index first,
                            Eigen::Index rows) const {
  Matrix selected(rows, static_cast<Eigen::Index>(wanted.size()));
  for (std::size_t j = 0; j < wanted.size(); ++j) {
    const auto found = std::find(names.begin(), names.end(), wanted[j]);
    if (found == names.end()) {
      const std::string group = feature_group(wanted[j]);
      throw_input_error(origin, 0,
                        "the model uses the feature '" + wanted[j] + "', which this run does not compute" +
                            (group.rfind("corpus", 0) == 0 ? " (it needs the corpora: --src-corpus, --tgt-corpus)"
                                                           : std::string()) +
                            "; use a model trained without it. Models trained before the similarities became "
                            "run-relative (features such as 'csls', now 'csls_q') must be trained again with "
                            "`termalign train-reranker`.");
    }
    selected.col(static_cast<Eigen::Index>(j)) = values.col(found - names.begin()).segment(first, rows);
  }
  return selected;
}

bool FeatureTable::has(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string feature_group(const std::string& name) {
  if (name.rfind("comp_", 0) == 0) return "compositional";
  if (name.rfind("freq_", 0) == 0) return "corpus-frequency";
  if (name.rfind("context_", 0) == 0) return "corpus-context";
  return "base";
}

FeatureTable candidate_feature_table(const CandidateEvidence& evidence) {
  const std::size_t n = evidence.size();
  TableBuilder table(n);
  {
    const GroupStats by_source = group_stats(evidence.source, evidence.csls);
    const GroupStats by_target = group_stats(evidence.target, evidence.csls);
    const GroupStats ortho_by_source = group_stats(evidence.source, evidence.orthographic);
    const RunScale csls = run_scale(evidence.csls), cosine = run_scale(evidence.cosine);
    const RunScale alignment = run_scale(evidence.word_alignment);
    // Suffixes: _q a quantile among the run's candidates, _s a margin in units of the run's spread (RunScale).
    static const char* const names[] = {"csls_q",
                                        "cosine_q",
                                        "csls_below_source_best_s",
                                        "csls_below_target_best_s",
                                        "source_rank",
                                        "target_rank",
                                        "csls_above_runner_up_s",
                                        "orthographic",
                                        "ortho_below_source_best",
                                        "identical",
                                        "word_alignment_q",
                                        "same_word_count",
                                        "word_count_difference",
                                        "log_length_ratio",
                                        "multi_word_source",
                                        "reverse_rank",
                                        "orthographic_if_single_word",
                                        "word_alignment_if_multi_word_q",
                                        "csls_if_multi_word_q"};
    constexpr std::size_t kBase = sizeof names / sizeof names[0];
    std::vector<std::vector<float>> columns(kBase, std::vector<float>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const float value = evidence.csls[i];
      // Margin over the best competitor of the same source: the runner-up if this is the best, else the best.
      const float competitor = by_source.rank[i] == 1 ? by_source.second[i] : by_source.best[i];
      const float words_source = evidence.source_words[i], words_target = evidence.target_words[i];
      const float length_ratio = std::log((1.0f + evidence.source_length[i]) / (1.0f + evidence.target_length[i]));
      const float row[] = {csls.quantile[i], cosine.quantile[i], (value - by_source.best[i]) / csls.spread,
                           (value - by_target.best[i]) / csls.spread, 1.0f / by_source.rank[i],
                           1.0f / by_target.rank[i], (value - competitor) / csls.spread, evidence.orthographic[i],
                           evidence.orthographic[i] - ortho_by_source.best[i],
                           static_cast<float>(evidence.identical[i]), alignment.quantile[i],
                           words_source == words_target ? 1.0f : 0.0f, std::abs(words_source - words_target),
                           std::abs(length_ratio), words_source > 1 ? 1.0f : 0.0f,
                           evidence.reverse_rank[i] > 0 ? 1.0f / evidence.reverse_rank[i] : 0.0f,
                           // Spelling matters most for single words, word-by-word evidence for multi-word terms.
                           words_source == 1 ? evidence.orthographic[i] : 0.0f,
                           words_source > 1 ? alignment.quantile[i] : 0.0f, words_source > 1 ? csls.quantile[i] : 0.0f};
      static_assert(sizeof row / sizeof row[0] == kBase, "one value per feature name");
      for (std::size_t j = 0; j < kBase; ++j) columns[j][i] = row[j];
    }
    for (std::size_t j = 0; j < kBase; ++j) table.add(names[j], std::move(columns[j]));
  }
  if (!evidence.one_to_one.empty()) {
    const RunScale one_to_one = run_scale(evidence.one_to_one);
    table.add("comp_one_to_one_q", one_to_one.quantile);
    add_rank_features(table, "comp_one_to_one", evidence.source, evidence.one_to_one, "source", &one_to_one);
    table.add("comp_translated_share", evidence.translated_share);
    add_rank_features(table, "comp_translated_share", evidence.source, evidence.translated_share, "source");
    table.add("comp_edge_agreement", evidence.edge_agreement);
  }
  if (!evidence.context_similarity.empty()) {
    std::vector<float> ratio(n), sentence_ratio(n), z_difference(n), negative_ratio(n);
    for (std::size_t i = 0; i < n; ++i) {
      ratio[i] = std::abs(evidence.source_log_frequency[i] - evidence.target_log_frequency[i]);
      sentence_ratio[i] = std::abs(evidence.source_log_sentences[i] - evidence.target_log_sentences[i]);
      z_difference[i] = std::abs(evidence.source_frequency_z[i] - evidence.target_frequency_z[i]);
      negative_ratio[i] = -ratio[i];
    }
    table.add("freq_log_ratio", ratio);
    table.add("freq_sentence_log_ratio", sentence_ratio);
    table.add("freq_source_z", evidence.source_frequency_z);
    table.add("freq_target_z", evidence.target_frequency_z);
    table.add("freq_z_difference", z_difference);
    add_rank_features(table, "freq_closeness", evidence.source, negative_ratio, "source");
    const RunScale context = run_scale(evidence.context_similarity);
    table.add("context_cosine_q", context.quantile);
    add_rank_features(table, "context_cosine", evidence.source, evidence.context_similarity, "source",
                      &context);
    add_rank_features(table, "context_cosine", evidence.target, evidence.context_similarity, "target",
                      &context);
    table.add("context_z_by_source", group_z(evidence.source, evidence.context_similarity));
  }
  return table.build();
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
  Eigen::VectorXd scores(features_matrix.rows());
  if (learner != Learner::logistic) {
    const std::vector<float> margins = predict_boosted_trees(booster, features_matrix, threads);
    for (Eigen::Index i = 0; i < scores.size(); ++i) scores(i) = margins[static_cast<std::size_t>(i)];
    return scores;
  }
  const Eigen::MatrixXd x = features_matrix.cast<double>();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    scores(i) = bias + ((x.row(i).transpose() - mean).cwiseQuotient(scale)).dot(weights);
  }
  return scores;
}

Eigen::VectorXd Reranker::score(const FeatureTable& table, const std::string& origin, int threads,
                                Eigen::Index block_rows) const {
  // In blocks of rows: the model's columns of millions of candidates, and XGBoost's own copy of them, would each
  // take as much memory as the table.
  // At least one block, so that an empty table still checks the model's columns.
  const Eigen::Index n = table.values.rows(), block = std::max<Eigen::Index>(block_rows, 1);
  Eigen::VectorXd scores(n);
  Eigen::Index begin = 0;
  do {
    const Eigen::Index rows = std::min(block, n - begin);
    scores.segment(begin, rows) = score(table.select(features, origin, begin, rows), threads);
    begin += rows;
  } while (begin < n);
  return scores;
}

Matrix Reranker::contributions(const Matrix& features_matrix, int threads) const {
  if (learner != Learner::logistic) return boosted_trees_contributions(booster, features_matrix, threads);
  const Eigen::Index f = features_matrix.cols();
  Matrix parts(features_matrix.rows(), f + 1);
  for (Eigen::Index i = 0; i < features_matrix.rows(); ++i) {
    for (Eigen::Index j = 0; j < f; ++j)
      parts(i, j) = static_cast<float>(weights(j) * (features_matrix(i, j) - mean(j)) / scale(j));
    parts(i, f) = static_cast<float>(bias);
  }
  return parts;
}

Reranker train_logistic(const Matrix& features_matrix, const std::vector<std::string>& names,
                        const std::vector<std::uint8_t>& labels, double l2) {
  const Eigen::Index n = features_matrix.rows(), f = features_matrix.cols();
  TERMALIGN_CHECK(static_cast<std::size_t>(n) == labels.size(), "one label per candidate");
  TERMALIGN_CHECK(static_cast<std::size_t>(f) == names.size(), "one name per feature");
  Reranker model;
  model.features = names;
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
  if (model.learner != Learner::logistic) {
    std::string text = std::string(kTreesHeader) + "\nlearner " + to_string(model.learner) + "\nfeatures";
    for (const std::string& name : model.features) text += " " + name;
    return text + "\n" + model.booster + "\n";
  }
  std::string text = std::string(kLogisticHeader) + "\n";
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

Reranker parse_reranker(const std::string& text, const std::string& origin) {
  std::istringstream stream(text);
  std::string line;
  Reranker model;
  if (std::getline(stream, line) && line == kTreesHeader) {
    std::string word, name;
    if (!std::getline(stream, line) || !(std::istringstream(line) >> word >> name) || word != "learner") {
      throw_input_error(origin, 2, "expected 'learner trees' or 'learner ranking'.");
    }
    model.learner = parse_learner(name);
    if (model.learner == Learner::logistic) throw_input_error(origin, 2, "a trees model cannot be 'logistic'.");
    if (!std::getline(stream, line) || !(std::istringstream(line) >> word) || word != "features") {
      throw_input_error(origin, 3, "expected 'features NAME...'.");
    }
    std::istringstream names(line.substr(8));
    while (names >> name) model.features.push_back(name);
    const std::size_t offset = static_cast<std::size_t>(stream.tellg());
    model.booster = text.substr(std::min(offset, text.size()));
    while (!model.booster.empty() && std::isspace(static_cast<unsigned char>(model.booster.back())))
      model.booster.pop_back();
    if (model.features.empty() || model.booster.find('{') == std::string::npos) {
      throw_input_error(origin, 4, "expected the feature names and the XGBoost model (JSON).");
    }
    return model;
  }
  if (line != kLogisticHeader) throw_input_error(origin, 1, "not a termalign re-ranker model (bad header).");
  std::vector<double> means, scales, weights;
  for (std::size_t number = 2;; ++number) {
    std::string name;
    double a = 0, b = 0, c = 0;
    if (!std::getline(stream, line)) throw_input_error(origin, number, "expected 'bias VALUE' at the end.");
    std::istringstream fields(line);
    if (!(fields >> name)) throw_input_error(origin, number, "expected 'feature mean scale weight'.");
    if (name == "bias") {
      if (!(fields >> model.bias)) throw_input_error(origin, number, "expected 'bias VALUE'.");
      break;
    }
    if (!(fields >> a >> b >> c)) throw_input_error(origin, number, "expected 'feature mean scale weight'.");
    if (!(b > 0)) throw_input_error(origin, number, "the scale must be positive.");
    model.features.push_back(name);
    means.push_back(a), scales.push_back(b), weights.push_back(c);
  }
  const auto f = static_cast<Eigen::Index>(means.size());
  model.mean = Eigen::Map<Eigen::VectorXd>(means.data(), f);
  model.scale = Eigen::Map<Eigen::VectorXd>(scales.data(), f);
  model.weights = Eigen::Map<Eigen::VectorXd>(weights.data(), f);
  return model;
}

Reranker load_reranker(const std::string& path) { return parse_reranker(read_file(path), path); }

Reranker bundled_reranker(bool with_corpora) {
  return parse_reranker(
      std::string(detail::bundled_model_text(with_corpora)),
      with_corpora ? "bundled models/reranker-enfr-corpus.txt" : "bundled models/reranker-enfr.txt");
}

namespace {

// Whether the run computed the corpus groups (it had both corpora): the bundled corpus model applies.
bool has_corpus_features(const FeatureTable& table) {
  return std::any_of(table.names.begin(), table.names.end(),
                     [](const std::string& name) { return feature_group(name).rfind("corpus", 0) == 0; });
}

}  // namespace

std::string reranker_origin(const std::string& setting, const FeatureTable& table) {
  if (setting != kDefaultReranker) return setting;
  return has_corpus_features(table) ? "bundled models/reranker-enfr-corpus.txt" : "bundled models/reranker-enfr.txt";
}

Reranker configured_reranker(const std::string& setting, const FeatureTable& table) {
  TERMALIGN_CHECK(setting != kNoReranker, "a re-ranker is configured");
  if (setting != kDefaultReranker) return load_reranker(setting);
  // The corpus model where the corpus features are there; the model without them otherwise.
  return bundled_reranker(has_corpus_features(table));
}

Eigen::VectorXd rerank(const CandidateEvidence& evidence, const AlignConfig& config) {
  const FeatureTable table = candidate_feature_table(evidence);
  const Reranker model = configured_reranker(config.input.reranker, table);
  const std::string origin = reranker_origin(config.input.reranker, table);
  logger().info("re-ranking {} candidates with {} ({}, {} features)", evidence.size(), origin,
                to_string(model.learner), model.features.size());
  return model.score(table, origin, config.scoring.threads);
}

}  // namespace termalign
