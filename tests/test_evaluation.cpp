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
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "captured_log.h"
#include "command_output.h"
#include "io/io.h"
#include "io/sanity.h"
#include "shared_data.h"
#include "term_lists.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
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

using termalign_tests::term_list;

// Four gold pairs; "miss" pairs are never in the gold.
const PairList gold = pair_list({{"s1", "t1"}, {"s2", "t2"}, {"s3", "t3"}, {"s4", "t4"}});

std::pair<std::string, std::string> miss(int i) { return {"s1", "wrong" + std::to_string(i)}; }

EvaluationResult score(const PairList& predictions, const EvaluationOptions& options = {},
                       const TermList* source_terms = nullptr, const TermList* target_terms = nullptr,
                       std::vector<termalign::CurvePoint>* curve = nullptr) {
  return termalign::evaluate(gold, predictions, source_terms, target_terms, options, curve);
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

TEST_CASE("gold pairs outside the term lists get a warning: no submission can hold them", "[evaluation]") {
  const TermList sources = term_list({"s1", "s2", "s3", "s4"}), targets = term_list({"t1", "t2", "t3", "t4"});
  {
    const CapturedLog log;
    CHECK(termalign::warn_gold_outside_lists(gold, sources, targets) == 0);
    CHECK(log.warnings_with("outside the term lists") == 0);
  }
  const TermList fewer = term_list({"t1", "t2", "t4"});
  const CapturedLog log;
  CHECK(termalign::warn_gold_outside_lists(gold, sources, fewer) == 1);
  CHECK(log.warnings_with("in-memory: 1 of 4 gold pairs have a term outside the term lists") == 1);
  CHECK(log.warnings_with("(e.g. 's3' / 't3')") == 1);
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

TEST_CASE("the breakdown's spelling distance compares two scripts by their Latin spellings", "[evaluation]") {
  using termalign::spelling_distance;
  CHECK(spelling_distance("protocol", "протокол") == 1);  // Latin / Cyrillic: transliterated (protokol)
  CHECK(spelling_distance("function", "функция") == termalign::edit_distance("function", "funkcia"));
  CHECK(spelling_distance("table", "tableau") == 2);          // one script: as written, accents included
  CHECK(spelling_distance("\xC3\xA9t\xC3\xA9", "ete") == 2);  // été / ete
  CHECK(spelling_distance("2020", "протокол 2020") == termalign::edit_distance("2020", "протокол 2020"));
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
  if (!termalign_tests::shared_file_or_skip("enfr/train/terms-en-fr.txt")) return;
  const std::string gold_path = termalign_tests::shared_data() + "/enfr/train/terms-en-fr.txt";
  std::ifstream gold_stream(gold_path);
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

// --- Several runs, details, missed pairs, score lists -----------------------------------------------------------

namespace {

const std::string kSampleGold = TERMALIGN_SOURCE_DIR "/data/sample/terms-en-fr.txt";

// A scratch file under the build tree.
std::string scratch_file(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(TERMALIGN_BINARY_DIR "/test-data/evaluation");
  const std::string path = TERMALIGN_BINARY_DIR "/test-data/evaluation/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The sample gold with every `every`-th pair replaced by a miss and the order shuffled by `seed`.
std::string noisy_run(unsigned seed, bool with_scores, std::size_t every = 3) {
  std::ifstream gold(kSampleGold);
  std::vector<std::string> lines;
  for (std::string line; std::getline(gold, line);) lines.push_back(line);
  std::mt19937 random(seed);
  std::shuffle(lines.begin(), lines.end(), random);
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = i % every == 0 ? lines[i].substr(0, lines[i].find('\t')) + "\tnot a translation" : lines[i];
    text += line + (with_scores ? "\t" + std::to_string(1.0 - 0.001 * static_cast<double>(i)) : "") + "\n";
  }
  return text;
}

std::string cli() { return std::string("'") + TERMALIGN_CLI + "'"; }

double ap_of_report(const std::string& report) {
  REQUIRE(report.rfind("AP: ", 0) == 0);
  return std::strtod(report.c_str() + 4, nullptr);
}

}  // namespace

TEST_CASE("evaluate scores several runs into one table whose APs are the single runs'", "[cli-evaluate]") {
  std::vector<std::string> runs;
  for (unsigned seed = 1; seed <= 3; ++seed)
    runs.push_back(scratch_file("run" + std::to_string(seed) + ".tsv", noisy_run(seed, false, 1 + seed)));
  std::string all;
  for (const auto& path : runs) all += " --pred '" + path + "'";
  const auto markdown = run(cli() + " evaluate --gold '" + kSampleGold + "'" + all + " 2>/dev/null");
  REQUIRE(markdown.exit_code == 0);
  const auto tsv = run(cli() + " evaluate --gold '" + kSampleGold + "'" + all + " --format tsv 2>/dev/null");
  REQUIRE(tsv.exit_code == 0);
  const auto json = run(cli() + " evaluate --gold '" + kSampleGold + "'" + all + " --json 2>/dev/null");
  REQUIRE(json.exit_code == 0);
  const auto markdown_rows = lines_of(markdown.output), tsv_rows = lines_of(tsv.output);
  REQUIRE(markdown_rows.size() == 2 + runs.size());
  REQUIRE(tsv_rows.size() == 1 + runs.size());
  CHECK(tsv_rows[0].rfind("run\tAP\t", 0) == 0);
  std::set<std::string> distinct;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto single = run(cli() + " evaluate --gold '" + kSampleGold + "' --pred '" + runs[i] + "' 2>/dev/null");
    REQUIRE(single.exit_code == 0);
    const std::string ap = single.output.substr(4, single.output.find('\n') - 4);  // "AP: 0.xxxxxx"
    distinct.insert(ap);
    CHECK(tsv_rows[1 + i] == runs[i] + "\t" + ap + tsv_rows[1 + i].substr(runs[i].size() + 1 + ap.size()));
    CHECK_THAT(markdown_rows[2 + i], Catch::StartsWith("| " + runs[i] + " | " + ap + " |"));
    CHECK_THAT(json.output, Catch::Contains("{\"run\": \"" + runs[i] + "\", \"ap\": "));
    const auto ap_key = json.output.find("\"ap\": ", json.output.find(runs[i]));
    CHECK(std::strtod(json.output.c_str() + ap_key + 6, nullptr) ==
          Approx(ap_of_report(single.output)).epsilon(1e-6));
  }
  CHECK(distinct.size() == runs.size());  // the runs differ, so the rows could not match by chance
  CHECK(json.output.front() == '[');
}

TEST_CASE("evaluate --details lists each hit with its rank and the running P, R and AP", "[cli-evaluate]") {
  const std::string path = scratch_file("details-run.tsv", noisy_run(7, false));
  const std::string details = TERMALIGN_BINARY_DIR "/test-data/evaluation/details.tsv";
  const auto report = run(cli() + " evaluate --gold '" + kSampleGold + "' --pred '" + path + "' --details '" +
                          details + "' 2>/dev/null");
  REQUIRE(report.exit_code == 0);
  std::ifstream file(details);
  std::string header;
  std::getline(file, header);
  CHECK(header == "run\trank\tsource\ttarget\ttp\tprecision\trecall\tap");
  // Recomputed here from the ranks alone: precision tp / rank, recall tp / 150, AP the running sum over 150.
  const auto predictions = lines_of(noisy_run(7, false));
  double sum = 0, last_ap = 0;
  std::size_t hits = 0;
  for (std::string line; std::getline(file, line);) {
    const auto fields = lines_of(std::regex_replace(line, std::regex("\t"), "\n"));
    REQUIRE(fields.size() == 8);
    const std::size_t rank = std::stoul(fields[1]);
    ++hits;
    CHECK(std::stoul(fields[4]) == hits);
    CHECK(predictions[rank - 1] == fields[2] + "\t" + fields[3]);
    sum += static_cast<double>(hits) / static_cast<double>(rank);
    CHECK(std::stod(fields[5]) == Approx(static_cast<double>(hits) / static_cast<double>(rank)).margin(1e-6));
    CHECK(std::stod(fields[6]) == Approx(static_cast<double>(hits) / 150.0).margin(1e-6));
    last_ap = std::stod(fields[7]);
    CHECK(last_ap == Approx(sum / 150.0).margin(1e-6));
  }
  CHECK(hits == 100);  // every third of the 150 pairs was replaced by a miss
  CHECK(last_ap == Approx(ap_of_report(report.output)).margin(1e-6));
}

TEST_CASE("evaluate --missed lists the gold pairs not found with their source term's best rank",
          "[cli-evaluate]") {
  // A score list (third column, detected): s1's gold pair is missed but s1 is ranked 2nd; s3 is nowhere.
  const std::string gold_path = scratch_file("missed-gold.tsv", "s1\tt1\ns2\tt2\ns3\tt3\n");
  const std::string pred = scratch_file("missed-run.tsv", "s2\tt2\t0.9\ns1\twrong\t0.5\ns2\tother\t0.25\n");
  const std::string missed = TERMALIGN_BINARY_DIR "/test-data/evaluation/missed.tsv";
  const auto report = run(cli() + " evaluate --gold '" + gold_path + "' --pred '" + pred + "' --missed '" +
                          missed + "' 2>/dev/null");
  REQUIRE(report.exit_code == 0);
  CHECK(ap_of_report(report.output) == Approx(1.0 / 3));
  CHECK(termalign::read_file(missed) == "run\tsource\ttarget\tbest_rank\tbest_target\tbest_score\n" + pred +
                                            "\ts1\tt1\t2\twrong\t0.5\n" + pred + "\ts3\tt3\t\t\t\n");
}

TEST_CASE("evaluate accepts score lists: the third column detected or required", "[cli-evaluate]") {
  const std::string plain = scratch_file("plain-run.tsv", noisy_run(11, false));
  const std::string scored = scratch_file("scored-run.tsv", noisy_run(11, true));
  const auto expected = run(cli() + " evaluate --gold '" + kSampleGold + "' --pred '" + plain + "' 2>/dev/null");
  const auto detected = run(cli() + " evaluate --gold '" + kSampleGold + "' --pred '" + scored + "' 2>/dev/null");
  const auto required =
      run(cli() + " evaluate --gold '" + kSampleGold + "' --pred '" + scored + "' --pred-has-scores 2>/dev/null");
  REQUIRE(expected.exit_code == 0);
  CHECK(detected.exit_code == 0);
  CHECK(required.exit_code == 0);
  CHECK(detected.output == expected.output);
  CHECK(required.output == expected.output);
  // Required, a two-column list is an error naming its line; a score that is not a number too.
  const auto missing =
      run(cli() + " evaluate --gold '" + kSampleGold + "' --pred '" + plain + "' --pred-has-scores 2>&1");
  CHECK(missing.exit_code == 3);
  CHECK_THAT(missing.output, Catch::Contains(plain + ":1: expected exactly 3 TAB-separated columns"));
  const std::string bad = scratch_file("bad-score.tsv", "s1\tt1\t0.5\ns2\tt2\thigh\n");
  const auto not_number = run(cli() + " evaluate --gold '" + kSampleGold + "' --pred '" + bad + "' 2>&1");
  CHECK(not_number.exit_code == 3);
  CHECK_THAT(not_number.output, Catch::Contains(bad + ":2: the score 'high' is not a finite number"));
}

// The paired comparison of runs: expectations computed by hand on lists where the answer is known.
namespace {

using termalign::Difference;
using termalign::SignificanceOptions;

// n source terms s0..s(n-1), each with one gold pair (si, ti) and one wrong pair (si, xi).
PairList gold_of(std::size_t n) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::size_t i = 0; i < n; ++i) pairs.emplace_back("s" + std::to_string(i), "t" + std::to_string(i));
  return pair_list(pairs);
}

// Ranks 1..n: term i's gold pair, except that the first `moved` terms put their wrong pair there; ranks
// n+1..2n: the other pair of each term. With moved = 0 the list is perfect (AP 1).
PairList run_with_moved(std::size_t n, std::size_t moved) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int half = 0; half < 2; ++half) {
    for (std::size_t i = 0; i < n; ++i) {
      const bool gold_first = i >= moved;
      const bool gold = half == 0 ? gold_first : !gold_first;
      pairs.emplace_back("s" + std::to_string(i), (gold ? "t" : "x") + std::to_string(i));
    }
  }
  return pair_list(pairs);
}

