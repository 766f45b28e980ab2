// `termalign ablate`: run the cartesian product of a grid of options, score each run, tabulate the results.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/evaluation.h"

namespace termalign {

// One option set to one value, as TOML text (3, "unit", true), at its line of the grid file.
struct GridSetting {
  std::string option, value;
  std::size_t line = 0;
};

// One axis of the grid: an option and the values to try ("scoring.k" = [3, 5, 10]), or several options varied
// together: a key of free choice whose values are tables of options (vectors = [{input.src_vectors = "en.vec",
// input.tgt_vectors = "fr.vec"}, {input.src_vectors = "en.bin", input.tgt_vectors = "fr.bin"}]).
struct GridAxis {
  std::string option;  // the option's dotted name, or the key of the options varied together
  std::vector<std::vector<GridSetting>> values;  // the settings of each value, in the order of the grid file
  std::vector<std::string>
      labels;            // each value as shown in the tables: 3, unit, true; tied values joined by " / "
  std::size_t line = 0;  // of the axis in the grid file
};

// A grid file (TOML; relative paths are relative to it):
//   [base]      options of `termalign align` over the defaults, as in a configuration file: nested tables
//               ([base.input] src_vectors = "...") or dotted keys (input.src_vectors = "...")
//   [dataset]   gold = "terms-en-fr.txt"             the gold pairs; the term lists are input.src/tgt_terms
//               (without [dataset], each run's data_dir's gold; with it, runs of several data_dir folders are an
//               error: one gold would score them all)
//   [grid]      "scoring.k" = [3, 5, 10]              each option with an array of values to try, or options
//               reweight = [{mapping.src_reweight = 0.5, mapping.tgt_reweight = 0.5}, ...]   varied together
//   [output]    dir = "results/ablation"              where the tables, the best configuration and its curve go
struct AblationGrid {
  std::string path;
  AlignConfig base;
  std::string gold, output_dir;
  std::vector<GridAxis> axes;  // in the order of the grid file; the last one varies fastest
};

// Reads and checks a grid: an unknown section or key, an option that is not an array of values (or of tables of
// options), an empty array or table, an option varied by two axes, a bad value or a run whose configuration does
// not validate are errors naming the grid file (and line).
// With `base_config` (a configuration file, as `termalign ablate --base`), its keys go over the grid's [base]
// before the runs are checked: every run starts from it.
AblationGrid read_grid(const std::string& path, const std::string& base_config = "");

struct AblationRun {
  std::size_t number = 0;             // 1-based, in the order of the cartesian product
  std::string gold;                   // [dataset] gold, else its data_dir's
  std::vector<std::string> labels;    // the value of each axis, as shown in the tables
  std::vector<GridSetting> settings;  // each varied option's value, in the order of the axes
  AlignConfig config;                 // resolved (its configured refine_split_seed: the first repeat's)
  EvaluationResult evaluation;        // the first repeat's, with the breakdown
  double seconds = 0;                 // wall time of the alignments and their evaluations, all repeats
  // Over the repeats (one with repeats = 1): AP of each repeat, their mean and sample sd (0 for one repeat), and
  // the means of the other columns.
  std::vector<double> repeat_ap;
  double ap = 0, ap_sd = 0, ap_interpolated = 0, tp = 0, recall = 0;
  std::map<std::string, double> subset_ap;  // the breakdown's AP of each subset
  // Against the baseline point (AblationOptions::baseline): the difference of the mean APs and the p-value of the
  // paired sign-flip test over source terms of the repeat-averaged AP contributions; `compared` is false for the
  // baseline itself and for a point scored against another gold.
  bool baseline = false, compared = false, significant = false;
  double difference = 0, p_value = 1;
};

struct AblationOptions {
  std::string plot_script;          // scripts/plot_curve.py, run with /usr/bin/python3 (empty = no plot)
  std::string results_plot_script;  // scripts/plot_ablation.py, drawing results.png (empty = no plot)
  // Each grid point is run `repeats` times, repeat r with mapping.refine_split_seed = its value + r (the one
  // random choice of a run).
  std::size_t repeats = 1;
  std::size_t baseline = 1;          // the run number every other point is compared with
  double level = 0.05;               // a point is marked significant when its p-value is below this
  SignificanceOptions significance;  // resamples and seed of the test
};

// Usage errors in words: repeats 0, a level outside (0, 1), zero resamples.
void validate(const AblationOptions& options);

struct AblationResult {
  std::vector<std::string> options;  // the varied options, one column each
  std::vector<AblationRun> runs;     // sorted by (mean) AP, best first (ties in run order)
  std::size_t repeats = 1, baseline = 1;
  double level = 0.05;
  SignificanceOptions significance;
};

// Runs every configuration of the grid in turn, options.repeats times each (each run is multi-threaded), and
// writes to grid.output_dir: results.md, results.csv and results.json (one row per grid point, best mean AP
// first, with the sd over the repeats and the comparison with the baseline point), results.png (the table as bars;
// skipped with a warning when it cannot be drawn), best.config.toml (`termalign align --config` on it reproduces
// best.submission.tsv, the first repeat's), best.submission.tsv, best.curve.tsv and best.curve.png (likewise).
// Every file is written atomically. A baseline past the last run is a usage error.
AblationResult run_ablation(const AblationGrid& grid, const AblationOptions& options);

// The result table: Markdown (with a line saying what the columns are), CSV with the same columns, and JSON (the
// settings of the repeats and of the test, and one object per point).
std::string format_ablation_markdown(const AblationResult& result);
std::string format_ablation_csv(const AblationResult& result);
std::string format_ablation_json(const AblationResult& result);

}  // namespace termalign
