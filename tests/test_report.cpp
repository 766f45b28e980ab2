// The error-analysis page: its figures against the scorer, its reasons for missed pairs against inputs built so
// that each reason holds, and its self-containedness. The browser check is tests/browser/check_report.py.
#include <spdlog/fmt/fmt.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "command_output.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"
#include "termalign/report.h"

using termalign::ReportOptions;

namespace {

// A folder of the running test case's own: ctest runs the cases in parallel, and they write files of one name.
std::string scratch_folder() {
  const std::string name = Catch::getResultCapture().getCurrentTestName();
  const std::string folder =
      TERMALIGN_BINARY_DIR "/test-data/report/" + std::to_string(std::hash<std::string>{}(name)) + "/";
  std::filesystem::create_directories(folder);
  return folder;
}

std::string scratch_file(const std::string& name, const std::string& text) {
  const std::string path = scratch_folder() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string pair_lines(const Pairs& pairs) {
  std::string text;
  for (const auto& [source, target] : pairs) text += source + "\t" + target + "\n";
  return text;
}

std::string term(char side, int i) { return std::string(1, side) + std::to_string(i); }

// Twelve source terms s0..s11 and targets t0..t11 (the cap is 10 x 24 / 2 = 120); the gold pairs s_i with t_i.
struct Dataset {
  std::string gold, sources, targets;
  Dataset() {
    std::string source_text, target_text;
    Pairs gold_pairs;
    for (int i = 0; i < 12; ++i) {
      source_text += term('s', i) + "\n";
      target_text += term('t', i) + "\n";
      gold_pairs.emplace_back(term('s', i), term('t', i));
    }
    gold = scratch_file("gold.tsv", pair_lines(gold_pairs));
    sources = scratch_file("terms-s.txt", source_text);
    targets = scratch_file("terms-t.txt", target_text);
  }
};

// A short run (under the cap): s0-t0 first; s1 wrong before s1-t1 (ranked low); s2 only wrong; s3..s11 wrong.
Pairs short_run() {
  Pairs pairs = {{"s0", "t0"}, {"s1", "t5"}, {"s1", "t1"}, {"s2", "t7"}};
  for (int i = 3; i < 12; ++i) pairs.emplace_back(term('s', i), term('t', (i + 1) % 12));
  return pairs;
}

// A run past the cap: every pair but s4-t4 and s3-t3, then s3-t3 at rank 143.
Pairs long_run() {
  Pairs pairs;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j) {
      const int source = (i + 5) % 12;
      if (!(source == j && (j == 3 || j == 4))) pairs.emplace_back(term('s', source), term('t', j));
    }
  pairs.emplace_back("s3", "t3");
  return pairs;
}

// An explain file of `pairs` without a re-ranker; `no_vector` gets r_S NaN.
std::string explain_text(const Pairs& pairs, const std::string& no_vector) {
  std::string text = "rank\tsource\ttarget\tscore\tcsls\tcosine\tr_T\tr_S\torthographic\torthographic_bonus\n";
  for (std::size_t r = 0; r < pairs.size(); ++r) {
    const double score = 1.0 - 0.01 * static_cast<double>(r);
    text += fmt::format("{}\t{}\t{}\t{}\t{}\t0.6\t0.3\t{}\t0.2\t0.02\n", r + 1, pairs[r].first, pairs[r].second,
                        score, score - 0.02, pairs[r].first == no_vector ? "nan" : "0.25");
  }
  return text;
}

std::string json_block(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=evaluation>";
  const std::size_t start = page.find(open);
  REQUIRE(start != std::string::npos);
  const std::size_t end = page.find("</script>", start);
  return page.substr(start + open.size(), end - start - open.size());
}

// Each cell of a table row whose first cells are `cells`.
bool has_row(const std::string& page, const std::vector<std::string>& cells) {
  std::string row = "<tr>";
  for (const std::string& cell : cells) row += "<td>" + cell + "</td>";
  return page.find(row) != std::string::npos;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string cli() { return std::string("'") + TERMALIGN_CLI + "'"; }

}  // namespace

TEST_CASE("the report's scores are evaluate's, cell for cell and in its JSON block", "[report]") {
  const Dataset data;
  const std::string first = scratch_file("short.tsv", pair_lines(short_run()));
  const std::string second = scratch_file("long.tsv", pair_lines(long_run()));
  ReportOptions options;
  options.gold = data.gold;
  options.source_terms = data.sources;
  options.target_terms = data.targets;
  options.predictions = {first, second};
  const std::string page = termalign::report_page(options);

  const termalign::PairList gold = termalign::read_pairs(data.gold, termalign::PairFileKind::gold);
  const termalign::TermList sources = termalign::read_term_list(data.sources);
  const termalign::TermList targets = termalign::read_term_list(data.targets);
  termalign::EvaluationOptions evaluation;
  evaluation.breakdown = true;
  std::vector<termalign::NamedResult> runs;
  std::vector<termalign::PairList> predicted;
  for (const std::string& path : options.predictions) {
    predicted.push_back(termalign::read_pairs(path, termalign::PairFileKind::submission));
    runs.push_back({path, termalign::evaluate(gold, predicted.back(), &sources, &targets, evaluation)});
  }
  // The second run's difference to the first, as evaluate gives it (its default resamples and seed).
  const std::vector<termalign::Difference> differences = termalign::compare_runs(
      gold, {&predicted[0], &predicted[1]}, &sources, &targets, evaluation, termalign::SignificanceOptions{});
  runs[1].has_difference = true;
  runs[1].difference = differences[1];
  // Each run's AP with its own bootstrap interval over source terms, as `evaluate --intervals` gives it: the
  // interval's AP is evaluate's and the interval holds it; the page shows it beside the AP.
  const std::vector<termalign::ApInterval> intervals = termalign::ap_intervals(
      gold, {&predicted[0], &predicted[1]}, &sources, &targets, evaluation, termalign::SignificanceOptions{});
  REQUIRE(intervals.size() == 2);
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(intervals[r].ap == Approx(runs[r].result.ap).margin(1e-12));
    CHECK(intervals[r].low <= intervals[r].ap);
    CHECK(intervals[r].ap <= intervals[r].high);
    CHECK(intervals[r].low < intervals[r].high);  // a handful of source terms: the AP moves with the draw
    CHECK(intervals[r].resamples == 10000);
    CHECK(page.find(fmt::format("<td class=interval>[{:.4f}, {:.4f}]</td>", intervals[r].low,
                                intervals[r].high)) != std::string::npos);
    runs[r].has_interval = true;
    runs[r].interval = intervals[r];
  }
  CHECK(json_block(page) == termalign::format_table(runs, termalign::TableFormat::json));
  CHECK(json_block(page).find("\"ap_interval\": [") != std::string::npos);
  CHECK(page.find(fmt::format("<td>{:+.4f}</td>", differences[1].ap)) != std::string::npos);