// Hits at ranks moved+1..n (the j-th at rank moved + j), then at n+1..n+moved (the (n-moved+j)-th at n + j).
double ap_with_moved(std::size_t n, std::size_t moved) {
  double sum = 0;
  for (std::size_t j = 1; j <= n - moved; ++j) sum += static_cast<double>(j) / static_cast<double>(moved + j);
  for (std::size_t j = 1; j <= moved; ++j) sum += static_cast<double>(n - moved + j) / static_cast<double>(n + j);
  return sum / static_cast<double>(n);
}

Difference compare(const PairList& gold, const PairList& baseline, const PairList& run, std::size_t resamples,
                   int threads = 0) {
  SignificanceOptions options;
  options.resamples = resamples;
  options.threads = threads;
  const auto differences = termalign::compare_runs(gold, {&baseline, &run}, nullptr, nullptr, {}, options);
  REQUIRE(differences.size() == 2);
  return differences[1];
}

}  // namespace

TEST_CASE("two identical runs differ by 0 with p = 1", "[evaluation][significance]") {
  const PairList gold = gold_of(30);
  const PairList run = run_with_moved(30, 7);
  const Difference d = compare(gold, run, run, 2000);
  CHECK(d.ap == 0);
  CHECK(d.low == 0);
  CHECK(d.high == 0);
  CHECK(d.p_value == 1);
  CHECK(d.resamples == 2000);
}

