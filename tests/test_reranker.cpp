#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "captured_log.h"
#include "evaluation/explain.h"
#include "io/io.h"
#include "rerank/boosted_trees.h"
#include "rerank/features.h"
#include "rerank/reranker.h"
#include "rerank/training.h"
#include "shared_data.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"

using namespace termalign;

namespace {

// Four of the feature table's names, for the columns of synthetic(): a model file names features the table knows.
const std::vector<std::string> kFourFeatures = {"csls_q", "cosine_q", "orthographic", "identical"};

// Rows whose label is 1 when exactly one of x0, x1 exceeds 0.5 (an interaction no linear model represents), plus
// two noise columns.
void synthetic(std::size_t rows, std::uint32_t seed, Matrix& x, std::vector<std::uint8_t>& labels) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(0, 1);
  x.resize(static_cast<Eigen::Index>(rows), 4);
  labels.resize(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    for (Eigen::Index j = 0; j < 4; ++j) x(r, j) = uniform(generator);
    labels[i] = (x(r, 0) > 0.5f) != (x(r, 1) > 0.5f);
  }
}

// Share of (positive, negative) pairs ordered right by the scores (AUC).
double auc(const Eigen::VectorXd& scores, const std::vector<std::uint8_t>& labels) {
  double right = 0, pairs = 0;
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::size_t j = 0; j < labels.size(); ++j)
      if (labels[i] && !labels[j]) {
        pairs += 1;
        right += scores(static_cast<Eigen::Index>(i)) > scores(static_cast<Eigen::Index>(j));
      }
  return right / pairs;
}

// Candidate i's target rank, spelling identity, word counts and lengths: fixed patterns of its index.
void add_term_sizes(CandidateEvidence& evidence, std::size_t i) {
  evidence.reverse_rank.push_back(static_cast<float>(i % 12));
  evidence.identical.push_back(i % 50 == 0);
  evidence.source_words.push_back(static_cast<std::uint16_t>(1 + i % 3));
  evidence.target_words.push_back(static_cast<std::uint16_t>(1 + i % 2));
  evidence.source_length.push_back(static_cast<std::uint16_t>(5 + i % 9));
  evidence.target_length.push_back(static_cast<std::uint16_t>(6 + i % 7));
}

// `n` candidates of distinct pairs over a few terms with every evidence column the features read (the corpus
// columns with `corpora`), at random in [-0.2, 0.8].
CandidateEvidence full_evidence(std::size_t n, std::uint32_t seed, bool corpora) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-0.2f, 0.8f);
  CandidateEvidence evidence;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(static_cast<std::uint32_t>(i % 37));
    evidence.target.push_back(static_cast<std::uint32_t>(i % 41));
    for (auto* column : {&evidence.csls, &evidence.cosine, &evidence.word_alignment, &evidence.one_to_one,
                         &evidence.translated_share, &evidence.edge_agreement, &evidence.seed_share,
                         &evidence.seed_conflict, &evidence.orthographic})
      column->push_back(uniform(generator));
    if (corpora) {
      for (auto* column :
           {&evidence.source_log_frequency, &evidence.target_log_frequency, &evidence.source_log_sentences,
            &evidence.target_log_sentences, &evidence.source_frequency_z, &evidence.target_frequency_z,
            &evidence.context_similarity})
        column->push_back(uniform(generator));
    }
    add_term_sizes(evidence, i);
  }
  return evidence;
}

}  // namespace

TEST_CASE("boosted trees learn an interaction, and their saved model scores the same", "[reranker]") {
  Matrix train, test;
  std::vector<std::uint8_t> train_labels, test_labels;
  synthetic(1000, 1, train, train_labels);
  synthetic(300, 2, test, test_labels);
  const std::vector<std::string> names = kFourFeatures;
  double trees_auc = 0;
  for (const Learner learner : {Learner::trees, Learner::ranking}) {
    Reranker model;
    model.learner = learner;
    model.features = names;
    BoostedTreesOptions options;
    options.objective = learner == Learner::ranking ? "rank:pairwise" : "binary:logistic";
    options.rounds = 60;
    model.booster = train_boosted_trees(train, train_labels, options);
    const Eigen::VectorXd scores = model.score(test, 2);
    CHECK(auc(scores, test_labels) > 0.95);
    if (learner == Learner::trees) trees_auc = auc(scores, test_labels);
    // The same on one thread, and after a round trip through the file format.
    CHECK(model.score(test, 1) == scores);
    const Reranker loaded = parse_reranker(format_reranker(model), "(test)");
    CHECK(loaded.learner == learner);
    CHECK(loaded.features == names);
    CHECK(loaded.score(test, 2) == scores);
    // Each row's contributions (SHAP values and the bias) sum to its score.
    const Matrix parts = model.contributions(test, 2);
    REQUIRE(parts.cols() == 5);
    for (Eigen::Index i = 0; i < parts.rows(); ++i) CHECK(parts.row(i).sum() == Approx(scores(i)).margin(1e-4));
  }
  // The logistic regression cannot represent the interaction: about chance.
  const Reranker logistic = train_logistic(train, names, train_labels, 1.0);
  CHECK(auc(logistic.score(test), test_labels) < 0.7);
  CHECK(trees_auc > 0.95);
}

