#include "termalign/reranker.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <unordered_map>

#include "detail/bundled_models.h"
#include "detail/key_groups.h"
#include "termalign/boosted_trees.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/io.h"
#include "termalign/logging.h"
#include "termalign/parallel.h"

namespace termalign {

namespace {

constexpr const char* kLogisticHeader = "termalign-reranker 1";
constexpr const char* kTreesHeader = "termalign-reranker-trees 1";
constexpr const char* kStagesHeader = "termalign-reranker-stages 2";
constexpr const char* kSecondStageLine = "second stage";

// The blocks of rows that a table of `rows` rows is filled in, on the threads.
constexpr std::size_t kRowBlock = 65536;

void for_row_blocks(std::size_t rows, int threads, const std::function<void(std::size_t, std::size_t)>& body) {
  parallel_for((rows + kRowBlock - 1) / kRowBlock, threads,
               [&](std::size_t block) { body(block * kRowBlock, std::min(rows, (block + 1) * kRowBlock)); });
}

// Each candidate's 1-based rank by `values` (descending; ties by candidate order) within its group, and each
// group's best and second-best values (by group id; the second is the best in a group of one).
struct GroupStats {
  const std::vector<std::uint32_t>* group = nullptr;
  std::vector<float> rank;          // by candidate
  std::vector<float> best, second;  // by group id
  float best_of(std::size_t i) const { return best[(*group)[i]]; }
  float second_of(std::size_t i) const { return second[(*group)[i]]; }
};

// The candidates by group (detail::group_by_key), then each group's few by value: linear in the candidates,
// where one comparison sort of millions of indices took seconds.
GroupStats group_stats(const std::vector<std::uint32_t>& group, const std::vector<float>& values, int threads) {
  const std::size_t n = group.size();
  const std::size_t groups = n ? std::size_t{*std::max_element(group.begin(), group.end())} + 1 : 0;
  detail::KeyGroups by_group = detail::group_by_key(n, groups, [&](std::size_t i) { return group[i]; });
  std::vector<std::uint32_t>& order = by_group.order;
  GroupStats stats{&group, std::vector<float>(n), std::vector<float>(groups), std::vector<float>(groups)};
  constexpr std::size_t kGroupBlock = 16384;
  parallel_for((groups + kGroupBlock - 1) / kGroupBlock, threads, [&](std::size_t block) {
    for (std::size_t g = block * kGroupBlock; g < std::min(groups, (block + 1) * kGroupBlock); ++g) {
      const auto begin = order.begin() + static_cast<std::ptrdiff_t>(by_group.begin(g));
      const auto end = order.begin() + static_cast<std::ptrdiff_t>(by_group.end(g));
      if (begin == end) continue;
      std::sort(begin, end, [&](std::uint32_t x, std::uint32_t y) {
        return values[x] != values[y] ? values[x] > values[y] : x < y;
      });
      stats.best[g] = values[*begin];
      stats.second[g] = end - begin > 1 ? values[*(begin + 1)] : stats.best[g];
      for (auto it = begin; it != end; ++it) stats.rank[*it] = static_cast<float>(it - begin + 1);
    }
  });
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

// A float's bits as an unsigned integer in the float's order (-0 as +0, so that they tie as the floats do).
std::uint32_t ordered_bits(float value) {
  if (value == 0) value = 0;
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

RunScale run_scale(const std::vector<float>& values, int threads) {
  const std::size_t n = values.size();
  RunScale scale;
  scale.quantile.assign(n, 0.0f);
  if (n < 2) return scale;
  // Ascending value, ties by index: one sort of 64-bit keys (value's bits, index), in halves on two threads.
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = std::uint64_t{ordered_bits(values[i])} << 32 | i;
  const auto middle = keys.begin() + static_cast<std::ptrdiff_t>(n / 2);
  run_both([&] { std::sort(keys.begin(), middle); }, [&] { std::sort(middle, keys.end()); }, threads);
  std::inplace_merge(keys.begin(), middle, keys.end());
  const auto at = [&](std::size_t position) { return static_cast<std::uint32_t>(keys[position]); };
  const double last = static_cast<double>(n - 1);
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin;
    while (end < n && values[at(end)] == values[at(begin)]) ++end;
    if (end == begin) ++end;  // a NaN equals nothing, itself included: its own group
    const float q = static_cast<float>(0.5 * static_cast<double>(begin + end - 1) / last);
    for (std::size_t i = begin; i < end; ++i) scale.quantile[at(i)] = q;
    begin = end;
  }
  const float iqr = values[at((3 * (n - 1)) / 4)] - values[at((n - 1) / 4)];
  scale.spread = iqr > 0 ? iqr : 1.0f;
  return scale;
}

// The table's columns, given by functions that fill a block of rows of one column or of a few adjacent ones;
// any range of rows is filled in blocks on the threads, straight into its table (no column is held beside it).
class TableBuilder {
 public:
  // Fills rows [first, end) of its columns; row i's first column at out[(i - first) * stride], the next after it.
  using Fill = std::function<void(std::size_t first, std::size_t end, float* out, std::size_t stride)>;

  TableBuilder(std::size_t rows, int threads) : rows_(rows), threads_(threads) {}

  // Columns named `names`, side by side, filled together.
  void add(std::vector<std::string> names, Fill fill) {
    offsets_.push_back(names_.size());
    names_.insert(names_.end(), names.begin(), names.end());
    fills_.push_back(std::move(fill));
  }
  // A column of values by candidate, kept by the builder.
  void add(const std::string& name, std::vector<float> column) {
    auto values = std::make_shared<const std::vector<float>>(std::move(column));
    add_view(name, *values);
    kept_.push_back(std::move(values));
  }
  // A column of values by candidate that outlive the builder (the evidence's).
  void add_view(const std::string& name, const std::vector<float>& values) {
    TERMALIGN_CHECK(values.size() == rows_, "every candidate has a value of each evidence column");
    add({name}, [&values](std::size_t first, std::size_t end, float* out, std::size_t stride) {
      for (std::size_t i = first; i < end; ++i) out[(i - first) * stride] = values[i];
    });
  }
  // A column of a value by candidate, computed as the table is filled.
  void add_by_row(const std::string& name, std::function<float(std::size_t)> value) {
    add({name}, [value = std::move(value)](std::size_t first, std::size_t end, float* out, std::size_t stride) {
      for (std::size_t i = first; i < end; ++i) out[(i - first) * stride] = value(i);
    });
  }

  const std::vector<std::string>& names() const { return names_; }
  std::size_t rows() const { return rows_; }

  // Rows [first, end) of the table.
  FeatureTable build(std::size_t first, std::size_t end) const {
    FeatureTable table;
    const std::size_t columns = names_.size();
    table.names = names_;
    table.values.resize(static_cast<Eigen::Index>(end - first), static_cast<Eigen::Index>(columns));
    for_row_blocks(end - first, threads_, [&](std::size_t block_first, std::size_t block_end) {
      for (std::size_t f = 0; f < fills_.size(); ++f)
        fills_[f](first + block_first, first + block_end,
                  table.values.data() + block_first * columns + offsets_[f], columns);
    });
    return table;
  }

 private:
  std::size_t rows_;
  int threads_;
  std::vector<std::string> names_;
  std::vector<std::size_t> offsets_;  // by fill: its first column
  std::vector<Fill> fills_;
  std::vector<std::shared_ptr<const std::vector<float>>> kept_;
};

// A candidate's margin below the best value of its group, and 1 / its rank in the group. With a run scale, the
// margin is in its spreads (name suffix _s).
void add_rank_features(TableBuilder& table, const std::string& prefix, const std::vector<std::uint32_t>& group,
                       const std::vector<float>& values, const std::string& group_name, int threads,
                       const RunScale* scale = nullptr) {
  auto stats = std::make_shared<const GroupStats>(group_stats(group, values, threads));
  const float spread = scale ? scale->spread : 1.0f;
  table.add_by_row(prefix + "_below_" + group_name + "_best" + (scale ? "_s" : ""),
                   [stats, &values, spread](std::size_t i) { return (values[i] - stats->best_of(i)) / spread; });
  table.add_by_row(prefix + "_" + group_name + "_rank", [stats](std::size_t i) { return 1.0f / stats->rank[i]; });
}

// Nested terms' support of each candidate, from the first stage's scores: `parts` the best score among the
// candidates that pair a part of its source term with a part of its target term, `wholes` the best among those
// that pair terms holding them; kNoNestedPair where there is none.
constexpr float kNoNestedPair = -20.0f;
struct NestedSupport {
  std::vector<float> parts, wholes;
};
NestedSupport nested_support(const CandidateEvidence& evidence, const std::vector<float>& scores) {
  const std::size_t n = evidence.size();
  NestedSupport support{std::vector<float>(n, kNoNestedPair), std::vector<float>(n, kNoNestedPair)};
  if (evidence.source_parts.empty() || evidence.target_parts.empty()) return support;
  // Only candidates of two terms that are parts can be looked up: a sorted index of those alone (at 130k x 290k
  // terms, millions of candidates, most of whose terms are parts of none).
  const auto part_of_some = [](const std::vector<std::vector<std::uint32_t>>& parts) {
    std::vector<std::uint8_t> is_part(parts.size(), 0);
    for (const auto& term_parts : parts)
      for (const std::uint32_t part : term_parts) is_part[part] = 1;
    return is_part;
  };
  const std::vector<std::uint8_t> source_is_part = part_of_some(evidence.source_parts),
                                  target_is_part = part_of_some(evidence.target_parts);
  const auto key = [](std::uint32_t s, std::uint32_t t) { return (std::uint64_t(s) << 32) | t; };
  std::vector<std::pair<std::uint64_t, std::uint32_t>> index;
  for (std::size_t i = 0; i < n; ++i) {
    if (source_is_part[evidence.source[i]] && target_is_part[evidence.target[i]])
      index.emplace_back(key(evidence.source[i], evidence.target[i]), static_cast<std::uint32_t>(i));
  }
  std::sort(index.begin(), index.end());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& source_parts = evidence.source_parts[evidence.source[i]];
    const auto& target_parts = evidence.target_parts[evidence.target[i]];
    for (const std::uint32_t p : source_parts) {
      for (const std::uint32_t q : target_parts) {
        const auto found = std::lower_bound(index.begin(), index.end(), std::pair{key(p, q), std::uint32_t{0}});
        if (found == index.end() || found->first != key(p, q)) continue;
        support.parts[i] = std::max(support.parts[i], scores[found->second]);
        support.wholes[found->second] = std::max(support.wholes[found->second], scores[i]);
      }
    }
  }
  return support;
}

// The first stage's columns (stage_feature_names), from its scores of every candidate.
void add_stage_columns(TableBuilder& table, const CandidateEvidence& evidence, const Eigen::VectorXd& first_scores,
                       int threads) {
  TERMALIGN_CHECK(static_cast<std::size_t>(first_scores.size()) == evidence.size(), "one score per candidate");
  auto scores = std::make_shared<std::vector<float>>(evidence.size());
  for (std::size_t i = 0; i < scores->size(); ++i)
    (*scores)[i] = static_cast<float>(first_scores(Eigen::Index(i)));
  table.add_by_row("stage1_score", [scores](std::size_t i) { return (*scores)[i]; });
  for (const auto& [group, name] :
       {std::pair{&evidence.source, "source"}, std::pair{&evidence.target, "target"}}) {
    auto stats = std::make_shared<const GroupStats>(group_stats(*group, *scores, threads));
    table.add_by_row(std::string("stage1_") + name + "_rank",
                     [stats](std::size_t i) { return 1.0f / stats->rank[i]; });
    table.add_by_row(std::string("stage1_below_") + name + "_best",
                     [stats, scores](std::size_t i) { return (*scores)[i] - stats->best_of(i); });
    // Over the best other candidate: the runner-up for the best, the best for the others.
    table.add_by_row(std::string("stage1_above_") + name + "_other", [stats, scores](std::size_t i) {
      return (*scores)[i] - (stats->rank[i] == 1 ? stats->second_of(i) : stats->best_of(i));
    });
  }
  auto nested = std::make_shared<const NestedSupport>(nested_support(evidence, *scores));
  table.add_by_row("stage1_nested_parts_best", [nested](std::size_t i) { return nested->parts[i]; });
  table.add_by_row("stage1_nested_wholes_best", [nested](std::size_t i) { return nested->wholes[i]; });
}

// The model's scores of rows [0, n), `block` (> 0) rows at a time (at least one block, so that an empty run still
// checks the model's columns): columns(first, end) gives the model's columns of those rows. Neither the model's
// columns of millions of candidates nor XGBoost's copy of them is held whole.
Eigen::VectorXd score_in_blocks(const Reranker& model, std::size_t n, std::size_t block, int threads,
                                const std::function<Matrix(std::size_t, std::size_t)>& columns) {
  Eigen::VectorXd scores(static_cast<Eigen::Index>(n));
  Progress progress("re-ranking, candidates", n);
  std::size_t first = 0;
  do {
    const std::size_t end = std::min(n, first + block);
    scores.segment(static_cast<Eigen::Index>(first), static_cast<Eigen::Index>(end - first)) =
        model.score(columns(first, end), threads);
    progress.advance(end - first);
    first = end;
  } while (first < n);
  progress.finish();
  return scores;
}

}  // namespace

Matrix FeatureTable::select(const std::vector<std::string>& wanted, const std::string& origin) const {
  return select(wanted, origin, 0, values.rows());
}

Matrix FeatureTable::select(const std::vector<std::string>& wanted, const std::string& origin, Eigen::Index first,
                            Eigen::Index rows) const {
  std::vector<Eigen::Index> column(wanted.size());
  for (std::size_t j = 0; j < wanted.size(); ++j) {
    const auto found = std::find(names.begin(), names.end(), wanted[j]);
    if (found == names.end()) {
      const std::string group = feature_group(wanted[j]);
      const std::string cause =
          group.rfind("corpus", 0) == 0
              ? " (it needs the corpora: --src-corpus, --tgt-corpus); use a model trained without it."
          : group == "first-stage"
              ? " (a first stage's column: two-stage models score with score_candidates)."
              : "; use a model trained without it. Models trained before the similarities became run-relative "
                "(features such as 'csls', now 'csls_q') must be trained again with `termalign train-reranker`.";
      throw_input_error(origin, 0,
                        "the model uses the feature '" + wanted[j] + "', which this run does not compute" + cause);
    }
    column[j] = found - names.begin();
  }
  if (wanted == names) return values.middleRows(first, rows);  // the model's columns are the run's: one copy
  // Row by row: the table is row-major, and a column copy would stride through all of it once per column.
  Matrix selected(rows, static_cast<Eigen::Index>(wanted.size()));
  for (Eigen::Index r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < column.size(); ++j)
      selected(r, static_cast<Eigen::Index>(j)) = values(first + r, column[j]);
  return selected;
}

bool FeatureTable::has(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string feature_group(const std::string& name) {
  if (name.rfind("comp_", 0) == 0) return "compositional";
  if (name.rfind("freq_", 0) == 0) return "corpus-frequency";
  if (name.rfind("context_", 0) == 0) return "corpus-context";
  if (name.rfind("stage1_", 0) == 0) return "first-stage";
  return "base";
}

namespace {

// Every candidate's features: the run-wide statistics (ranks within groups, run quantiles and spreads) computed
// once, and the table's columns filled from them and the evidence for any range of rows. The evidence must outlive
// it. Re-ranking fills a block of rows at a time: at 3.5M candidates the whole table is 360 MB.
class CandidateFeatures {
 public:
  CandidateFeatures(const CandidateEvidence& evidence, int threads);
  CandidateFeatures(const CandidateFeatures&) = delete;
  CandidateFeatures& operator=(const CandidateFeatures&) = delete;

  const std::vector<std::string>& names() const { return table_.names(); }
  const TableBuilder& builder() const { return table_; }
  FeatureTable rows(std::size_t first, std::size_t end) const { return table_.build(first, end); }
  FeatureTable all() const { return rows(0, table_.rows()); }

 private:
  TableBuilder table_;
  GroupStats by_source_, by_target_, ortho_by_source_;
  RunScale csls_, cosine_, alignment_;
  std::vector<float> negative_ratio_;
};

CandidateFeatures::CandidateFeatures(const CandidateEvidence& evidence, int threads)
    : table_(evidence.size(), threads) {
  const std::size_t n = evidence.size();
  Progress progress("features, candidates", n);
  TableBuilder& table = table_;
  // The run-wide statistics, two at a time; the columns are filled from them in blocks of rows.
  const std::function<void()> statistics[] = {
      [&] { by_source_ = group_stats(evidence.source, evidence.csls, 1); },
      [&] { by_target_ = group_stats(evidence.target, evidence.csls, 1); },
      [&] { ortho_by_source_ = group_stats(evidence.source, evidence.orthographic, 1); },
      [&] { csls_ = run_scale(evidence.csls, 1); },
      [&] { cosine_ = run_scale(evidence.cosine, 1); },
      [&] { alignment_ = run_scale(evidence.word_alignment, 1); }};
  parallel_for(std::size(statistics), threads, [&](std::size_t task) { statistics[task](); });
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
  const auto base_row = [this, &evidence](std::size_t i, float* row) {
    const GroupStats &by_source = by_source_, &by_target = by_target_, &ortho_by_source = ortho_by_source_;
    const RunScale &csls = csls_, &cosine = cosine_, &alignment = alignment_;
    const float value = evidence.csls[i];
    // Margin over the best competitor of the same source: the runner-up if this is the best, else the best.
    const float competitor = by_source.rank[i] == 1 ? by_source.second_of(i) : by_source.best_of(i);
    const float words_source = evidence.source_words[i], words_target = evidence.target_words[i];
    const float length_ratio = std::log((1.0f + evidence.source_length[i]) / (1.0f + evidence.target_length[i]));
    const float values[] = {csls.quantile[i], cosine.quantile[i], (value - by_source.best_of(i)) / csls.spread,
                            (value - by_target.best_of(i)) / csls.spread, 1.0f / by_source.rank[i],
                            1.0f / by_target.rank[i], (value - competitor) / csls.spread, evidence.orthographic[i],
                            evidence.orthographic[i] - ortho_by_source.best_of(i),
                            static_cast<float>(evidence.identical[i]), alignment.quantile[i],
                            words_source == words_target ? 1.0f : 0.0f, std::abs(words_source - words_target),
                            std::abs(length_ratio), words_source > 1 ? 1.0f : 0.0f,
                            evidence.reverse_rank[i] > 0 ? 1.0f / evidence.reverse_rank[i] : 0.0f,
                            // Spelling matters most for single words, word-by-word evidence for multi-word terms.
                            words_source == 1 ? evidence.orthographic[i] : 0.0f,
                            words_source > 1 ? alignment.quantile[i] : 0.0f,
                            words_source > 1 ? csls.quantile[i] : 0.0f};
    static_assert(sizeof values / sizeof values[0] == kBase, "one value per feature name");
    std::copy(std::begin(values), std::end(values), row);
  };
  table.add(std::vector<std::string>(std::begin(names), std::end(names)),
            [base_row](std::size_t first, std::size_t end, float* out, std::size_t stride) {
              for (std::size_t i = first; i < end; ++i) base_row(i, out + (i - first) * stride);
            });
  // A target's closest spelling among its candidates: the source side's is in the base row.
  add_rank_features(table, "ortho", evidence.target, evidence.orthographic, "target", threads);
  if (!evidence.one_to_one.empty()) {
    RunScale one_to_one = run_scale(evidence.one_to_one, threads);
    table.add("comp_one_to_one_q", std::move(one_to_one.quantile));
    add_rank_features(table, "comp_one_to_one", evidence.source, evidence.one_to_one, "source", threads,
                      &one_to_one);
    add_rank_features(table, "comp_one_to_one", evidence.target, evidence.one_to_one, "target", threads,
                      &one_to_one);
    table.add_view("comp_translated_share", evidence.translated_share);
    add_rank_features(table, "comp_translated_share", evidence.source, evidence.translated_share, "source",
                      threads);
    table.add_view("comp_edge_agreement", evidence.edge_agreement);
    table.add_view("comp_seed_share", evidence.seed_share);
    add_rank_features(table, "comp_seed_share", evidence.source, evidence.seed_share, "source", threads);
    add_rank_features(table, "comp_seed_share", evidence.target, evidence.seed_share, "target", threads);
    table.add_view("comp_seed_conflict", evidence.seed_conflict);
  }
  if (!evidence.context_similarity.empty()) {
    std::vector<float> ratio(n), sentence_ratio(n), z_difference(n);
    negative_ratio_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      ratio[i] = std::abs(evidence.source_log_frequency[i] - evidence.target_log_frequency[i]);
      sentence_ratio[i] = std::abs(evidence.source_log_sentences[i] - evidence.target_log_sentences[i]);
      z_difference[i] = std::abs(evidence.source_frequency_z[i] - evidence.target_frequency_z[i]);
      negative_ratio_[i] = -ratio[i];
    }
    table.add("freq_log_ratio", std::move(ratio));
    table.add("freq_sentence_log_ratio", std::move(sentence_ratio));
    table.add_view("freq_source_z", evidence.source_frequency_z);
    table.add_view("freq_target_z", evidence.target_frequency_z);
    table.add("freq_z_difference", std::move(z_difference));
    add_rank_features(table, "freq_closeness", evidence.source, negative_ratio_, "source", threads);
    RunScale context = run_scale(evidence.context_similarity, threads);
    table.add("context_cosine_q", std::move(context.quantile));
    add_rank_features(table, "context_cosine", evidence.source, evidence.context_similarity, "source", threads,
                      &context);
    add_rank_features(table, "context_cosine", evidence.target, evidence.context_similarity, "target", threads,
                      &context);
    table.add("context_z_by_source", group_z(evidence.source, evidence.context_similarity));
  }
  progress.advance(n);
  progress.finish();
}

}  // namespace

FeatureTable candidate_feature_table(const CandidateEvidence& evidence, int threads) {
  return CandidateFeatures(evidence, threads).all();
}

const std::vector<std::string>& stage_feature_names() {
  static const std::vector<std::string> names = [] {
    TableBuilder table(0, 1);
    add_stage_columns(table, CandidateEvidence{}, Eigen::VectorXd(), 1);
    return table.names();
  }();
  return names;
}

FeatureTable stage_feature_table(const CandidateEvidence& evidence, const Eigen::VectorXd& first_scores,
                                 int threads) {
  TableBuilder table(evidence.size(), threads);
  add_stage_columns(table, evidence, first_scores, threads);
  return table.build(0, evidence.size());
}

FeatureTable with_stage_columns(const FeatureTable& table, const CandidateEvidence& evidence,
                                const Eigen::VectorXd& first_scores, int threads) {
  const FeatureTable stage = stage_feature_table(evidence, first_scores, threads);
  FeatureTable joined;
  joined.names = table.names;
  joined.names.insert(joined.names.end(), stage.names.begin(), stage.names.end());
  joined.values.resize(table.values.rows(), table.values.cols() + stage.values.cols());
  joined.values << table.values, stage.values;
  return joined;
}

FeatureTable with_stage_features(const Reranker& model, const CandidateEvidence& evidence,
                                 const FeatureTable& table, const std::string& origin, int threads) {
  if (!model.first_stage) return table;
  return with_stage_columns(table, evidence, model.first_stage->score(table, origin, threads), threads);
}

namespace {

// score_candidates with the candidates' features computed.
Eigen::VectorXd score_features(const Reranker& model, const CandidateFeatures& features,
                               const CandidateEvidence& evidence, const std::string& origin, int threads) {
  // A block of rows at a time: the block's table, the model's columns of it, and XGBoost's copy of them.
  constexpr std::size_t kScoreBlock = std::size_t{1} << 18;
  const auto score_table = [&](const Reranker& stage, const TableBuilder& table) {
    return score_in_blocks(stage, evidence.size(), kScoreBlock, threads, [&](std::size_t first, std::size_t end) {
      return table.build(first, end).select(stage.features, origin);
    });
  };
  if (!model.first_stage) return score_table(model, features.builder());
  TableBuilder both = features.builder();
  add_stage_columns(both, evidence, score_table(*model.first_stage, features.builder()), threads);
  return score_table(model, both);
}

}  // namespace

Eigen::VectorXd score_candidates(const Reranker& model, const CandidateEvidence& evidence,
                                 const std::string& origin, int threads) {
  return score_features(model, CandidateFeatures(evidence, threads), evidence, origin, threads);
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
  const auto block = static_cast<std::size_t>(std::max<Eigen::Index>(block_rows, 1));
  return score_in_blocks(*this, static_cast<std::size_t>(table.values.rows()), block, threads,
                         [&](std::size_t first, std::size_t end) {
                           return table.select(features, origin, static_cast<Eigen::Index>(first),
                                               static_cast<Eigen::Index>(end - first));
                         });
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
    throw_if_interrupted();
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

namespace {

constexpr const char* kRevisionLine = "feature revision ";

// Each line after "# ", its control characters (a line end in a file name) as '?', so that it stays one line.
std::string format_provenance(const Reranker& model) {
  std::string text;
  for (std::string line : model.provenance) {
    for (char& c : line)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
    text += "# " + line + "\n";
  }
  return text;
}

// One stage's text: its learner, features and weights or trees (neither its provenance nor a first stage).
std::string format_stage(const Reranker& model) {
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

}  // namespace

std::string format_reranker(const Reranker& model) {
  // The file's provenance is the model's: a stage's own is not written (the file could not be read back).
  if (!model.first_stage) return format_provenance(model) + format_stage(model);
  return format_provenance(model) + kStagesHeader + "\n" + format_stage(*model.first_stage) + kSecondStageLine +
         "\n" + format_stage(model);
}

void save_reranker(const std::string& path, const Reranker& model) {
  write_file_atomically(path, format_reranker(model));
}

namespace {

// The end (one past its closing brace) of the JSON object that starts at text[begin] ('{'), or npos when it does
// not close: braces are counted outside strings.
std::size_t json_object_end(const std::string& text, std::size_t begin) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

bool blank(const std::string& text, std::size_t from = 0) {
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(std::min(from, text.size())), text.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

// One stage's text (a model of one stage), its first line being line `first_line` of `origin`; `stage` names it
// in messages ("" for a one-stage model).
Reranker parse_stage(const std::string& text, const std::string& origin, std::size_t first_line,
                     const std::string& stage) {
  const auto fail = [&](std::size_t line, const std::string& message) {
    throw_input_error(origin, first_line - 1 + line, stage + message);
  };
  std::istringstream stream(text);
  std::string line;
  Reranker model;
  std::getline(stream, line);
  if (line == kStagesHeader) fail(1, "a model has at most two stages.");
  if (line == kTreesHeader) {
    std::string word, name;
    if (!std::getline(stream, line) || !(std::istringstream(line) >> word >> name) || word != "learner")
      fail(2, "expected 'learner trees' or 'learner ranking'.");
    if (name != to_string(Learner::trees) && name != to_string(Learner::ranking))
      fail(2, "unknown learner '" + name + "' (a trees model is 'trees' or 'ranking').");
    model.learner = parse_learner(name);
    std::istringstream names;
    if (!std::getline(stream, line) || !((names.str(line), names) >> word) || word != "features")
      fail(3, "expected 'features NAME...'.");
    while (names >> name) model.features.push_back(name);
    if (model.features.empty()) fail(3, "expected 'features NAME...': the model names no feature.");
    const std::size_t json = static_cast<std::size_t>(stream.tellg());
    const std::size_t json_end =
        text.compare(std::min(json, text.size()), 1, "{") == 0 ? json_object_end(text, json) : std::string::npos;
    if (json_end == std::string::npos) fail(4, "expected the XGBoost model (one JSON object) from this line.");
    if (!blank(text, json_end)) {  // the line of the first character after the JSON
      const std::size_t next = text.find_first_not_of(" \t\r\n\v\f", json_end);
      const std::size_t after =
          4 + static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(json),
                                                  text.begin() + static_cast<std::ptrdiff_t>(next), '\n'));
      fail(after, "text after the XGBoost model (a two-stage model needs its first line '" +
                      std::string(kStagesHeader) + "').");
    }
    model.booster = text.substr(json, json_end - json);
    BoostedTreesInfo info;
    try {
      info = inspect_boosted_trees(model.booster);
    } catch (const Error& error) {
      fail(4, std::string("not an XGBoost model: ") + error.what());
    }
    if (info.features != model.features.size())
      fail(3, "the line names " + std::to_string(model.features.size()) +
                  " features, but its XGBoost model reads " + std::to_string(info.features) + ".");
    if (!info.names.empty() && info.names != model.features) {
      std::size_t j = 0;
      while (info.names[j] == model.features[j]) ++j;
      fail(3, "feature " + std::to_string(j + 1) + " is '" + model.features[j] +
                  "', but its XGBoost model was trained on '" + info.names[j] + "' there.");
    }
    return model;
  }
  if (line != kLogisticHeader) fail(1, "not a termalign re-ranker model (bad header).");
  std::vector<double> means, scales, weights;
  for (std::size_t number = 2;; ++number) {
    std::string name, extra;
    double a = 0, b = 0, c = 0;
    if (!std::getline(stream, line)) fail(number, "expected 'bias VALUE' at the end.");
    std::istringstream fields(line);
    if (!(fields >> name)) fail(number, "expected 'feature mean scale weight'.");
    if (name == "bias") {
      if (!(fields >> model.bias) || fields >> extra) fail(number, "expected 'bias VALUE'.");
      for (std::size_t after = number + 1; std::getline(stream, line); ++after)
        if (!blank(line)) fail(after, "text after the bias, the model's last line.");
      break;
    }
    if (!(fields >> a >> b >> c) || fields >> extra) fail(number, "expected 'feature mean scale weight'.");
    if (!(b > 0)) fail(number, "the scale must be positive.");
    model.features.push_back(name);
    means.push_back(a), scales.push_back(b), weights.push_back(c);
  }
  const auto f = static_cast<Eigen::Index>(means.size());
  model.mean = Eigen::Map<Eigen::VectorXd>(means.data(), f);
  model.scale = Eigen::Map<Eigen::VectorXd>(scales.data(), f);
  model.weights = Eigen::Map<Eigen::VectorXd>(weights.data(), f);
  return model;
}

// A model's text from its header on, the header being line 1 + `skipped` of `origin`.
Reranker parse_body(const std::string& text, const std::string& origin, std::size_t skipped) {
  const std::size_t first_end = text.find('\n');
  if (text.compare(0, first_end, kStagesHeader) != 0) return parse_stage(text, origin, 1 + skipped, "");
  const std::string marker = std::string("\n") + kSecondStageLine + "\n";
  const std::size_t first_begin = first_end + 1, split = text.find(marker, first_end);
  if (split == std::string::npos) {
    throw_input_error(
        origin, 0, std::string("a two-stage model needs a line '") + kSecondStageLine + "' between its stages.");
  }
  const std::size_t second_line =
      2 + 1 +
      static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(first_begin),
                                          text.begin() + static_cast<std::ptrdiff_t>(split + 1), '\n'));
  Reranker first =
      parse_stage(text.substr(first_begin, split + 1 - first_begin), origin, 2 + skipped, "first stage: ");
  Reranker model =
      parse_stage(text.substr(split + marker.size()), origin, second_line + skipped, "second stage: ");
  model.first_stage = std::make_shared<const Reranker>(std::move(first));
  return model;
}

}  // namespace