TEST_CASE("the AP arithmetic of a run with gold pairs moved down", "[evaluation][significance]") {
  // n = 10, moved = 5: hits at ranks 6..10 and 11..15.
  const double by_hand =
      (1.0 / 6 + 2.0 / 7 + 3.0 / 8 + 4.0 / 9 + 5.0 / 10 + 6.0 / 11 + 7.0 / 12 + 8.0 / 13 + 9.0 / 14 + 10.0 / 15) /
      10;
  CHECK(ap_with_moved(10, 5) == Approx(by_hand).epsilon(1e-15));
  const PairList gold = gold_of(10);
  CHECK(termalign::evaluate(gold, run_with_moved(10, 5), nullptr, nullptr, {}).ap == Approx(by_hand));
  CHECK(termalign::evaluate(gold, run_with_moved(10, 0), nullptr, nullptr, {}).ap == Approx(1.0));
}

TEST_CASE("half of the source terms moved down: a large difference, significant", "[evaluation][significance]") {
  const std::size_t n = 40, moved = 20;
  const PairList gold = gold_of(n);
  const Difference d = compare(gold, run_with_moved(n, 0), run_with_moved(n, moved), 5000);
  const double expected = ap_with_moved(n, moved) - 1.0;
  CHECK(d.ap == Approx(expected).epsilon(1e-12));
  CHECK(d.low <= d.ap);
  CHECK(d.ap <= d.high);
  CHECK(d.high < 0);
  CHECK(d.p_value < 0.05);
  CHECK(d.p_value >= 1.0 / 5001);
}