TEST_CASE("re-ranker models: the earlier logistic format is read, a table gives the model its columns",
          "[reranker]") {
  const Reranker model = parse_reranker("termalign-reranker 1\ncosine_q 1 2 3\ncsls_q 0 1 -1\nbias 0.5\n", "(v1)");
  REQUIRE(model.features == std::vector<std::string>{"cosine_q", "csls_q"});
  FeatureTable table;
  table.names = {"csls_q", "orthographic", "cosine_q"};
  table.values = Matrix(1, 3);
  table.values << 2.0f, 100.0f, 5.0f;
  // 0.5 + 3 (5 - 1) / 2 - (2 - 0) / 1 = 4.5, whatever the table's order and extra columns.
  CHECK(model.score(table, "(v1)")(0) == Approx(4.5));
  FeatureTable missing;
  missing.names = {"csls_q"};
  missing.values = Matrix(1, 1);
  CHECK_THROWS_WITH(model.score(missing, "model.txt"), Catch::Contains("model.txt") &&
                                                           Catch::Contains("'cosine_q'") &&
                                                           Catch::Contains("does not compute"));
  // A corpus feature: the cause is the missing corpora.
  const Reranker corpus = parse_reranker("termalign-reranker 1\nfreq_log_ratio 0 1 1\nbias 0\n", "(corpus)");
  CHECK_THROWS_WITH(corpus.score(missing, "corpus.txt"), Catch::Contains("needs the corpora"));
  CHECK_THROWS_WITH(parse_reranker("something else\n", "x.txt"), Catch::Contains("x.txt:1"));
  CHECK_THROWS_WITH(parse_reranker("termalign-reranker 1\ncsls_q 1 2 3\n", "y.txt"), Catch::Contains("bias"));
}