Reranker parse_reranker(const std::string& whole_text, const std::string& origin) {
  // The provenance: lines "# ..." before the header (after a byte order mark, as in every text input).
  std::vector<std::string> provenance;
  int revision = 0;
  std::size_t begin = whole_text.compare(0, kUtf8Bom.size(), kUtf8Bom) == 0 ? kUtf8Bom.size() : 0;
  while (begin < whole_text.size() && whole_text[begin] == '#') {
    const std::size_t end = std::min(whole_text.find('\n', begin), whole_text.size());
    std::string line = whole_text.substr(begin, end - begin);
    line.erase(0, line.compare(0, 2, "# ") == 0 ? 2 : 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF file then fails at its header
    if (line.rfind(kRevisionLine, 0) == 0) {
      const std::string number = line.substr(std::strlen(kRevisionLine));
      char* stop = nullptr;
      const long value = std::strtol(number.c_str(), &stop, 10);
      if (number.empty() || *stop != '\0' || value <= 0 || value > 1000000)
        throw_input_error(origin, provenance.size() + 1,
                          "expected '# feature revision N' (N a positive integer).");
      if (revision != 0) throw_input_error(origin, provenance.size() + 1, "a second '# feature revision' line.");
      revision = static_cast<int>(value);
    }
    provenance.push_back(std::move(line));
    begin = end + 1;
  }
  const std::size_t skipped = provenance.size();
  Reranker model = parse_body(whole_text.substr(std::min(begin, whole_text.size())), origin, skipped);
  model.provenance = std::move(provenance);
  model.feature_revision = revision;
  return model;
}

Reranker load_reranker(const std::string& path) {
  Reranker model = parse_reranker(read_file(path), path);
  // One warning per file as it is: a run loads its model in its checks, then to score (and explain once more).
  static std::mutex warned_mutex;
  static std::set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(warned_mutex);
    if (model.feature_revision == kFeatureRevision || !warned.insert(path + "\n" + file_signature(path)).second)
      return model;
  }
  if (model.feature_revision == 0) {
    logger().warn(
        "{}: the model does not say which revision of the features it was trained on (no '# feature revision' "
        "line: trained before termalign recorded it, or written by hand); if an earlier termalign "
        "trained it, some features may mean something else now and its ranking be off: train it again with "
        "train-reranker",
        path);
  } else if (model.feature_revision != kFeatureRevision) {
    logger().warn(
        "{}: the model was trained on feature revision {}, but this termalign computes revision {}: some "
        "features mean something else now, and its ranking will be off; train it again with this train-reranker",
        path, model.feature_revision, kFeatureRevision);
  }
  return model;
}