TEST_CASE("one source term moved down: a small difference, not significant", "[evaluation][significance]") {
  const std::size_t n = 40, moved = 1;
  const PairList gold = gold_of(n);
  const Difference d = compare(gold, run_with_moved(n, 0), run_with_moved(n, moved), 5000);
  CHECK(d.ap == Approx(ap_with_moved(n, moved) - 1.0).epsilon(1e-12));
  CHECK(d.low <= d.ap);
  CHECK(d.ap <= d.high);
  CHECK(d.p_value > 0.05);
}

TEST_CASE("the comparison is the same for any thread count", "[evaluation][significance]") {
  const PairList gold = gold_of(40);
  const PairList baseline = run_with_moved(40, 3), run = run_with_moved(40, 12);
  const Difference serial = compare(gold, baseline, run, 3000, 1);
  const Difference parallel = compare(gold, baseline, run, 3000, 2);
  CHECK(serial.low == parallel.low);
  CHECK(serial.high == parallel.high);
  CHECK(serial.p_value == parallel.p_value);
  // The observed difference is that of the two APs evaluate prints.
  const double ap_baseline = termalign::evaluate(gold, baseline, nullptr, nullptr, {}).ap;
  const double ap_run = termalign::evaluate(gold, run, nullptr, nullptr, {}).ap;
  CHECK(serial.ap == Approx(ap_run - ap_baseline).epsilon(1e-12));
}

