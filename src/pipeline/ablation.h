// `termalign ablate`: run the cartesian product of a grid of options, score each run, tabulate the results.
#pragma once

#include <cstddef>
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
  AlignConfig config;                 // resolved
  EvaluationResult evaluation;        // with the breakdown
  double seconds = 0;                 // wall time of the alignment and its evaluation
};

struct AblationOptions {
  std::string plot_script;  // scripts/plot_curve.py, run with /usr/bin/python3 (empty = no plot)
};

struct AblationResult {
  std::vector<std::string> options;  // the varied options, one column each
  std::vector<AblationRun> runs;     // sorted by AP, best first (ties in run order)
};

// Runs every configuration of the grid in turn (each run is multi-threaded) and writes to grid.output_dir:
// results.md and results.csv (one row per run, best first), best.config.toml (`termalign align --config` on it
// reproduces best.submission.tsv), best.submission.tsv, best.curve.tsv and best.curve.png (skipped with a
// warning when the plot cannot be drawn). Every file is written atomically.
AblationResult run_ablation(const AblationGrid& grid, const AblationOptions& options);

// The result table: Markdown, and CSV with the same columns.
std::string format_ablation_markdown(const AblationResult& result);
std::string format_ablation_csv(const AblationResult& result);

}  // namespace termalign