TEST_CASE("a model file that is damaged is an input error naming its file and line, before any scoring",
          "[reranker]") {
  Matrix x;
  std::vector<std::uint8_t> labels;
  synthetic(300, 3, x, labels);
  const std::vector<std::string> names = kFourFeatures;
  BoostedTreesOptions options;
  options.rounds = 5;
  Reranker trees;
  trees.learner = Learner::trees;
  trees.features = names;
  trees.booster = train_boosted_trees(x, labels, options, names);
  CHECK(inspect_boosted_trees(trees.booster).names == names);  // the model keeps its columns' names
  const std::string text = format_reranker(trees);             // header, learner, features, JSON
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    REQUIRE(changed.find(from) != std::string::npos);
    return changed.replace(changed.find(from), from.size(), to);
  };
  const auto rejected = [](const std::string& bad, const std::string& where, const std::string& what) {
    CHECK_THROWS_WITH(parse_reranker(bad, "m.txt"), Catch::Contains(where) && Catch::Contains(what));
  };
  rejected(replaced("learner trees", "learner forest"), "m.txt:2", "unknown learner 'forest'");
  rejected(replaced("features csls_q cosine_q", "features cosine_q csls_q"), "m.txt:3",
           "feature 1 is 'cosine_q', but its XGBoost model was trained on 'csls_q' there");
  rejected(replaced("features csls_q cosine_q orthographic identical", "features csls_q cosine_q orthographic"),
           "m.txt:3", "names 3 features, but its XGBoost model reads 4");
  rejected(text.substr(0, text.size() / 2), "m.txt:4", "one JSON object");  // cut in the JSON
  rejected(replaced("\"learner\"", "\"learner\" 1,"), "m.txt:4", "not an XGBoost model");
  rejected(text + "second stage\n" + text, "m.txt:5", "two-stage model needs its first line");
  CHECK(parse_reranker(replaced("features csls_q", "features  csls_q"), "m.txt").features ==
        names);  // spacing is free
  // Logistic: a line after the bias, a field too many.
  const std::string logistic = "termalign-reranker 1\ncsls_q 1 2 3\nbias 0.5\n";
  rejected(logistic + "c 1 2 3\n", "m.txt:4", "text after the bias");
  rejected("termalign-reranker 1\ncsls_q 1 2 3 4\nbias 0.5\n", "m.txt:2", "expected 'feature mean scale weight'");
  CHECK(parse_reranker(logistic + "\n", "m.txt").features == std::vector<std::string>{"csls_q"});
  // Two stages: line numbers count from the file's first line.
  Reranker two = trees;
  two.first_stage = std::make_shared<const Reranker>(trees);
  const std::string both = format_reranker(two);
  const std::size_t second = both.find("second stage\n") + 13;
  std::string bad_second = both;
  bad_second.replace(bad_second.find("learner trees", second), 13, "learner forest");
  const auto line_of = [&](std::size_t offset) {
    return 1 + static_cast<std::size_t>(
                   std::count(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
  };
  rejected(bad_second, "m.txt:" + std::to_string(line_of(second) + 1), "second stage: unknown learner");
}

TEST_CASE("a model file naming a feature the feature table does not hold is refused, naming it and its line",
          "[reranker]") {
  const auto refused = [](const std::string& text, const std::string& where, const std::string& what) {
    CHECK_THROWS_WITH(parse_reranker(text, "m.txt"), Catch::Contains(where) && Catch::Contains(what));
  };
  // A name of the features before they became run-relative, after a provenance line.
  refused("# made by hand\ntermalign-reranker 1\ncsls_q 0 1 1\ncsls 0 1 1\nbias 0\n", "m.txt:4",
          "unknown feature 'csls'");
  refused("termalign-reranker 1\ncsls 0 1 1\nbias 0\n", "m.txt:2",
          "trained again with `termalign train-reranker`");
  // Trees: on the features line, before XGBoost is asked.
  Matrix x;
  std::vector<std::uint8_t> labels;
  synthetic(200, 4, x, labels);
  Reranker trees;
  trees.learner = Learner::trees;
  trees.features = kFourFeatures;
  BoostedTreesOptions options;
  options.rounds = 3;
  trees.booster = train_boosted_trees(x, labels, options, kFourFeatures);
  std::string text = format_reranker(trees);
  text.replace(text.find("orthographic"), 12, "spelling");
  refused(text, "m.txt:3", "unknown feature 'spelling'");
  // A first stage's column is a second stage's input only.
  refused("termalign-reranker 1\nstage1_score 0 1 1\nbias 0\n", "m.txt:2",
          "'stage1_score' is a first stage's column");
  const std::string stage = "termalign-reranker 1\nstage1_score 0 1 1\nbias 0\n";
  const std::string first = "termalign-reranker 1\ncsls_q 0 1 1\nbias 0\n";
  CHECK(parse_reranker("termalign-reranker-stages 2\n" + first + "second stage\n" + stage, "m.txt").features ==
        std::vector<std::string>{"stage1_score"});
  refused("termalign-reranker-stages 2\n" + stage + "second stage\n" + stage, "m.txt:3",
          "first stage: the feature 'stage1_score' is a first stage's column");
  // load_reranker names the file.
  const std::string path =
      (std::filesystem::temp_directory_path() / "termalign_test_unknown_feature.txt").string();
  std::ofstream(path) << "termalign-reranker 1\ncsls 0 1 1\nbias 0\n";
  CHECK_THROWS_WITH(load_reranker(path), Catch::Contains(path + ":2: unknown feature 'csls'"));
  std::filesystem::remove(path);
}

TEST_CASE("the feature table: unique names, each computed in its group, and the columns explain writes",
          "[reranker]") {
  std::set<std::string_view> names;
  std::vector<std::string> evidence_names, stage_names;
  for (const detail::Feature& feature : detail::feature_list()) {
    INFO(feature.name);
    CHECK(names.insert(feature.name).second);
    CHECK(feature_group(std::string(feature.name)) == detail::to_string(feature.group));
    (feature.group == detail::FeatureGroup::first_stage ? stage_names : evidence_names).emplace_back(feature.name);
  }
  CHECK(feature_group("csls").empty());
  // The full evidence gives every feature but the first stage's, in the table's order; the first stage gives the
  // rest. Without the corpora, no corpus feature; without the compositional evidence, the base group alone.
  CandidateEvidence evidence = full_evidence(300, 3, true);
  CHECK(candidate_feature_table(evidence, 2).names == evidence_names);
  CHECK(stage_feature_names() == stage_names);
  evidence = full_evidence(300, 3, false);
  const FeatureTable table = candidate_feature_table(evidence, 2);
  CHECK(first_corpus_feature(table.names) == nullptr);
  CHECK(table.has("comp_seed_conflict"));
  CandidateEvidence base = evidence;
  base.one_to_one.clear();
  for (const std::string& name : candidate_feature_table(base, 1).names) CHECK(feature_group(name) == "base");
  // Explain writes, for each feature of the model (the bundled one without corpora), its table column's value.
  CandidateSet candidates;
  for (std::uint32_t term = 0; term < 41; ++term) {
    candidates.source_terms.terms.push_back("source " + std::to_string(term));
    candidates.target_terms.terms.push_back("target " + std::to_string(term));
  }
  candidates.evidence = evidence;
  std::vector<RankedIndex> ranked;
  for (std::size_t i = 0; i < evidence.size(); i += 7)
    ranked.push_back({evidence.source[i], evidence.target[i], static_cast<float>(i)});
  const AlignConfig config;
  const Explanation explanation = explain_ranking(candidates, ranked, config);
  const Reranker model = bundled_reranker(false);
  const FeatureTable columns = with_stage_features(model, evidence, table, "bundled", 1);
  const auto first = std::find(explanation.columns.begin(), explanation.columns.end(), "reranker_bias");
  REQUIRE(first != explanation.columns.end());
  const auto at = static_cast<std::size_t>(first - explanation.columns.begin()) + 1;
  REQUIRE(explanation.columns.size() == at + 2 * model.features.size());
  for (std::size_t j = 0; j < model.features.size(); ++j) {
    const std::string& name = model.features[j];
    INFO(name);
    REQUIRE(detail::find_feature(name) != nullptr);
    CHECK(explanation.columns[at + 2 * j] == "feature:" + name);
    CHECK(explanation.columns[at + 2 * j + 1] == "contribution:" + name);
    const auto column = std::find(columns.names.begin(), columns.names.end(), name) - columns.names.begin();
    for (std::size_t r = 0; r < ranked.size(); ++r)
      CHECK(explanation.values(Eigen::Index(r), Eigen::Index(at + 2 * j)) ==
            columns.values(Eigen::Index(7 * r), column));
  }
}

TEST_CASE("the bundled models are built in and read their features", "[reranker]") {
  for (const bool with_corpora : {false, true}) {
    const Reranker model = bundled_reranker(with_corpora);
    CHECK_FALSE(model.features.empty());
    bool corpus_feature = false;
    for (const std::string& name : model.features) corpus_feature |= feature_group(name).rfind("corpus", 0) == 0;
    CHECK(corpus_feature == with_corpora);
    // Both stages' trees keep their feature names, so that load_reranker checks the `features` line by name.
    for (const Reranker* stage : {&model, model.first_stage.get()}) {
      REQUIRE(stage != nullptr);
      CHECK(inspect_boosted_trees(stage->booster).names == stage->features);
    }
  }
}

TEST_CASE("features do not change when a vector space scores on another scale", "[reranker]") {
  // Two runs whose similarities differ by an increasing affine map (another vector space, another scale) give the
  // same features: quantiles among the candidates, margins in units of the spread, ranks.
  std::mt19937 generator(7);
  std::uniform_real_distribution<float> uniform(-0.2f, 0.8f);
  std::uniform_int_distribution<std::uint32_t> term(0, 40);
  CandidateEvidence evidence;
  const std::size_t n = 500;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(term(generator));
    evidence.target.push_back(term(generator));
    for (auto* column : {&evidence.csls, &evidence.cosine, &evidence.word_alignment, &evidence.one_to_one,
                         &evidence.translated_share, &evidence.edge_agreement, &evidence.seed_share,
                         &evidence.seed_conflict, &evidence.orthographic})
      column->push_back(uniform(generator));
    evidence.csls.back() = std::round(evidence.csls.back() * 20) / 20;  // ties share their quantile
    add_term_sizes(evidence, i);
  }
  CandidateEvidence rescaled = evidence;
  for (auto* column : {&rescaled.csls, &rescaled.cosine, &rescaled.word_alignment, &rescaled.one_to_one})
    for (float& value : *column) value = 0.25f * value + 0.5f;  // exact in binary: the same order and ties
  const FeatureTable table = candidate_feature_table(evidence), other = candidate_feature_table(rescaled);
  REQUIRE(table.names == other.names);
  CHECK(table.has("csls_q"));
  CHECK(table.has("comp_one_to_one_below_source_best_s"));
  CHECK_FALSE(table.has("csls"));
  for (Eigen::Index j = 0; j < table.values.cols(); ++j) {
    INFO(table.names[static_cast<std::size_t>(j)]);
    CHECK((table.values.col(j) - other.values.col(j)).cwiseAbs().maxCoeff() < 1e-5f);
  }
  // The quantiles span [0, 1] (cosine: no ties) and follow the values' order; equal values share one (csls).
  const auto column = [&](const char* name) {
    return std::find(table.names.begin(), table.names.end(), name) - table.names.begin();
  };
  CHECK(table.values.col(column("cosine_q")).minCoeff() == 0.0f);
  CHECK(table.values.col(column("cosine_q")).maxCoeff() == 1.0f);
  const Eigen::Index q = column("csls_q");
  for (std::size_t a = 0; a < n; a += 7) {
    for (std::size_t b = 0; b < n; b += 11) {
      const float qa = table.values(static_cast<Eigen::Index>(a), q),
                  qb = table.values(static_cast<Eigen::Index>(b), q);
      if (evidence.csls[a] < evidence.csls[b]) CHECK(qa < qb);
      if (evidence.csls[a] == evidence.csls[b]) CHECK(qa == qb);
    }
  }
  // The bundled model's first stage reads this table; scored in blocks of 7 rows (a last block of 3), the scores
  // are the same.
  const Reranker bundled = bundled_reranker(false);
  REQUIRE(bundled.stages() == 2);
  const Reranker& model = *bundled.first_stage;
  const Eigen::VectorXd whole = model.score(table, "bundled", 1);
  const Eigen::VectorXd blocks = model.score(table, "bundled", 2, 7);
  REQUIRE(blocks.size() == static_cast<Eigen::Index>(n));
  CHECK((whole - blocks).cwiseAbs().maxCoeff() == 0.0);
  CHECK(whole.maxCoeff() > whole.minCoeff());
  // Both stages give the rescaled run the same scores: the first stage's columns are as scale-free as its inputs.
  const Eigen::VectorXd both = score_candidates(bundled, evidence, "bundled", 2);
  CHECK((both - score_candidates(bundled, rescaled, "bundled", 2)).cwiseAbs().maxCoeff() < 1e-4);
  CHECK((both - whole).cwiseAbs().maxCoeff() > 0);  // the second stage changes them
}