TEST_CASE("zero resamples is a usage error", "[evaluation][significance]") {
  SignificanceOptions options;
  options.resamples = 0;
  CHECK_THROWS_AS(termalign::validate(options), termalign::Error);
}

TEST_CASE("each run's AP interval is the bootstrap of its AP over its own source terms",
          "[evaluation][significance]") {
  const PairList gold = gold_of(40);
  const PairList perfect = run_with_moved(40, 0), moved = run_with_moved(40, 15);
  SignificanceOptions options;
  options.resamples = 3000;
  const auto intervals = termalign::ap_intervals(gold, {&perfect, &moved}, nullptr, nullptr, {}, options);
  REQUIRE(intervals.size() == 2);
  // A perfect list is perfect on every resample.
  CHECK(intervals[0].ap == 1);
  CHECK(intervals[0].low == 1);
  CHECK(intervals[0].high == 1);
  CHECK(intervals[0].resamples == 3000);
  CHECK(intervals[1].ap == Approx(ap_with_moved(40, 15)).epsilon(1e-12));
  CHECK(intervals[1].low < intervals[1].ap);
  CHECK(intervals[1].ap < intervals[1].high);
  // The same draws as the paired bootstrap against an empty list, whose AP is 0 on every resample: the same
  // interval to the last bit.
  const PairList empty;
  const Difference against_empty = compare(gold, empty, moved, 3000);
  CHECK(intervals[1].low == against_empty.low);
  CHECK(intervals[1].high == against_empty.high);
  // The same for any thread count.
  options.threads = 1;
  const auto serial = termalign::ap_intervals(gold, {&moved}, nullptr, nullptr, {}, options);
  options.threads = 2;
  const auto parallel = termalign::ap_intervals(gold, {&moved}, nullptr, nullptr, {}, options);
  CHECK(serial[0].low == parallel[0].low);
  CHECK(serial[0].high == parallel[0].high);
  CHECK(serial[0].low == intervals[1].low);
}

TEST_CASE("the sign-flip test over units: p by hand where it is known", "[evaluation][significance]") {
  SignificanceOptions options;
  options.resamples = 20000;
  // No difference anywhere, or one unit's alone (every flip keeps |sum|): p = 1.
  CHECK(termalign::sign_flip_p_value(std::vector<double>(50, 0.0), options) == 1);
  std::vector<double> one(50, 0.0);
  one[17] = 0.3;
  CHECK(termalign::sign_flip_p_value(one, options) == 1);
  // Ten equal differences: |sum| is as large only with all ten signs alike, p = 2 / 2^10 (Monte Carlo sd 0.0003).
  const double p = termalign::sign_flip_p_value(std::vector<double>(10, 0.01), options);
  CHECK(p == Approx(2.0 / 1024).margin(0.001));
  // Half of 40 units up, half down by as much: the sum is 0, and every resample is at least as large.
  std::vector<double> balanced;
  for (int i = 0; i < 20; ++i) balanced.insert(balanced.end(), {0.02, -0.02});
  CHECK(termalign::sign_flip_p_value(balanced, options) == 1);
  // The same figure for any thread count.
  options.threads = 1;
  const double serial = termalign::sign_flip_p_value(std::vector<double>(10, 0.01), options);
  options.threads = 2;
  CHECK(termalign::sign_flip_p_value(std::vector<double>(10, 0.01), options) == serial);
  options.resamples = 0;
  CHECK_THROWS_AS(termalign::sign_flip_p_value(one, options), termalign::Error);
}
