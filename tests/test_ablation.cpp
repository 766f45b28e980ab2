#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "captured_log.h"
#include "command_output.h"
#include "io/io.h"
#include "pipeline/ablation.h"
#include "shared_data.h"
#include "skip.h"
#include "termalign/aligner.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"

namespace fs = std::filesystem;
using namespace termalign;

namespace {

const std::string source_dir = TERMALIGN_SOURCE_DIR;

// The path of `grid.toml` in a fresh directory of the build tree.
std::string fresh_grid_path(const std::string& name) {
  const fs::path dir = fs::path(TERMALIGN_BINARY_DIR) / "test-ablation" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return (dir / "grid.toml").string();
}

// [base.input]'s first lines: the sample's vectors.
std::string sample_vector_lines() {
  return "[base.input]\nsrc_vectors = \"" + source_dir + "/models/sample/en.vec\"\ntgt_vectors = \"" + source_dir +
         "/models/sample/fr.vec\"\n";
}

// A grid over the bundled sample ([base] and [dataset]) in a fresh directory; `input_extra`: more [base.input]
// lines.
std::string write_grid(const std::string& name, const std::string& grid_section,
                       const std::string& input_extra = "") {
  const std::string path = fresh_grid_path(name);
  std::ofstream(path) << sample_vector_lines() << "seed = \"" << source_dir << "/data/sample/seed-en-fr.txt\"\n"
                      << "src_terms = \"" << source_dir << "/data/sample/terms-en.txt\"\n"
                      << "tgt_terms = \"" << source_dir << "/data/sample/terms-fr.txt\"\n"
                      << input_extra << "\n[dataset]\ngold = \"" << source_dir
                      << "/data/sample/terms-en-fr.txt\"\n"
                      << "\n[output]\ndir = \"out\"\n\n"
                      << grid_section;
  return path;
}

// AP of one configuration, computed here with the library's pipeline and scorer, outside the ablation runner.
double direct_ap(const AlignConfig& config) {
  PairList predictions;
  predictions.path = "direct";
  for (const auto& pair : align_terms(config)) predictions.pairs.emplace_back(pair.source, pair.target);
  const TermList source = read_term_list(source_dir + "/data/sample/terms-en.txt");
  const TermList target = read_term_list(source_dir + "/data/sample/terms-fr.txt");
  const PairList gold = read_pairs(source_dir + "/data/sample/terms-en-fr.txt", PairFileKind::gold);
  return evaluate(gold, predictions, &source, &target, EvaluationOptions{}).ap;
}

// The lines of the file `path`.
std::vector<std::string> file_lines(const std::string& path) { return lines_of(read_file(path)); }

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::istringstream stream(line);
  for (std::string field; std::getline(stream, field, separator);) fields.push_back(field);
  return fields;
}