TEST_CASE("feature ranks and quantiles agree with brute force, on any thread count", "[reranker]") {
  // Enough candidates for several of the table's row blocks (65,536 rows), few groups, many ties: the ranks within
  // a source's and a target's candidates (ties by candidate order), the margins below the group's best and the run
  // quantiles (ties share their mean rank), counted pair by pair on a sample of rows.
  std::mt19937 generator(11);
  std::uniform_int_distribution<std::uint32_t> source(0, 900), target(0, 2500), level(0, 60);
  CandidateEvidence evidence;
  const std::size_t n = 150000;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(source(generator));
    evidence.target.push_back(target(generator));
    evidence.csls.push_back(static_cast<float>(level(generator)) / 64 - 0.4f);  // exact, many ties
    // Signed: a level of 0 gives +0 and -0, which tie.
    evidence.cosine.push_back((i % 2 ? 1.0f : -1.0f) * static_cast<float>(level(generator)) / 32);
    evidence.word_alignment.push_back(static_cast<float>(level(generator)) / 16);
    evidence.orthographic.push_back(static_cast<float>(level(generator)) / 60);
    add_term_sizes(evidence, i);
  }
  const FeatureTable one = candidate_feature_table(evidence, 1), two = candidate_feature_table(evidence, 2);
  REQUIRE(one.names == two.names);
  CHECK(one.values == two.values);
  const auto column = [&](const char* name) {
    const auto found = std::find(one.names.begin(), one.names.end(), name);
    REQUIRE(found != one.names.end());
    return found - one.names.begin();
  };
  const Eigen::Index source_rank = column("source_rank"), target_rank = column("target_rank"),
                     below = column("ortho_below_source_best"), csls_q = column("csls_q"),
                     cosine_q = column("cosine_q");
  for (std::size_t i = 0; i < n; i += 997) {
    std::size_t by_source = 1, by_target = 1, csls_below = 0, csls_equal = 0, cosine_below = 0, cosine_equal = 0;
    float best_spelling = evidence.orthographic[i];
    for (std::size_t j = 0; j < n; ++j) {
      const bool before = evidence.csls[j] > evidence.csls[i] || (evidence.csls[j] == evidence.csls[i] && j < i);
      by_source += evidence.source[j] == evidence.source[i] && before;
      by_target += evidence.target[j] == evidence.target[i] && before;
      if (evidence.source[j] == evidence.source[i])
        best_spelling = std::max(best_spelling, evidence.orthographic[j]);
      csls_below += evidence.csls[j] < evidence.csls[i];
      csls_equal += evidence.csls[j] == evidence.csls[i];
      cosine_below += evidence.cosine[j] < evidence.cosine[i];
      cosine_equal += evidence.cosine[j] == evidence.cosine[i];  // -0 equals +0
    }
    const auto row = static_cast<Eigen::Index>(i);
    INFO("candidate " << i);
    CHECK(one.values(row, source_rank) == 1.0f / static_cast<float>(by_source));
    CHECK(one.values(row, target_rank) == 1.0f / static_cast<float>(by_target));
    CHECK(one.values(row, below) == evidence.orthographic[i] - best_spelling);
    // Mean 0-based rank of the tied run over n - 1.
    const auto quantile = [&](std::size_t below_count, std::size_t equal_count) {
      return static_cast<float>(0.5 * static_cast<double>(2 * below_count + equal_count - 1) /
                                static_cast<double>(n - 1));
    };
    CHECK(one.values(row, csls_q) == quantile(csls_below, csls_equal));
    CHECK(one.values(row, cosine_q) == quantile(cosine_below, cosine_equal));
  }
}

