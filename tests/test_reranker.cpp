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
#include "io/io.h"
#include "pipeline/explain.h"
#include "pipeline/reranker_training.h"
#include "rerank/boosted_trees.h"
#include "rerank/features.h"
#include "rerank/reranker.h"
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