  // The visible cells: 17 summary and 15 breakdown cells per run, each as the scorer's value to 6 decimals.
  const std::regex cell("<td data-run=\"(\\d)\" data-key=\"([a-z_.0-9-]+)\">([^<]*)</td>");
  std::size_t cells = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), cell); it != std::sregex_iterator(); ++it) {
    const termalign::EvaluationResult& result = runs.at(std::stoul((*it)[1])).result;
    const std::string key = (*it)[2];
    const std::map<std::string, std::string> expected = {
        {"ap", fmt::format("{:.6f}", result.ap)},
        {"ap_interpolated", fmt::format("{:.6f}", result.ap_interpolated)},
        {"n_sys", std::to_string(result.n_sys)},
        {"tp", std::to_string(result.tp)},
        {"fn", std::to_string(result.fn)},
        {"f1", fmt::format("{:.6f}", result.f1)},
        {"p_at.10", fmt::format("{:.6f}", result.p_at.at(10))},
        {"cap", "120"},
        {"past_cap", std::to_string(result.n_sys > 120 ? result.n_sys - 120 : 0)},
        {"ap_capped", fmt::format("{:.6f}", result.ap_capped)},
        {"breakdown.single-word.recall", fmt::format("{:.6f}", result.breakdown.at("single-word").recall)},
        {"breakdown.identical.tp", "0"}};
    if (expected.count(key)) CHECK((*it)[3] == expected.at(key));
    ++cells;
  }
  CHECK(cells == 2 * (17 + 15));
  CHECK(runs[0].result.ap != runs[1].result.ap);  // two distinct runs: the cells could not match by swapping

  // The CLI writes the same page; its JSON block is `evaluate --json --breakdown` of the same files.
  const std::string out = scratch_folder() + "cli-report.html";
  const std::string lists = " --src-terms '" + data.sources + "' --tgt-terms '" + data.targets + "'";
  const std::string runs_arguments = " --pred '" + first + "' --pred '" + second + "'";
  const auto report =
      run(cli() + " -q report --gold '" + data.gold + "'" + lists + runs_arguments + " --out '" + out + "'");
  REQUIRE(report.exit_code == 0);
  const auto json = run(cli() + " -q evaluate --json --breakdown --intervals --gold '" + data.gold + "'" + lists +
                        runs_arguments);
  REQUIRE(json.exit_code == 0);
  std::ifstream written(out, std::ios::binary);
  const std::string cli_page((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  CHECK(json_block(cli_page) == json.output);
  CHECK(cli_page == page);
}

TEST_CASE("missed gold pairs get the reasons the files support", "[report]") {
  const Dataset data;
  // s0 has a second gold target, t11, ranked right below t0: below a gold pair, not a wrong one.
  std::ifstream gold_file(data.gold);
  const std::string gold_text((std::istreambuf_iterator<char>(gold_file)), std::istreambuf_iterator<char>());
  Pairs short_pairs = short_run();
  short_pairs.insert(short_pairs.begin() + 1, {"s0", "t11"});
  ReportOptions options;
  options.gold = scratch_file("gold-two-targets.tsv", gold_text + "s0\tt11\n");
  options.source_terms = data.sources;
  options.target_terms = data.targets;
  options.predictions = {scratch_file("short.tsv", pair_lines(short_pairs)),
                         scratch_file("long.tsv", pair_lines(long_run()))};
  options.explanations = {scratch_file("short.explain.tsv", explain_text(short_pairs, "s2"))};
  const std::string page = termalign::report_page(options);
  // The short run (14 pairs, under the cap of 120): its explain file says s2 has no vector; the other missed
  // pairs were not kept; s1-t1 lies below s1's wrong pair.
  CHECK(has_row(page, {"no vector (source term)", "s2", "t2"}));
  CHECK(has_row(page, {"not kept", "s4", "t4", "its source term: 1 pair in the list, the first at rank 7, t5"}));
  CHECK(has_row(page, {"ranked low", "s1", "t1"}));
  CHECK_THAT(page, Catch::Contains("rank 4, below its source term's wrong pair at rank 3, t5"));
  CHECK_THAT(page, !Catch::Contains("rank 2, below"));  // s0-t11 in the short run (the long run ranks it low)
  CHECK(count(page, "<tr><td>not kept</td>") == 9);  // s3..s11 less nothing: the 9 sources with wrong pairs only
  // The long run (143 pairs): s3-t3 lies past the cap; s4-t4 is absent from a list cut at the cap, so the files
  // cannot tell why; without an explain file no vector is known.
  CHECK(has_row(page, {"past the cap", "s3", "t3"}));
  CHECK(has_row(page, {"unknown", "s4", "t4"}));
  CHECK(count(page, "no vector (") == 2);  // the short run's row and its count
  // The short run's wrong pairs show what pushed them up: CSLS's parts from the explain file.
  CHECK_THAT(page, Catch::Contains("csls 0.960, cosine 0.600, r_T 0.300, r_S 0.250, orthographic_bonus 0.020"));
}

TEST_CASE("the report references nothing outside itself and escapes its terms", "[report]") {
  const std::string gold = scratch_file("markup-gold.tsv", "<img src=x>\t\"quoted\" & <b>\nplain\tsimple\n");
  const std::string predictions =
      scratch_file("markup-run.tsv", "<img src=x>\t<script>alert(1)</script>\nplain\tsimple\n");
  ReportOptions options;
  options.gold = gold;
  options.predictions = {predictions};
  const std::string page = termalign::report_page(options);
  CHECK_THAT(page, Catch::Contains("&lt;img src=x&gt;"));
  CHECK_THAT(page, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK(count(page, "<script") == 2);  // the JSON block and the search box's
  for (const char* outside :
       {"src=", "@import", "url(", "http:", "https:", "<link", "<img", "<iframe", "<object", "<embed", "//"}) {
    INFO(outside);
    // "//" would start a protocol-relative URL; the page's script has no comment.
    const std::string escaped_terms_removed = std::regex_replace(page, std::regex("&lt;[^&]*&gt;"), "");
    CHECK(escaped_terms_removed.find(outside) == std::string::npos);
  }
  // An unquoted value before "/>" would take the slash, and the SVG element would swallow the ones after it.
  CHECK_FALSE(std::regex_search(page, std::regex("=[^\"\\s>]+/>")));
  const std::regex link("href=\"([^\"]*)\"");
  std::size_t links = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), link); it != std::sregex_iterator(); ++it, ++links)
    CHECK((*it)[1].str().rfind("#", 0) == 0);
  CHECK(links == 6);  // the section links
}