TEST_CASE("train_reranker's held-out list is ranked, keeps each source term in one fold and scores its AP",
          "[reranker][training]") {
  const std::string source = TERMALIGN_SOURCE_DIR;
  std::string gold_path;
  AlignConfig config =
      termalign_tests::dataset_config(source + "/models/sample", "vec", source + "/data/sample", gold_path);
  config.input.reranker = "none";
  RerankerTrainingOptions options;
  options.gold = gold_path;
  options.folds = 3;
  options.learner = "logistic";
  const RerankerTrainingResult result = train_reranker(config, options);
  // Two stages by default: the first stage's cross-validated AP is reported beside the model's.
  CHECK(result.model.stages() == 2);
  CHECK(result.model.first_stage->features.size() + stage_feature_names().size() == result.model.features.size());
  CHECK(result.one_stage_ap > 0.5);
  REQUIRE_FALSE(result.held_out.empty());
  CHECK(result.held_out.size() <= result.candidates);
  std::map<std::string, std::uint32_t> fold_of;
  PairList ranked;
  std::size_t gold_rows = 0;
  for (std::size_t i = 0; i < result.held_out.size(); ++i) {
    const HeldOutScore& row = result.held_out[i];
    if (i > 0) CHECK(row.score <= result.held_out[i - 1].score);
    CHECK(row.fold < options.folds);
    CHECK(fold_of.emplace(row.source, row.fold).first->second == row.fold);
    ranked.pairs.emplace_back(row.source, row.target);
    gold_rows += row.gold;
  }
  // The list is capped as align's; its gold flags are the gold's.
  const PairList gold = read_pairs(gold_path, PairFileKind::gold);
  const std::set<std::pair<std::string, std::string>> gold_set(gold.pairs.begin(), gold.pairs.end());
  std::size_t flagged = 0;
  for (const HeldOutScore& row : result.held_out)
    flagged += row.gold == (gold_set.count({row.source, row.target}) != 0);
  CHECK(flagged == result.held_out.size());
  CHECK(gold_rows <= result.positives);
  CHECK(result.held_out.size() <= std::size_t{10 * (184 + 552) / 2});  // the BUCC cap of the sample
  // The list's AP is the cross-validated AP the training reports.
  const TermList src_terms = read_term_list(config.input.src_terms),
                 tgt_terms = read_term_list(config.input.tgt_terms);
  CHECK(evaluate(gold, ranked, &src_terms, &tgt_terms, EvaluationOptions{}).ap ==
        Approx(result.cross_validated_ap).margin(1e-12));
  // The TSV: a header, then one line per pair with its rank.
  const std::string tsv = format_held_out(result);
  CHECK(tsv.rfind("rank\tsource\ttarget\tgold\tfold\tscore\n1\t" + result.held_out[0].source + "\t", 0) == 0);
  CHECK(static_cast<std::size_t>(std::count(tsv.begin(), tsv.end(), '\n')) == result.held_out.size() + 1);
  // One stage: the cross-validated AP is the first stage's (the same folds, so the same figure as above).
  options.stages = 1;
  const RerankerTrainingResult single = train_reranker(config, options);
  CHECK(single.model.stages() == 1);
  CHECK(single.cross_validated_ap == single.one_stage_ap);
  CHECK(single.one_stage_ap == Approx(result.one_stage_ap).margin(1e-12));
  options.stages = 3;
  CHECK_THROWS_WITH(train_reranker(config, options), Catch::Contains("1 or 2 stages"));
  // The model records how it was made: the feature revision, the recipe, its inputs by contents, the options.
  CHECK(result.model.feature_revision == kFeatureRevision);
  const auto recorded = [&](const std::string& line) {
    return std::find(result.model.provenance.begin(), result.model.provenance.end(), line) !=
           result.model.provenance.end();
  };
  CHECK(recorded("feature revision " + std::to_string(kFeatureRevision)));
  CHECK(recorded("input gold: terms-en-fr.txt, " + std::to_string(std::filesystem::file_size(gold_path)) +
                 " bytes, " + file_fingerprint(gold_path)));
  CHECK(recorded("option input.reranker = 'none'"));
  const auto recipe = std::find_if(result.model.provenance.begin(), result.model.provenance.end(),
                                   [](const std::string& line) { return line.rfind("recipe:", 0) == 0; });
  REQUIRE(recipe != result.model.provenance.end());
  CHECK_THAT(*recipe, Catch::Contains("learner logistic, 2 stages, 3 folds") && Catch::Contains("fold seed 1"));
  const Reranker read = parse_reranker(format_reranker(result.model), "(trained)");
  CHECK(read.provenance == result.model.provenance);
  CHECK(read.feature_revision == kFeatureRevision);
  CHECK(read.features == result.model.features);
}