std::string error_of(const std::string& grid_path) {
  try {
    read_grid(grid_path);
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("ablation: a 2 x 2 grid over the sample, best run reproduced from best.config.toml", "[ablate]") {
  // Nested and quoted-dotted forms of an option name, and an option that stays at its [base] value.
  const std::string grid_path = write_grid("two-by-two",
                                           "[base.mapping]\nnormalization = \"unit\"\nrefine_iterations = 0\n\n"
                                           "[grid]\n\"scoring.k\" = [3, 10]\nranking.top_m = [1, 10]\n");
  const AblationGrid grid = read_grid(grid_path);
  REQUIRE(grid.axes.size() == 2);
  CHECK(grid.axes[0].option == "scoring.k");  // file order, then the cartesian product with the last fastest
  CHECK(grid.axes[1].option == "ranking.top_m");
  const fs::path out = fs::path(grid_path).parent_path() / "out";
  CHECK(fs::path(grid.output_dir) == out);

  AblationOptions options;
  options.plot_script = source_dir + "/scripts/plot_curve.py";
  const AblationResult result = run_ablation(grid, options);

  REQUIRE(result.runs.size() == 4);
  const std::map<std::size_t, std::vector<std::string>> expected_labels = {
      {1, {"3", "1"}}, {2, {"3", "10"}}, {3, {"10", "1"}}, {4, {"10", "10"}}};
  for (const auto& run : result.runs) {
    CHECK(run.labels == expected_labels.at(run.number));
    CHECK(run.config.mapping.normalization == Normalization::unit);
    CHECK(run.config.mapping.refine_iterations == 0);
    CHECK(run.evaluation.breakdown.size() == 5);
    CHECK(run.seconds > 0);
  }
  for (std::size_t i = 1; i < result.runs.size(); ++i) {
    CHECK(result.runs[i - 1].evaluation.ap >= result.runs[i].evaluation.ap);
  }

  // One header (and the Markdown rule) plus one row per run, then a blank line and the legend; the CSV rows agree
  // with the returned runs.
  CHECK(file_lines((out / "results.md").string()).size() == 2 + 4 + 2);
  const auto csv = file_lines((out / "results.csv").string());
  REQUIRE(csv.size() == 1 + 4);
  const auto columns = split(csv[0], ',');
  REQUIRE(columns.size() == 1 + 2 + 14);
  CHECK(columns[1] == "scoring.k");
  CHECK(columns[3] == "AP");
  CHECK(columns.back() == "seconds");
  for (std::size_t i = 0; i < 4; ++i) {
    const auto row = split(csv[1 + i], ',');
    REQUIRE(row.size() == columns.size());
    CHECK(std::stoul(row[0]) == result.runs[i].number);
    CHECK(std::stod(row[3]) == Approx(result.runs[i].evaluation.ap).margin(1e-6));
  }

  // The best row is what `termalign align --config best.config.toml` gives, scored independently.
  const AblationRun& best = result.runs.front();
  AlignConfig best_config;
  load_config((out / "best.config.toml").string(), best_config);
  CHECK(std::to_string(best_config.scoring.k) == best.labels[0]);
  CHECK(std::to_string(best_config.ranking.top_m) == best.labels[1]);
  CHECK(best_config.mapping.normalization == Normalization::unit);
  CHECK(best_config.output.out == (out / "best.submission.tsv").string());
  CHECK(direct_ap(best_config) == Approx(best.evaluation.ap).epsilon(1e-12));

  // The worst row too, from a configuration built here by hand rather than from the grid.
  const AblationRun& worst = result.runs.back();
  AlignConfig worst_config = best_config;
  worst_config.scoring.k = std::stoi(worst.labels[0]);
  worst_config.ranking.top_m = std::stoul(worst.labels[1]);
  CHECK(direct_ap(worst_config) == Approx(worst.evaluation.ap).epsilon(1e-12));
  CHECK(worst.evaluation.ap < best.evaluation.ap);

  // The curve's last AP is the run's AP.
  const auto curve = file_lines((out / "best.curve.tsv").string());
  REQUIRE(curve.size() >= 2);
  CHECK(std::stod(split(curve.back(), '\t').back()) == Approx(best.evaluation.ap).margin(1e-6));
}

TEST_CASE("ablation: the best run's curve is drawn as a PNG", "[ablate]") {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") != 0) {
    termalign_tests::skip_test("the plot needs /usr/bin/python3 with matplotlib (Debian python3-matplotlib)");
    return;
  }
  const std::string grid_path =
      write_grid("plot", "[base.mapping]\nrefine_iterations = 0\n\n[grid]\n\"scoring.k\" = [3]\n");
  AblationOptions options;
  options.plot_script = source_dir + "/scripts/plot_curve.py";
  REQUIRE(run_ablation(read_grid(grid_path), options).runs.size() == 1);
  std::ifstream png((fs::path(grid_path).parent_path() / "out" / "best.curve.png").string(), std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  CHECK(std::string(magic, 8) == "\x89PNG\r\n\x1a\n");
}

TEST_CASE("ablation: a plot that cannot be drawn is skipped, not an error", "[ablate]") {
  const std::string grid_path = write_grid("no-plot", "[grid]\n\"scoring.k\" = [5]\n");
  AblationOptions options;
  options.plot_script = source_dir + "/scripts/no-such-script.py";
  const AblationResult result = run_ablation(read_grid(grid_path), options);
  REQUIRE(result.runs.size() == 1);
  const fs::path out = fs::path(grid_path).parent_path() / "out";
  CHECK(fs::exists(out / "best.curve.tsv"));
  CHECK(fs::exists(out / "results.md"));
  CHECK_FALSE(fs::exists(out / "best.curve.png"));
  CHECK_FALSE(fs::exists(out / "best.curve.png.partial.png"));
  // An earlier grid's plot in the folder is removed, not left to pass for this grid's.
  std::ofstream(out / "best.curve.png") << "an earlier grid's plot";
  options.plot_script.clear();
  run_ablation(read_grid(grid_path), options);
  CHECK_FALSE(fs::exists(out / "best.curve.png"));
}

TEST_CASE("ablation: a grid over a dataset folder takes its inputs and its gold", "[ablate]") {
  // [base.input] names only the vectors and the folder; no [dataset]: the folder's gold scores the runs.
  const std::string path = fresh_grid_path("data-dir");
  std::ofstream(path) << sample_vector_lines() << "data_dir = \"" << source_dir
                      << "/data/sample\"\npair = \"en-fr\"\n"
                      << "\n[output]\ndir = \"out\"\n\n[grid]\n\"input.dataset_corpora\" = [false]\n";
  const AblationResult result = run_ablation(read_grid(path), AblationOptions{});
  REQUIRE(result.runs.size() == 1);
  CHECK(result.runs[0].gold == source_dir + "/data/sample/terms-en-fr.txt");
  CHECK(result.runs[0].config.input.src_terms == source_dir + "/data/sample/terms-en.txt");
  // The same AP as the files named one by one (without corpora, as the grid says).
  const AlignConfig named = termalign_tests::sample_inputs();
  CHECK(result.runs[0].evaluation.ap == direct_ap(named));
  // Without a folder, a grid still needs [dataset] gold.
  const std::string no_gold = write_grid("no-gold", "");
  std::string text = read_file(no_gold);
  text.erase(text.find("[dataset]"), text.find("[output]") - text.find("[dataset]"));
  std::ofstream(no_gold) << text;
  CHECK_THAT(error_of(no_gold), Catch::Contains("run 1 ((base configuration)): No gold: give [dataset] gold, or a "
                                                "data_dir that holds one."));
  // A [dataset] gold over runs of two folders would score one of them against the other's gold.
  const std::string train = fresh_grid_path("two-folders");
  fs::create_directories(fs::path(train).parent_path() / "other");
  for (const char* name : {"terms-en.txt", "terms-fr.txt", "seed-en-fr.txt", "terms-en-fr.txt"})
    fs::copy_file(source_dir + "/data/sample/" + name, fs::path(train).parent_path() / "other" / name);
  std::ofstream(train) << sample_vector_lines() << "pair = \"en-fr\"\n[dataset]\ngold = \"" << source_dir
                       << "/data/sample/terms-en-fr.txt\"\n[output]\ndir = \"out\"\n[grid]\n"
                       << "\"input.data_dir\" = [\"" << source_dir << "/data/sample\", \"other\"]\n";
  CHECK_THAT(error_of(train),
             Catch::Contains("[dataset] gold would score every run, but the runs' data_dir folders "
                             "hold golds of their own"));
}

TEST_CASE("ablation: bad grids are errors naming the grid file, line and option", "[ablate]") {
  // [grid] is line 14 of the written file, its first option line 15.
  const std::string unknown = write_grid("unknown-key", "[grid]\n\"scoring.k\" = [3]\n\"scoring.kk\" = [1, 2]\n");
  CHECK(error_of(unknown) == unknown + ":16: unknown key 'scoring.kk'; did you mean 'scoring.k'?");

  const std::string empty = write_grid("empty-array", "[grid]\n\"scoring.k\" = []\n");
  CHECK(error_of(empty) == empty + ":15: 'scoring.k' has no value to try: give at least one.");

  const std::string scalar = write_grid("not-an-array", "[grid]\nscoring.k = 3\n");
  CHECK(error_of(scalar) == scalar + ":15: 'scoring.k' must be an array of the values to try.");

  const std::string wrong_type = write_grid("wrong-type", "[grid]\nmapping.normalization = [\"unit\", 2]\n");
  CHECK(error_of(wrong_type) == wrong_type + ":15: 'mapping.normalization' must be a string.");

  const std::string twice = write_grid("twice", "[grid]\n\"scoring.k\" = [3]\n[grid.scoring]\nk = [5]\n");
  CHECK(error_of(twice).find("'scoring.k' is given twice") != std::string::npos);

  const std::string invalid = write_grid("invalid-run", "[grid]\n\"scoring.k\" = [3, 0]\n");
  CHECK(error_of(invalid) ==
        invalid + ": run 2 (scoring.k=0): The CSLS neighbourhood k must be at least 1 (got 0).");

  const std::string bad_base = write_grid("bad-base", "[base.scoring]\nkay = 3\n");
  CHECK(error_of(bad_base) == bad_base + ":15: unknown key 'scoring.kay'; did you mean 'scoring.k'?");

  const std::string section = write_grid("unknown-section", "[grids]\n\"scoring.k\" = [3]\n");
  CHECK(error_of(section).find(":14: unknown section 'grids'") != std::string::npos);
}

TEST_CASE("ablation: options varied together are one axis of the grid", "[ablate]") {
  // Tables of options: the two re-weightings move together (two runs, not four), crossed with k.
  const std::string grid_path =
      write_grid("tied",
                 "[base.mapping]\nrefine_iterations = 0\n\n[grid]\n"
                 "reweight = [{mapping.src_reweight = 0.5, mapping.tgt_reweight = 0.5},\n"
                 "            {mapping.src_reweight = 0.0, mapping.tgt_reweight = 1.0}]\n\"scoring.k\" = [3, 5]\n",
                 "reranker = \"none\"\n");
  const CapturedLog log;
  const AblationGrid grid = read_grid(grid_path);
  REQUIRE(grid.axes.size() == 2);
  CHECK(grid.axes[0].option == "reweight");
  CHECK(grid.axes[0].labels == std::vector<std::string>{"0.5 / 0.5", "0.0 / 1.0"});
  const AblationResult result = run_ablation(grid, AblationOptions{});
  REQUIRE(result.runs.size() == 4);
  // The sample's lists lie beside its corpora, which these runs leave out: one note per run, not two.
  CHECK(log.lines_with("info", "lie beside the term lists").size() == 4);
  CHECK(result.options == std::vector<std::string>{"reweight", "scoring.k"});
  for (const auto& run : result.runs) {
    const bool second = run.number > 2;
    CHECK(run.labels[0] == (second ? "0.0 / 1.0" : "0.5 / 0.5"));
    CHECK(run.config.mapping.src_reweight == (second ? 0.0 : 0.5));
    CHECK(run.config.mapping.tgt_reweight == (second ? 1.0 : 0.5));
    CHECK(run.config.scoring.k == (run.number % 2 ? 3 : 5));
    CHECK(run.evaluation.ap == Approx(direct_ap(run.config)).margin(1e-12));
  }
  const auto header = split(file_lines(grid.output_dir + "/results.csv").front(), ',');
  CHECK(header[1] == "reweight");

  // What such an axis must not be: tables mixed with plain values, an empty table, an array inside, or an option
  // that another axis varies too.
  const std::string mixed = write_grid("tied-mixed", "[grid]\nreweight = [{mapping.src_reweight = 0.5}, 1]\n");
  CHECK(error_of(mixed) == mixed +
                               ":15: 'reweight' mixes tables and plain values: give plain values, or tables "
                               "of options to vary together.");
  const std::string empty = write_grid("tied-empty", "[grid]\nreweight = [{}]\n");
  CHECK(error_of(empty) == empty + ":15: 'reweight' holds an empty table: give options.");
  const std::string nested = write_grid("tied-array", "[grid]\nreweight = [{mapping.src_reweight = [0.5]}]\n");
  CHECK(error_of(nested) == nested + ":15: 'mapping.src_reweight' in 'reweight' must be a plain value.");
  const std::string twice =
      write_grid("tied-twice", "[grid]\n\"scoring.k\" = [3]\nneighbours = [{scoring.k = 5, ranking.top_m = 3}]\n");
  CHECK(error_of(twice) == twice + ":16: 'scoring.k' is varied twice (also on line 15): vary it in one place.");
  const std::string unknown = write_grid("tied-unknown", "[grid]\nreweight = [{mapping.src_reweigh = 0.5}]\n");
  CHECK_THAT(error_of(unknown), Catch::Contains(":15: unknown key 'mapping.src_reweigh'"));
  // An option of a later table only, varied by another axis too; a bad value after the first of its table (its
  // line, not the next); labels in the order written, not the options' alphabetical order.
  const std::string later = write_grid(
      "tied-later",
      "[grid]\n\"scoring.k\" = [3]\nboth = [{ranking.top_m = 3},\n  {ranking.top_m = 4, scoring.k = 5}]\n");
  CHECK(error_of(later) == later + ":17: 'scoring.k' is varied twice (also on line 15): vary it in one place.");
  const std::string line = write_grid(
      "tied-line", "[grid]\nreweight = [\n  {mapping.src_reweight = 0.5, mapping.tgt_reweight = \"x\"},\n]\n");
  CHECK(error_of(line) == line + ":16: 'mapping.tgt_reweight' must be a number.");
  const AblationGrid ordered =
      read_grid(write_grid("tied-order", "[grid]\npair = [{scoring.k = 5, orthography.weight = 0.2}]\n"));
  CHECK(ordered.axes[0].labels == std::vector<std::string>{"5 / 0.2"});
}

TEST_CASE("ablation: ablate --base starts every run from a shipped configs/ablations file", "[ablate]") {
  // The grid varies the orthographic weight; the base file sets k = 10, which the grid's [base] does not.
  const std::string grid_path = write_grid("base-file", "[grid]\n\"orthography.weight\" = [0.0, 0.1]\n");
  const std::string command = std::string("'") + TERMALIGN_CLI + "' ablate --grid '" + grid_path + "' --base '" +
                              source_dir + "/configs/ablations/k10.toml' --plot-script '' > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  AlignConfig best;
  load_config((fs::path(grid_path).parent_path() / "out" / "best.config.toml").string(), best);
  CHECK(best.scoring.k == 10);
  // The same run's AP computed outside the runner, from the base file alone plus the grid's inputs.
  AlignConfig expected = best;
  expected.output = OutputOptions{};
  const auto results = file_lines((fs::path(grid_path).parent_path() / "out" / "results.csv").string());
  REQUIRE(results.size() == 3);
  const auto header = split(results[0], ',');
  const auto row = split(results[1], ',');
  const auto column = std::find(header.begin(), header.end(), "AP") - header.begin();
  REQUIRE(column < static_cast<long>(row.size()));
  CHECK(std::stod(row[static_cast<std::size_t>(column)]) == Approx(direct_ap(expected)).margin(1e-6));
  // The grid's values as typed, both tables (not toml++'s 0.10000000000000001).
  const auto weight = std::find(header.begin(), header.end(), "orthography.weight") - header.begin();
  REQUIRE(weight < static_cast<long>(row.size()));
  std::vector<std::string> weights;
  for (std::size_t r = 1; r < results.size(); ++r) weights.push_back(split(results[r], ',')[std::size_t(weight)]);
  std::sort(weights.begin(), weights.end());
  CHECK(weights == std::vector<std::string>{"0.0", "0.1"});
  const std::string markdown = read_file((fs::path(grid_path).parent_path() / "out" / "results.md").string());
  CHECK_THAT(markdown, Catch::Contains("| 0.1 |") && !Catch::Contains("0.1000"));
  // Without --base the default k stays.
  AlignConfig plain = read_grid(grid_path).base;
  CHECK(plain.scoring.k == 3);
}

TEST_CASE("ablation: a grid loads each vector file once and reuses mapped terms, with the results of fresh runs",
          "[ablate]") {
  // Two normalisations (two mappings) x two neighbourhood sizes: four runs, two files, two sets of term vectors.
  const std::string grid_path =
      write_grid("loads-once",
                 "[base.mapping]\nrefine_iterations = 1\n\n"
                 "[grid]\n\"mapping.normalization\" = [\"unit\", \"center\"]\n\"scoring.k\" = [1, 5]\n",
                 // The term vectors are reused for the unsupervised score; the re-ranker's evidence needs the word
                 // vectors too, which the cache does not keep.
                 "reranker = \"none\"\n");
  const AblationGrid grid = read_grid(grid_path);
  const CapturedLog log;
  const AblationResult result = run_ablation(grid, AblationOptions{});
  REQUIRE(result.runs.size() == 4);
  CHECK(log.lines_with("info", "words kept").size() == 2);  // en.vec and fr.vec, read once each
  CHECK(log.lines_with("info", "term vectors of an earlier run").size() == 2);  // the second k of each mapping
  for (const auto& run : result.runs) {
    INFO("run " << run.number);
    CHECK(direct_ap(run.config) == Approx(run.evaluation.ap).epsilon(1e-12));  // a fresh run, no cache
  }
}

namespace {

std::size_t column_of(const std::vector<std::string>& columns, const std::string& name) {
  const auto found = std::find(columns.begin(), columns.end(), name);
  REQUIRE(found != columns.end());
  return static_cast<std::size_t>(found - columns.begin());
}

const AblationRun& run_number(const AblationResult& result, std::size_t number) {
  for (const auto& run : result.runs) {
    if (run.number == number) return run;
  }
  FAIL("no run " << number);
  return result.runs.front();
}

}  // namespace

TEST_CASE("ablation: repeats run the refinement's split seeds + 0..N-1, the first as the plain ablate",
          "[ablate]") {
  // The defaults refine the mapping with a held-out split of the seed lexicon: its seed is the run's random
  // choice.
  const std::string grid_path = write_grid("repeats", "[grid]\n\"scoring.k\" = [10]\n");
  const AblationGrid grid = read_grid(grid_path);
  AblationOptions options;
  options.repeats = 2;
  const AblationResult repeated = run_ablation(grid, options);
  REQUIRE(repeated.runs.size() == 1);
  const AblationRun& run = repeated.runs.front();
  REQUIRE(run.repeat_ap.size() == 2);
  AlignConfig config = run.config;
  CHECK(run.repeat_ap[0] == direct_ap(config));
  config.mapping.refine_split_seed += 1;
  CHECK(run.repeat_ap[1] == direct_ap(config));
  CHECK(run.ap == Approx((run.repeat_ap[0] + run.repeat_ap[1]) / 2).epsilon(1e-15));
  CHECK(run.ap_sd == Approx(std::abs(run.repeat_ap[0] - run.repeat_ap[1]) / std::sqrt(2.0)).margin(1e-15));
  CHECK(run.evaluation.ap == run.repeat_ap[0]);  // the first repeat's scores, the configured seed's
  CHECK(run.baseline);
  CHECK_FALSE(run.compared);

  // repeats = 1 is the plain ablate: one run at the configured seed, sd 0.
  const AblationResult plain = run_ablation(grid, AblationOptions{});
  REQUIRE(plain.runs.size() == 1);
  CHECK(plain.runs[0].repeat_ap.size() == 1);
  CHECK(plain.runs[0].ap == run.repeat_ap[0]);
  CHECK(plain.runs[0].evaluation.ap == run.repeat_ap[0]);
  CHECK(plain.runs[0].ap_sd == 0);
}

TEST_CASE("ablation: the sd over repeats is 0 when the split seed plays no part", "[ablate]") {
  // Without refinement iterations no split is drawn: every repeat is the same run.
  const std::string grid_path =
      write_grid("seedless-repeats", "[base.mapping]\nrefine_iterations = 0\n\n[grid]\n\"scoring.k\" = [10]\n");
  AblationOptions options;
  options.repeats = 3;
  const AblationResult result = run_ablation(read_grid(grid_path), options);
  REQUIRE(result.runs.size() == 1);
  const AblationRun& run = result.runs.front();
  REQUIRE(run.repeat_ap.size() == 3);
  CHECK(run.repeat_ap[1] == run.repeat_ap[0]);
  CHECK(run.repeat_ap[2] == run.repeat_ap[0]);
  CHECK(run.ap_sd == 0);
  CHECK(run.ap == Approx(run.repeat_ap[0]).epsilon(1e-15));
}

TEST_CASE("ablation: a point identical to the baseline is never marked, a far worse one is, in every output",
          "[ablate]") {
  // Run 2 differs from the baseline only in its thread count (the outputs are identical for any); run 3 drops the
  // re-ranker, which costs the sample about a third of its AP.
  const std::string grid_path = write_grid("marks",
                                           "[grid]\nvariant = [{scoring.threads = 0}, {scoring.threads = 1}, "
                                           "{input.reranker = \"none\"}]\n");
  AblationOptions options;
  options.repeats = 2;
  options.significance.resamples = 2000;
  options.results_plot_script = source_dir + "/scripts/plot_ablation.py";
  const AblationResult result = run_ablation(read_grid(grid_path), options);
  REQUIRE(result.runs.size() == 3);
  const AblationRun& baseline = run_number(result, 1);
  const AblationRun& same = run_number(result, 2);
  const AblationRun& worse = run_number(result, 3);
  CHECK(baseline.baseline);
  CHECK_FALSE(baseline.significant);
  CHECK(same.repeat_ap == baseline.repeat_ap);
  CHECK(same.compared);
  CHECK(same.difference == 0);
  CHECK(same.p_value == 1);
  CHECK_FALSE(same.significant);
  CHECK(worse.compared);
  CHECK(worse.difference == Approx(worse.ap - baseline.ap).epsilon(1e-15));
  CHECK(worse.difference < -0.1);
  CHECK(worse.p_value < 0.05);
  CHECK(worse.p_value >= 1.0 / 2001);
  CHECK(worse.significant);

  const fs::path out = fs::path(grid_path).parent_path() / "out";
  // CSV: mean, sd and the mark of each run.
  const auto csv = file_lines((out / "results.csv").string());
  REQUIRE(csv.size() == 1 + 3);
  const auto columns = split(csv[0], ',');
  const std::size_t number = 0, ap = column_of(columns, "AP"), sd = column_of(columns, "AP sd"),
                    mark = column_of(columns, "significant"), p = column_of(columns, "p");
  for (std::size_t i = 1; i < csv.size(); ++i) {
    const auto row = split(csv[i], ',');
    REQUIRE(row.size() == columns.size());
    const AblationRun& run = run_number(result, std::stoul(row[number]));
    CHECK(std::stod(row[ap]) == Approx(run.ap).margin(1e-6));
    CHECK(std::stod(row[sd]) == Approx(run.ap_sd).margin(1e-6));
    CHECK(row[mark] == (run.baseline ? "baseline" : run.significant ? "yes" : "no"));
    if (!run.baseline) CHECK(std::stod(row[p]) == Approx(run.p_value).margin(1e-6));
  }
  // Markdown: the same rows, and the legend naming the repeats, the test and the level.
  const std::string markdown = read_file((out / "results.md").string());
  CHECK_THAT(markdown, Catch::Contains("the mean over 2 repeats, mapping.refine_split_seed + 0 to 1"));
  CHECK_THAT(markdown, Catch::Contains("significant: p < 0.05"));
  CHECK_THAT(markdown, Catch::Contains("| yes |"));
  CHECK_THAT(markdown, Catch::Contains("| baseline |"));
  // JSON: the settings and one object per run, the marks as booleans.
  const std::string json = read_file((out / "results.json").string());
  CHECK_THAT(json, Catch::Contains("\"repeats\": 2,"));
  CHECK_THAT(json, Catch::Contains("\"resamples\": 2000,"));
  CHECK_THAT(json, Catch::Contains(fmt::format("\"run\": 3, \"options\": {{\"variant\": \"none\"}}, \"ap\": {}, "
                                               "\"ap_sd\": {}, \"ap_repeats\": [{}, {}]",
                                               worse.ap, worse.ap_sd, worse.repeat_ap[0], worse.repeat_ap[1])));
  CHECK_THAT(json, Catch::Contains(fmt::format("\"difference\": {}, \"p_value\": {}, \"significant\": true",
                                               worse.difference, worse.p_value)));
  CHECK_THAT(json, Catch::Contains("\"difference\": 0, \"p_value\": 1, \"significant\": false"));
  // The plot of the table, when matplotlib is there.
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0) {
    std::ifstream png((out / "results.png").string(), std::ios::binary);
    char magic[8] = {};
    png.read(magic, 8);
    CHECK(std::string(magic, 8) == "\x89PNG\r\n\x1a\n");
  }
}

TEST_CASE("ablation: bad repeat and test options are usage errors in words", "[ablate]") {
  AblationOptions options;
  options.repeats = 0;
  CHECK_THROWS_WITH(validate(options), Catch::Contains("--repeats must be at least 1"));
  options = AblationOptions{};
  options.level = 1.5;
  CHECK_THROWS_WITH(validate(options), Catch::Contains("--level is a significance level"));
  options = AblationOptions{};
  options.significance.resamples = 0;
  CHECK_THROWS_WITH(validate(options), Catch::Contains("--resamples"));
  const std::string grid_path = write_grid("bad-baseline", "[grid]\n\"scoring.k\" = [3, 10]\n");
  options = AblationOptions{};
  options.baseline = 3;
  CHECK_THROWS_WITH(run_ablation(read_grid(grid_path), options),
                    Catch::Contains("--baseline 3: the grid has 2 runs."));
  // From the CLI: usage errors (exit 2), before any run, and no results written.
  const fs::path out = fs::path(grid_path).parent_path() / "out";
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--repeats 0", "--repeats must be at least 1 (got 0)."},
           {"--level 1", "--level is a significance level, above 0 and below 1 (got 1)."},
           {"--baseline 3", "--baseline 3: the grid has 2 runs."},
           {"--resamples 0", "must be at least 1 (got 0)"}}) {
    const auto result =
        ::run(std::string("'") + TERMALIGN_CLI + "' ablate --grid '" + grid_path + "' " + flags + " 2>&1");
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.output, Catch::Contains(message));
    CHECK_FALSE(fs::exists(out / "results.csv"));
  }
}