TEST_CASE("large runs list the first rows of each table and say how many there are", "[report]") {
  const Dataset data;
  ReportOptions options;
  options.gold = data.gold;
  options.predictions = {scratch_file("long.tsv", pair_lines(long_run()))};
  options.max_rows = 5;
  const std::string page = termalign::report_page(options);
  // 143 pairs, 11 of them gold: 132 wrong pairs; 12 gold source terms.
  // Every source term is the gold's.
  CHECK_THAT(page, Catch::Contains("132 wrong pairs in the list (132 of them with a source term of the gold); the "
                                   "first 5 are listed."));
  CHECK_THAT(page, Catch::Contains("12 gold source terms; the first 5 are listed."));
  const std::size_t wrong = page.find("<table class=wrong>"), end = page.find("</table>", wrong);
  CHECK(count(page.substr(wrong, end - wrong), "<tr><td>") == 5);
  options.max_rows = 1000;
  CHECK_THAT(termalign::report_page(options), Catch::Contains("132 of them with a source term of the gold)."));
}

TEST_CASE("an explain file that follows no run is an input error naming its line", "[report]") {
  const Dataset data;
  Pairs pairs = short_run();
  ReportOptions options;
  options.gold = data.gold;
  options.predictions = {scratch_file("short.tsv", pair_lines(pairs))};
  std::swap(pairs[2], pairs[3]);
  options.explanations = {scratch_file("swapped.explain.tsv", explain_text(pairs, ""))};
  // Ranks 1 and 2 match; rank 3 (line 4, after the header) does not.
  CHECK_THROWS_WITH(termalign::report_page(options), Catch::StartsWith(options.explanations[0] + ":4: "));
  options.explanations = {scratch_file("bad.explain.tsv", "rank\tsource\ttarget\tscore\n1\ts0\tt0\tx\n")};
  CHECK_THROWS_WITH(termalign::report_page(options), Catch::StartsWith(options.explanations[0] + ":2: "));
  options.explanations.clear();
  options.pair = "en-fr";
  CHECK_THROWS_WITH(termalign::report_page(options), Catch::Contains("--data-dir"));
  options.pair.clear();
  options.max_rows = 0;
  CHECK_THROWS_WITH(termalign::report_page(options), Catch::Contains("at least 1"));
}