TEST_CASE("a model's provenance lines are kept, counted in line numbers, and its feature revision checked",
          "[reranker]") {
  const std::string logistic = "termalign-reranker 1\ncsls_q 1 2 3\nbias 0.5\n";
  const Reranker model = parse_reranker("# made by hand\n# feature revision 7\n" + logistic, "(p)");
  CHECK(model.provenance == std::vector<std::string>{"made by hand", "feature revision 7"});
  CHECK(model.feature_revision == 7);
  CHECK(format_reranker(model) == "# made by hand\n# feature revision 7\n" + logistic);
  CHECK(parse_reranker(logistic, "(p)").feature_revision == 0);
  // An error after the provenance names the file's own line.
  CHECK_THROWS_WITH(parse_reranker("# a\n# b\ntermalign-reranker 1\ncsls_q 1 2 3 4\nbias 0\n", "m.txt"),
                    Catch::Contains("m.txt:4"));
  CHECK_THROWS_WITH(parse_reranker("# a\n# feature revision x\n" + logistic, "m.txt"),
                    Catch::Contains("m.txt:2") && Catch::Contains("feature revision N"));
  CHECK_THROWS_WITH(parse_reranker("# feature revision 1\n# feature revision 2\n" + logistic, "m.txt"),
                    Catch::Contains("m.txt:2") && Catch::Contains("a second"));
  CHECK(parse_reranker(std::string(kUtf8Bom) + "# x\n" + logistic, "(p)").provenance ==
        std::vector<std::string>{"x"});
  // Only the file's provenance is written, one line each: a stage's own would make the file unreadable, a line
  // end (in a file name) split a line.
  Reranker two = model;
  two.provenance = {"input gold: odd\nname.txt"};
  two.first_stage = std::make_shared<const Reranker>(model);
  const std::string text = format_reranker(two);
  CHECK(text.rfind("# input gold: odd?name.txt\ntermalign-reranker-stages 2\ntermalign-reranker 1\n", 0) == 0);
  const Reranker read = parse_reranker(text, "(two)");
  CHECK(read.provenance == std::vector<std::string>{"input gold: odd?name.txt"});
  CHECK(read.stages() == 2);
  // Loading warns when the model does not say its revision, or says another; not when it is this build's.
  const std::string path = (std::filesystem::temp_directory_path() / "termalign_test_revision.txt").string();
  const auto warnings_loading = [&](const std::string& text) {
    std::ofstream(path) << text;
    CapturedLog log;
    load_reranker(path);
    return log.warnings_with("train it again");
  };
  CHECK(warnings_loading(logistic) == 1);
  {
    CapturedLog log;  // the same file loaded again (a run's checks, then its scoring): no second warning
    load_reranker(path);
    CHECK(log.warnings_with("train it again") == 0);
  }
  CHECK(warnings_loading("# feature revision " + std::to_string(kFeatureRevision + 1) + "\n" + logistic) == 1);
  CHECK(warnings_loading("# feature revision " + std::to_string(kFeatureRevision) + "\n" + logistic) == 0);
  std::filesystem::remove(path);
  // The bundled models are this build's.
  for (const bool with_corpora : {false, true})
    CHECK(bundled_reranker(with_corpora).feature_revision == kFeatureRevision);
}