Reranker bundled_reranker(bool with_corpora) {
  return parse_reranker(
      std::string(detail::bundled_model_text(with_corpora)),
      with_corpora ? "bundled models/reranker-enfr-corpus.txt" : "bundled models/reranker-enfr.txt");
}

const std::string* first_corpus_feature(const std::vector<std::string>& names) {
  const auto found = std::find_if(names.begin(), names.end(), [](const std::string& name) {
    return feature_group(name).rfind("corpus", 0) == 0;
  });
  return found == names.end() ? nullptr : &*found;
}

namespace {

// Whether the run computed the corpus groups (it had both corpora): the bundled corpus model applies.
bool has_corpus_features(const std::vector<std::string>& names) { return first_corpus_feature(names) != nullptr; }

std::string origin_of(const std::string& setting, const std::vector<std::string>& names) {
  if (setting != kDefaultReranker) return setting;
  return has_corpus_features(names) ? "bundled models/reranker-enfr-corpus.txt" : "bundled models/reranker-enfr.txt";
}

Reranker model_of(const std::string& setting, const std::vector<std::string>& names) {
  TERMALIGN_CHECK(setting != kNoReranker, "a re-ranker is configured");
  if (setting != kDefaultReranker) return load_reranker(setting);
  // The corpus model where the corpus features are there; the model without them otherwise.
  return bundled_reranker(has_corpus_features(names));
}

}  // namespace

std::string reranker_origin(const std::string& setting, const FeatureTable& table) {
  return origin_of(setting, table.names);
}

Reranker configured_reranker(const std::string& setting, const FeatureTable& table) {
  return model_of(setting, table.names);
}

Eigen::VectorXd rerank(const CandidateEvidence& evidence, const AlignConfig& config) {
  const int threads = config.scoring.threads;
  const CandidateFeatures features(evidence, threads);
  const Reranker model = model_of(config.input.reranker, features.names());
  const std::string origin = origin_of(config.input.reranker, features.names());
  logger().info("re-ranking {} candidates with {} ({}, {} stage{}, {} features)", evidence.size(), origin,
                to_string(model.learner), model.stages(), model.stages() > 1 ? "s" : "", model.features.size());
  return score_features(model, features, evidence, origin, threads);
}

}  // namespace termalign
