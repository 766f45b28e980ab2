// The BUCC 2022 scorer: every expectation below is computed by hand in the comments, or by the few independent
// lines of the end-to-end test.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/io.h"
#include "termalign/lexicon.h"

using termalign::EvaluationOptions;
using termalign::EvaluationResult;
using termalign::PairList;
using termalign::TermList;

namespace {

PairList pair_list(const std::vector<std::pair<std::string, std::string>>& pairs) {
  PairList list;
  list.path = "in-memory";
  list.pairs = pairs;
  return list;
}

TermList term_list(const std::vector<std::string>& terms) {
  TermList list;
  for (const std::string& term : terms) {
    list.ids.emplace(term, static_cast<std::uint32_t>(list.terms.size()));
    list.terms.push_back(term);
  }
  return list;
}

// Four gold pairs; "miss" pairs are never in the gold.
const PairList gold = pair_list({{"s1", "t1"}, {"s2", "t2"}, {"s3", "t3"}, {"s4", "t4"}});

std::pair<std::string, std::string> miss(int i) { return {"s1", "wrong" + std::to_string(i)}; }

EvaluationResult score(const PairList& predictions, const EvaluationOptions& options = {},
                       const TermList* source_terms = nullptr, const TermList* target_terms = nullptr,
                       std::vector<termalign::CurvePoint>* curve = nullptr) {
  return termalign::evaluate(gold, predictions, source_terms, target_terms, options, curve);
}

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult run(const std::string& command) {
  CommandResult result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace

TEST_CASE("an empty prediction scores 0", "[evaluation]") {
  const auto result = score(pair_list({}));
  CHECK(result.ap == 0);
  CHECK(result.ap_interpolated == 0);
  CHECK(result.n_sys == 0);
  CHECK(result.n_gold == 4);
  CHECK(result.tp == 0);
  CHECK(result.fn == 4);
  CHECK(result.precision == 0);
  CHECK(result.recall == 0);
  CHECK(result.f1 == 0);
  CHECK(result.p_at.at(1) == 0);
  CHECK_FALSE(result.has_cap);
}

TEST_CASE("a perfect list scores 1", "[evaluation]") {
  const auto result = score(pair_list({{"s3", "t3"}, {"s1", "t1"}, {"s4", "t4"}, {"s2", "t2"}}));
  CHECK(result.ap == Approx(1.0));
  CHECK(result.ap_interpolated == Approx(1.0));
  CHECK(result.tp == 4);
  CHECK(result.fp == 0);
  CHECK(result.precision == 1);
  CHECK(result.recall == 1);
  CHECK(result.f1 == 1);
  CHECK(result.p_at.at(1) == 1);
  CHECK(result.p_at.at(10) == Approx(0.4));  // 4 hits, 6 missing lines count as misses
}

TEST_CASE("hits at ranks 1, 3 and 6 with 4 gold pairs", "[evaluation]") {
  std::vector<termalign::CurvePoint> curve;
  const auto result = score(pair_list({{"s1", "t1"}, miss(1), {"s2", "t2"}, miss(2), miss(3), {"s4", "t4"}}), {},
                            nullptr, nullptr, &curve);
  // Precision at the hits: 1/1, 2/3, 3/6, all decreasing, so interpolation changes nothing.
  CHECK(result.ap == Approx((1.0 + 2.0 / 3 + 3.0 / 6) / 4));
  CHECK(result.ap_interpolated == Approx((1.0 + 2.0 / 3 + 3.0 / 6) / 4));
  CHECK(result.n_sys == 6);
  CHECK(result.tp == 3);
  CHECK(result.fp == 3);
  CHECK(result.fn == 1);
  CHECK(result.precision == Approx(0.5));
  CHECK(result.recall == Approx(0.75));
  CHECK(result.f1 == Approx(2 * 0.5 * 0.75 / 1.25));
  SECTION("the curve has one row per rank") {
    REQUIRE(curve.size() == 6);
    CHECK(curve[2].rank == 3);
    CHECK(curve[2].tp == 2);
    CHECK(curve[2].precision == Approx(2.0 / 3));
    CHECK(curve[2].recall == Approx(0.5));
    CHECK(curve[2].f1 == Approx(2 * (2.0 / 3) * 0.5 / (2.0 / 3 + 0.5)));
    CHECK(curve[2].ap == Approx((1.0 + 2.0 / 3) / 4));
    CHECK(curve[4].ap == Approx((1.0 + 2.0 / 3) / 4));
    CHECK(curve[5].ap == Approx(result.ap));
    const std::string tsv = termalign::format_curve(curve);
    CHECK(tsv.rfind("rank\ttp\tprecision\trecall\tf1\tap\n1\t1\t1.000000\t0.250000\t0.400000\t0.250000\n", 0) ==
          0);
    CHECK(std::count(tsv.begin(), tsv.end(), '\n') == 7);
  }
}

TEST_CASE("interpolated AP takes the best precision at that or a later hit", "[evaluation]") {
  // Hits at ranks 2 and 3 of 2 gold pairs: precisions 1/2 and 2/3; interpolated: 2/3 and 2/3.
  const PairList two_gold = pair_list({{"s1", "t1"}, {"s2", "t2"}});
  const auto result =
      termalign::evaluate(two_gold, pair_list({miss(1), {"s2", "t2"}, {"s1", "t1"}}), nullptr, nullptr, {});
  CHECK(result.ap == Approx((1.0 / 2 + 2.0 / 3) / 2));
  CHECK(result.ap_interpolated == Approx((2.0 / 3 + 2.0 / 3) / 2));
}

TEST_CASE("a repeated pair counts once and takes no second rank", "[evaluation]") {
  SECTION("repeated inside the list given to evaluate") {
    // Ranks after dropping the copy: s1@1, miss@2, s2@3. (The organisers' scorer would count s1 again at rank 3
    // and s2 at rank 4: (1 + 2/3 + 3/4) / 4.)
    const auto result = score(pair_list({{"s1", "t1"}, miss(1), {"s1", "t1"}, {"s2", "t2"}}));
    CHECK(result.repeated == 1);
    CHECK(result.n_sys == 3);
    CHECK(result.tp == 2);
    CHECK(result.ap == Approx((1.0 + 2.0 / 3) / 4));
  }
  SECTION("repeated lines dropped by the reader") {
    const std::string directory = TERMALIGN_BINARY_DIR "/test-data/evaluation";
    std::filesystem::create_directories(directory);
    const std::string path = directory + "/repeated.tsv";
    termalign::write_file_atomically(path, "s1\tt1\ns1\twrong\ns1\tt1\ns2\tt2\n");
    const auto result = score(termalign::read_pairs(path, termalign::PairFileKind::submission));
    CHECK(result.repeated == 1);
    CHECK(result.ap == Approx((1.0 + 2.0 / 3) / 4));
  }
}

TEST_CASE("ignore_oov drops out-of-list pairs before ranking", "[evaluation]") {
  const TermList sources = term_list({"s1", "s2", "s3", "s4", "sx"});
  const TermList targets = term_list({"t1", "t2", "t3", "t4"});
  const PairList predictions = pair_list({{"s9", "t1"}, {"s1", "t1"}, {"s2", "t9"}, {"sx", "t3"}, {"s2", "t2"}});
  SECTION("kept: hits at ranks 2 and 5") {
    const auto result = score(predictions, {}, &sources, &targets);
    CHECK(result.oov_dropped == 0);
    CHECK(result.n_sys == 5);
    CHECK(result.ap == Approx((1.0 / 2 + 2.0 / 5) / 4));
  }
  SECTION("dropped: hits at ranks 1 and 3") {
    EvaluationOptions options;
    options.ignore_oov = true;
    const auto result = score(predictions, options, &sources, &targets);
    CHECK(result.oov_dropped == 2);
    CHECK(result.n_sys == 3);
    CHECK(result.fp == 1);
    CHECK(result.ap == Approx((1.0 + 2.0 / 3) / 4));
  }
  SECTION("without the lists it is a usage error") {
    EvaluationOptions options;
    options.ignore_oov = true;
    try {
      score(predictions, options);
      FAIL("no error");
    } catch (const termalign::Error& error) {
      CHECK(error.kind() == termalign::ErrorKind::usage);
      CHECK_THAT(error.what(), Catch::Contains("--ignore-oov"));
    }
    CHECK_THROWS_AS(score(predictions, {}, &sources, nullptr), termalign::Error);
  }
}

TEST_CASE("a malformed submission line is an error naming its line", "[evaluation]") {
  const std::string path = TERMALIGN_SOURCE_DIR "/tests/data/evaluation/three-columns.tsv";
  CHECK_THROWS_WITH(termalign::read_pairs(path, termalign::PairFileKind::submission),
                    Catch::StartsWith(path + ":3: ") && Catch::Contains("columns"));
}

TEST_CASE("P@k divides the hits among the first k lines by k", "[evaluation]") {
  // 12 lines, hits at ranks 1, 2 and 11.
  std::vector<std::pair<std::string, std::string>> pairs = {{"s1", "t1"}, {"s2", "t2"}};
  for (int i = 3; i <= 10; ++i) pairs.push_back(miss(i));
  pairs.push_back({"s3", "t3"});
  pairs.push_back(miss(12));
  const auto result = score(pair_list(pairs));
  CHECK(result.p_at.at(1) == Approx(1.0));
  CHECK(result.p_at.at(10) == Approx(0.2));
  CHECK(result.p_at.at(100) == Approx(0.03));
  CHECK(result.p_at.at(1000) == Approx(0.003));
  CHECK(result.p_at.size() == 4);
}

TEST_CASE("with term lists, lines past the cap are counted and AP is also given within the cap", "[evaluation]") {
  // |D1| = 1, |D2| = 2: cap = 10 x 3 / 2 = 15. Gold hits at ranks 1 and 16 of 17 lines.
  const PairList two_gold = pair_list({{"s1", "t1"}, {"s1", "t2"}});
  const TermList sources = term_list({"s1"});
  const TermList targets = term_list({"t1", "t2"});
  std::vector<std::pair<std::string, std::string>> pairs = {{"s1", "t1"}};
  for (int i = 2; i <= 15; ++i) pairs.push_back(miss(i));
  pairs.push_back({"s1", "t2"});
  pairs.push_back(miss(17));
  const auto result = termalign::evaluate(two_gold, pair_list(pairs), &sources, &targets, {});
  CHECK(result.has_cap);
  CHECK(result.cap == 15);
  CHECK(result.past_cap == 2);
  CHECK(result.ap == Approx((1.0 + 2.0 / 16) / 2));
  CHECK(result.ap_capped == Approx(1.0 / 2));
  const std::string json = termalign::format_json(result);
  CHECK_THAT(json, Catch::Contains("\"cap\": 15, \"past_cap\": 2, \"ap_capped\": 0.5"));
}

TEST_CASE("edit distance counts code points", "[evaluation]") {
  CHECK(termalign::edit_distance("kitten", "sitting") == 3);
  CHECK(termalign::edit_distance("", "abc") == 3);
  CHECK(termalign::edit_distance("abc", "abc") == 0);
  CHECK(termalign::edit_distance("\xC3\xA9\xC3\xA9\xC3\xA9", "eee") == 3);  // "ééé": 6 bytes, 3 code points
  CHECK(termalign::edit_distance("\xE6\x97\xA5\xE6\x9C\xAC", "\xE6\x97\xA5") == 1);  // 日本 / 日
}

TEST_CASE("the breakdown scores subsets of the gold over the ranks of the full list", "[evaluation]") {
  const PairList subset_gold = pair_list({{"pdf", "pdf"},                   // identical, single-word
                                          {"table", "tableau"},             // distance 2: close, single-word
                                          {"menu bar", "barre de menus"},   // far, multi-word
                                          {"file name", "nom de fichier"},  // far, multi-word
                                          {"kitten", "sitting"},            // distance 3: close, single-word
                                          {"abcd", "wxyz"}});               // distance 4: far, single-word
  // Hits at rank 1 (table), 3 (menu bar) and 4 (pdf): precisions 1, 2/3, 3/4.
  const PairList predictions =
      pair_list({{"table", "tableau"}, miss(1), {"menu bar", "barre de menus"}, {"pdf", "pdf"}, miss(2)});
  EvaluationOptions options;
  options.breakdown = true;
  const auto result = termalign::evaluate(subset_gold, predictions, nullptr, nullptr, options);
  CHECK(result.ap == Approx((1.0 + 2.0 / 3 + 3.0 / 4) / 6));
  REQUIRE(result.breakdown.size() == 5);
  const auto& identical = result.breakdown.at("identical");
  CHECK(identical.n_gold == 1);
  CHECK(identical.tp == 1);
  CHECK(identical.recall == Approx(1.0));
  CHECK(identical.ap == Approx(3.0 / 4));
  const auto& close = result.breakdown.at("close");
  CHECK(close.n_gold == 2);
  CHECK(close.tp == 1);
  CHECK(close.recall == Approx(0.5));
  CHECK(close.ap == Approx(1.0 / 2));
  const auto& far = result.breakdown.at("far");
  CHECK(far.n_gold == 3);
  CHECK(far.tp == 1);
  CHECK(far.ap == Approx((2.0 / 3) / 3));
  const auto& single = result.breakdown.at("single-word");
  CHECK(single.n_gold == 4);
  CHECK(single.tp == 2);
  CHECK(single.ap == Approx((1.0 + 3.0 / 4) / 4));
  const auto& multi = result.breakdown.at("multi-word");
  CHECK(multi.n_gold == 2);
  CHECK(multi.recall == Approx(0.5));
  CHECK(multi.ap == Approx((2.0 / 3) / 2));
  CHECK_THAT(termalign::format_json(result), Catch::Contains("\"far\": {\"n_gold\": 3, \"tp\": 1"));
}

TEST_CASE("evaluate on the training gold matches an independent AP", "[cli-evaluate]") {
  const std::string gold_path = TERMALIGN_SOURCE_DIR "/../shared/data/enfr/train/terms-en-fr.txt";
  std::ifstream gold_stream(gold_path);
  if (!gold_stream) {
    WARN("skipped: " << gold_path << " is absent");
    return;
  }
  std::vector<std::string> gold_lines;
  for (std::string line; std::getline(gold_stream, line);) gold_lines.push_back(line);
  const std::set<std::string> gold_set(gold_lines.begin(), gold_lines.end());

  // A shuffled gold with 600 wrong pairs (a gold source with another pair's target) mixed in, no line twice.
  std::mt19937 generator(2022);
  std::vector<std::string> lines = gold_lines;
  std::set<std::string> used(gold_lines.begin(), gold_lines.end());
  std::uniform_int_distribution<std::size_t> pick(0, gold_lines.size() - 1);
  while (lines.size() < gold_lines.size() + 600) {
    const std::string& a = gold_lines[pick(generator)];
    const std::string& b = gold_lines[pick(generator)];
    const std::string wrong = a.substr(0, a.find('\t')) + b.substr(b.find('\t'));
    if (used.insert(wrong).second) lines.push_back(wrong);
  }
  std::shuffle(lines.begin(), lines.end(), generator);
  std::string contents;
  for (const std::string& line : lines) contents += line + "\n";
  const std::string directory = TERMALIGN_BINARY_DIR "/test-data/evaluation";
  std::filesystem::create_directories(directory);
  const std::string prediction_path = directory + "/shuffled-train.tsv";
  termalign::write_file_atomically(prediction_path, contents);

  double hits = 0, precision_sum = 0;
  for (std::size_t rank = 1; rank <= lines.size(); ++rank) {
    if (gold_set.count(lines[rank - 1]) != 0) precision_sum += ++hits / static_cast<double>(rank);
  }
  const double expected_ap = precision_sum / static_cast<double>(gold_set.size());

  const auto run_result = run(std::string(TERMALIGN_CLI) + " evaluate --gold '" + gold_path + "' --pred '" +
                              prediction_path + "' --json 2>/dev/null");
  REQUIRE(run_result.exit_code == 0);
  const auto key = run_result.output.find("\"ap\": ");
  REQUIRE(key != std::string::npos);
  const double ap = std::strtod(run_result.output.c_str() + key + 6, nullptr);
  WARN("train gold shuffled with 600 wrong pairs: AP " << std::setprecision(12) << ap
                                                       << " (independent: " << expected_ap << ")");
  CHECK(ap == Approx(expected_ap).margin(1e-9).epsilon(0));
  CHECK(hits == gold_set.size());
}

TEST_CASE("evaluate reports a malformed submission with exit code 3 and its line", "[cli-evaluate]") {
  const std::string gold_path = TERMALIGN_SOURCE_DIR "/data/sample/terms-en-fr.txt";
  const std::string bad_path = TERMALIGN_SOURCE_DIR "/tests/data/evaluation/three-columns.tsv";
  const auto result =
      run(std::string(TERMALIGN_CLI) + " evaluate --gold '" + gold_path + "' --pred '" + bad_path + "' 2>&1");
  CHECK(result.exit_code == 3);
  CHECK_THAT(result.output, Catch::Contains(bad_path + ":3: expected exactly 2 TAB-separated columns"));
  CHECK_THAT(result.output, !Catch::Contains("AP:"));

  const auto usage = run(std::string(TERMALIGN_CLI) + " evaluate --gold '" + gold_path + "' --pred '" + gold_path +
                         "' --ignore-oov 2>&1");
  CHECK(usage.exit_code == 2);

  std::filesystem::create_directories(TERMALIGN_BINARY_DIR "/test-data/evaluation");
  const std::string curve_path = TERMALIGN_BINARY_DIR "/test-data/evaluation/sample-curve.tsv";
  const auto perfect = run(std::string(TERMALIGN_CLI) + " evaluate --gold '" + gold_path + "' --pred '" +
                           gold_path + "' --curve '" + curve_path + "' 2>/dev/null");
  CHECK(perfect.exit_code == 0);
  CHECK_THAT(perfect.output, Catch::StartsWith("AP: 1.000000\n"));
  std::ifstream curve(curve_path);
  std::size_t curve_lines = 0;
  for (std::string line; std::getline(curve, line);) ++curve_lines;
  CHECK(curve_lines == 150 + 1);  // the sample gold has 150 pairs (data README), plus the header
}