TEST_CASE("the first stage's columns agree with brute force", "[reranker]") {
  // Small groups with ties: 1 / rank within the source's and the target's candidates (ties by candidate order),
  // the margin below the group's best, and the margin over the best other candidate (0 for a candidate alone).
  std::mt19937 generator(5);
  std::uniform_int_distribution<std::uint32_t> source(0, 60), target(0, 3000), level(0, 20);
  CandidateEvidence evidence;
  const std::size_t n = 3000;
  Eigen::VectorXd scores(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(source(generator));
    evidence.target.push_back(target(generator));
    scores(static_cast<Eigen::Index>(i)) = static_cast<double>(level(generator)) / 4 - 2;  // exact, many ties
  }
  const FeatureTable table = stage_feature_table(evidence, scores, 2);
  REQUIRE(table.names == stage_feature_names());
  CHECK(stage_feature_table(evidence, scores, 1).values == table.values);
  const auto column = [&](const std::string& name) {
    return std::find(table.names.begin(), table.names.end(), name) - table.names.begin();
  };
  std::size_t alone = 0;
  for (const auto& [group, name] :
       {std::pair{&evidence.source, "source"}, std::pair{&evidence.target, "target"}}) {
    for (std::size_t i = 0; i < n; ++i) {
      const double s = scores(static_cast<Eigen::Index>(i));
      std::size_t rank = 1;
      double best = s, best_other = -1e9;
      for (std::size_t j = 0; j < n; ++j) {
        if ((*group)[j] != (*group)[i]) continue;
        const double t = scores(static_cast<Eigen::Index>(j));
        rank += t > s || (t == s && j < i);
        best = std::max(best, t);
        if (j != i) best_other = std::max(best_other, t);
      }
      alone += best_other == -1e9;
      const auto row = static_cast<Eigen::Index>(i);
      INFO(name << " of candidate " << i);
      CHECK(table.values(row, column("stage1_score")) == static_cast<float>(s));
      CHECK(table.values(row, column(std::string("stage1_") + name + "_rank")) == 1.0f / static_cast<float>(rank));
      CHECK(table.values(row, column(std::string("stage1_below_") + name + "_best")) ==
            static_cast<float>(s - best));
      CHECK(table.values(row, column(std::string("stage1_above_") + name + "_other")) ==
            (best_other == -1e9 ? 0.0f : static_cast<float>(s - best_other)));
    }
  }
  CHECK(alone > 0);  // targets with one candidate are among them
}

TEST_CASE("the first stage's nested-term columns agree with brute force", "[reranker]") {
  // Distinct candidates over few terms, each term with random parts (other terms of its list): a candidate's
  // `parts` column is the best score of a candidate pairing a part of its source with a part of its target, its
  // `wholes` column the best of a candidate whose terms hold its two; the sentinel where there is none.
  std::mt19937 generator(11);
  constexpr std::uint32_t kSources = 40, kTargets = 50;
  std::uniform_int_distribution<std::uint32_t> source(0, kSources - 1), target(0, kTargets - 1), count(0, 3),
      level(0, 40);
  CandidateEvidence evidence;
  const auto random_parts = [&](std::uint32_t terms) {
    std::vector<std::vector<std::uint32_t>> parts(terms);
    std::uniform_int_distribution<std::uint32_t> term(0, terms - 1);
    for (std::uint32_t t = 0; t < terms; ++t) {
      for (std::uint32_t k = count(generator); k > 0; --k) {
        const std::uint32_t part = term(generator);
        if (part != t && std::find(parts[t].begin(), parts[t].end(), part) == parts[t].end())
          parts[t].push_back(part);
      }
    }
    return parts;
  };
  evidence.source_parts = random_parts(kSources);
  evidence.target_parts = random_parts(kTargets);
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  std::vector<double> values;
  while (seen.size() < 900) {
    const std::uint32_t s = source(generator), t = target(generator);
    if (!seen.insert({s, t}).second) continue;
    evidence.source.push_back(s);
    evidence.target.push_back(t);
    values.push_back(static_cast<double>(level(generator)) / 8 - 2);
  }
  const std::size_t n = values.size();
  const Eigen::VectorXd scores = Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(n));
  const FeatureTable table = stage_feature_table(evidence, scores, 2);
  REQUIRE(table.names == stage_feature_names());
  const auto column = [&](const std::string& name) {
    return std::find(table.names.begin(), table.names.end(), name) - table.names.begin();
  };
  const auto holds = [](const std::vector<std::uint32_t>& parts, std::uint32_t term) {
    return std::find(parts.begin(), parts.end(), term) != parts.end();
  };
  std::size_t with_parts = 0, with_wholes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float parts = -20.0f, wholes = -20.0f;
    for (std::size_t j = 0; j < n; ++j) {
      if (holds(evidence.source_parts[evidence.source[i]], evidence.source[j]) &&
          holds(evidence.target_parts[evidence.target[i]], evidence.target[j]))
        parts = std::max(parts, static_cast<float>(values[j]));
      if (holds(evidence.source_parts[evidence.source[j]], evidence.source[i]) &&
          holds(evidence.target_parts[evidence.target[j]], evidence.target[i]))
        wholes = std::max(wholes, static_cast<float>(values[j]));
    }
    with_parts += parts > -20.0f;
    with_wholes += wholes > -20.0f;
    INFO("candidate " << i);
    CHECK(table.values(static_cast<Eigen::Index>(i), column("stage1_nested_parts_best")) == parts);
    CHECK(table.values(static_cast<Eigen::Index>(i), column("stage1_nested_wholes_best")) == wholes);
  }
  CHECK(with_parts > 20);
  CHECK(with_wholes > 20);
  // Without the lists' parts (a run without the full evidence) the columns hold the sentinel only.
  evidence.source_parts.clear();
  const FeatureTable none = stage_feature_table(evidence, scores, 1);
  CHECK((none.values.col(column("stage1_nested_parts_best")).array() == -20.0f).all());
}

TEST_CASE("a two-stage model scores candidates as its stages do in turn, and reads back", "[reranker]") {
  std::mt19937 generator(9);
  std::uniform_real_distribution<float> uniform(0, 1);
  std::uniform_int_distribution<std::uint32_t> term(0, 80);
  CandidateEvidence evidence;
  const std::size_t n = 2000;
  std::vector<std::uint8_t> labels;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(term(generator));
    evidence.target.push_back(term(generator));
    for (auto* column : {&evidence.csls, &evidence.cosine, &evidence.word_alignment, &evidence.orthographic})
      column->push_back(uniform(generator));
    add_term_sizes(evidence, i);
    labels.push_back(evidence.csls.back() + 0.3f * uniform(generator) > 0.8f);
  }
  const FeatureTable table = candidate_feature_table(evidence, 2);
  auto first = std::make_shared<const Reranker>(train_logistic(table.values, table.names, labels));
  const Eigen::VectorXd first_scores = first->score(table, "(first)");
  const FeatureTable stage = stage_feature_table(evidence, first_scores, 2);
  Matrix joined(table.values.rows(), table.values.cols() + stage.values.cols());
  joined << table.values, stage.values;
  std::vector<std::string> names = table.names;
  names.insert(names.end(), stage.names.begin(), stage.names.end());
  for (const Learner learner : {Learner::logistic, Learner::trees}) {
    INFO(to_string(learner));
    Reranker model;
    if (learner == Learner::logistic) {
      model = train_logistic(joined, names, labels);
    } else {
      model.learner = learner;
      model.features = names;
      BoostedTreesOptions options;
      options.rounds = 20;
      model.booster = train_boosted_trees(joined, labels, options);
    }
    const Eigen::VectorXd expected = model.score(joined, 1);
    model.first_stage = first;
    CHECK(model.stages() == 2);
    const Eigen::VectorXd scores = score_candidates(model, evidence, "(test)", 2);
    CHECK((scores - expected).cwiseAbs().maxCoeff() < 1e-9);
    const FeatureTable with_stage = with_stage_features(model, evidence, table, "(test)", 2);
    CHECK(with_stage.names == names);
    CHECK(with_stage.values == joined);
    // The text holds both stages: read back, it scores the same.
    const std::string text = format_reranker(model);
    const Reranker loaded = parse_reranker(text, "(two)");
    REQUIRE(loaded.stages() == 2);
    CHECK(format_reranker(loaded) == text);
    CHECK((score_candidates(loaded, evidence, "(two)", 1) - scores).cwiseAbs().maxCoeff() < 1e-9);
    // The second stage alone cannot score a table without the first stage's columns; the first stage can.
    CHECK_THROWS_WITH(model.score(table, "two.txt"), Catch::Contains("two.txt") && Catch::Contains("first stage"));
    CHECK((score_candidates(*first, evidence, "(first)", 2) - first_scores).cwiseAbs().maxCoeff() < 1e-9);
    // A file without the line between the stages, or with a third stage, names itself.
    const std::string header = text.substr(0, text.find('\n') + 1);
    CHECK_THROWS_WITH(parse_reranker(header + format_reranker(*first), "cut.txt"),
                      Catch::Contains("cut.txt") && Catch::Contains("second stage"));
    CHECK_THROWS_WITH(parse_reranker(header + format_reranker(*first) + "second stage\n" + text, "deep.txt"),
                      Catch::Contains("deep.txt") && Catch::Contains("two stages"));
  }
}
