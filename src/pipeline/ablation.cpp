#include "pipeline/ablation.h"

#include <spdlog/fmt/fmt.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "io/io.h"
#include "pipeline/ranking.h"
#include "termalign/aligner.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "util/json_escape.h"

namespace termalign {

namespace {

namespace fs = std::filesystem;

// A grid value the user must change: a usage error naming the grid file (and line), as for a configuration file.
[[noreturn]] void throw_grid_error(const std::string& path, std::size_t line, const std::string& message) {
  throw Error(ErrorKind::usage, path + (line ? ":" + std::to_string(line) : std::string()) + ": " + message);
}

// A leaf of a TOML table under its dotted name: `[grid.scoring] k = ...`, `scoring.k = ...` and
// `"scoring.k" = ...` all give "scoring.k".
struct Leaf {
  std::string name;
  const toml::node* node = nullptr;
  std::size_t line = 0, column = 0;
};

void flatten(const toml::table& table, const std::string& prefix, std::vector<Leaf>& leaves) {
  for (const auto& [key, node] : table) {
    const std::string name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (node.is_table()) {
      flatten(*node.as_table(), name, leaves);
    } else {
      leaves.push_back({name, &node, static_cast<std::size_t>(node.source().begin.line),
                        static_cast<std::size_t>(node.source().begin.column)});
    }
  }
}

// In file order (line, then column: the options of an inline table as written); an option given twice (in two of
// the forms above) is an error.
std::vector<Leaf> leaves_of(const toml::table& table, const std::string& path) {
  std::vector<Leaf> leaves;
  flatten(table, "", leaves);
  std::stable_sort(leaves.begin(), leaves.end(), [](const Leaf& a, const Leaf& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  std::set<std::string> seen;
  for (const auto& leaf : leaves) {
    if (!seen.insert(leaf.name).second) throw_grid_error(path, leaf.line, "'" + leaf.name + "' is given twice.");
  }
  return leaves;
}

std::string toml_text(const toml::node& node) {
  // A float as typed (0.1, not toml++'s 0.10000000000000001): the shortest text that reads back to it, still a
  // TOML float.
  if (const auto* number = node.as_floating_point()) {
    std::string text = fmt::format("{}", number->get());
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
  }
  std::ostringstream text;
  node.visit([&](const auto& value) { text << value; });
  return text.str();
}

// Applies the settings to `config`, each as a configuration snippet in which it sits on its line of the grid file,
// so that the errors of apply_toml (unknown key, wrong type, bad name) point into the grid file, also for the
// options of one inline table, which share a line.
void apply_settings(AlignConfig& config, const std::vector<GridSetting>& settings, const std::string& path) {
  for (const auto& setting : settings) {
    const bool bare = !setting.option.empty() && setting.option.front() != '.' && setting.option.back() != '.' &&
                      setting.option.find("..") == std::string::npos &&
                      std::all_of(setting.option.begin(), setting.option.end(), [](char c) {
                        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                      });
    if (!bare) throw_grid_error(path, setting.line, "unknown key '" + setting.option + "'.");
    const std::string text =
        std::string(setting.line > 0 ? setting.line - 1 : 0, '\n') + setting.option + " = " + setting.value + "\n";
    apply_toml(config, text, path);
  }
}

// A value as the tables show it: a string without its quotes, anything else as TOML writes it.
std::string plain_label(const toml::node& value) {
  return value.is_string() ? value.as_string()->get() : toml_text(value);
}

const toml::table* section_of(const toml::table& grid_table, const std::string& name) {
  return grid_table[name].as_table();
}

// A string option of [dataset] or [output], relative to the grid file; every other key is unknown.
std::string path_option(const toml::table* section, const std::string& section_name, const std::string& key,
                        const std::string& path) {
  if (!section) throw_grid_error(path, 0, "[" + section_name + "] " + key + " is missing.");
  for (const auto& leaf : leaves_of(*section, path)) {
    if (leaf.name != key)
      throw_grid_error(path, leaf.line, "unknown key '" + section_name + "." + leaf.name + "'.");
    if (!leaf.node->is_string())
      throw_grid_error(path, leaf.line, "'" + section_name + "." + key + "' must be a string.");
    const fs::path value(leaf.node->as_string()->get());
    return (value.is_relative() ? fs::path(path).parent_path() / value : value).lexically_normal().string();
  }
  throw_grid_error(path, section->source().begin.line, "[" + section_name + "] " + key + " is missing.");
}

// The runs of the cartesian product, in order (the last axis varies fastest), each with its configuration; `note`:
// resolve_dataset's notes in the log (once per run of the grid, not again for its check).
std::vector<AblationRun> expand(const AblationGrid& grid, bool note = true) {
  std::set<std::string> folder_golds;
  std::size_t count = 1;
  for (const auto& axis : grid.axes) count *= axis.values.size();
  std::vector<AblationRun> runs(count);
  for (std::size_t number = 0; number < count; ++number) {
    AblationRun& run = runs[number];
    run.number = number + 1;
    run.config = grid.base;
    std::vector<GridSetting>& settings = run.settings;
    std::size_t rest = number;
    for (std::size_t a = grid.axes.size(); a-- > 0;) {
      const GridAxis& axis = grid.axes[a];
      const std::size_t choice = rest % axis.values.size();
      rest /= axis.values.size();
      settings.insert(settings.begin(), axis.values[choice].begin(), axis.values[choice].end());
      run.labels.insert(run.labels.begin(), axis.labels[choice]);
    }
    apply_settings(run.config, settings, grid.path);
    // A dataset folder fills the inputs not given, as for `align --data-dir`; its gold scores the run when the
    // grid names none.
    const std::string folder_gold = resolve_dataset(run.config, note);
    if (!folder_gold.empty()) folder_golds.insert(folder_gold);
    run.gold = grid.gold.empty() ? folder_gold : grid.gold;
  }
  // One [dataset] gold over runs of several folders would score some of them against another dataset's gold.
  if (!grid.gold.empty() && folder_golds.size() > 1) {
    throw_grid_error(
        grid.path, 0,
        "[dataset] gold would score every run, but the runs' data_dir folders hold golds of their own (" +
            *folder_golds.begin() + ", " + *std::next(folder_golds.begin()) +
            "): leave [dataset] out to score each run against its folder's gold.");
  }
  return runs;
}

std::string describe(const std::vector<std::string>& options, const std::vector<std::string>& labels) {
  std::string text;
  for (std::size_t i = 0; i < options.size(); ++i) text += (i ? " " : "") + options[i] + "=" + labels[i];
  return text.empty() ? "(base configuration)" : text;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

const char* const breakdown_subsets[] = {"identical", "close", "far", "single-word", "multi-word"};

std::vector<std::string> header(const AblationResult& result) {
  std::vector<std::string> columns{"run"};
  columns.insert(columns.end(), result.options.begin(), result.options.end());
  for (const char* name : {"AP", "AP sd", "AP interpolated", "TP", "recall"}) columns.push_back(name);
  for (const char* subset : breakdown_subsets) columns.push_back(std::string("AP ") + subset);
  for (const char* name : {"difference", "p", "significant", "seconds"}) columns.push_back(name);
  return columns;
}

// "baseline", "yes" (p below the level), "no", or "n/a" (scored against another gold than the baseline's).
std::string significance_cell(const AblationRun& run) {
  if (run.baseline) return "baseline";
  if (!run.compared) return "n/a";
  return run.significant ? "yes" : "no";
}

std::vector<std::string> cells(const AblationRun& run, int decimals) {
  std::vector<std::string> row{std::to_string(run.number)};
  row.insert(row.end(), run.labels.begin(), run.labels.end());
  row.push_back(fixed(run.ap, decimals));
  row.push_back(fixed(run.ap_sd, decimals));
  row.push_back(fixed(run.ap_interpolated, decimals));
  // A count for one repeat, a mean over several.
  row.push_back(run.repeat_ap.size() > 1 ? fixed(run.tp, 1) : fixed(run.tp, 0));
  row.push_back(fixed(run.recall, decimals));
  for (const char* subset : breakdown_subsets) row.push_back(fixed(run.subset_ap.at(subset), decimals));
  row.push_back(run.compared ? fixed(run.difference, decimals) : "");
  row.push_back(run.compared ? fixed(run.p_value, decimals) : "");
  row.push_back(significance_cell(run));
  row.push_back(fixed(run.seconds, 2));
  return row;
}

// A JSON string.
std::string json_string(const std::string& value) { return "\"" + detail::json_escape(value) + "\""; }

// Each source term's share of a run's AP: the precision at each of its hits over the gold's size (their sum is the
// AP). `result` evaluated with details.
void add_contributions(const EvaluationResult& result, const PairList& predictions, double weight,
                       std::map<std::string, double>& contributions) {
  if (result.n_gold == 0) return;
  for (const Hit& hit : result.hits) {
    contributions[predictions.pairs[hit.prediction].first] +=
        weight * hit.precision / static_cast<double>(result.n_gold);
  }
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string shell_quoted(const std::string& value) {
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Draws `curve_path` (a curve, or results.csv) with its script (scripts/plot_curve.py, scripts/plot_ablation.py)
// into a temporary file renamed onto `png_path`; any failure (no script, no /usr/bin/python3, no matplotlib) is a
// warning, not an error.
void plot_curve(const std::string& script, const std::string& curve_path, const std::string& png_path) {
  // An earlier grid's plot in the same folder would pass for this one's.
  std::error_code removed;
  fs::remove(png_path, removed);
  if (script.empty()) {
    logger().info("{} not drawn: no plot script given", png_path);
    return;
  }
  if (!fs::exists(script)) {
    logger().warn("{} not drawn: the plot script {} is not there", png_path, script);
    return;
  }
  const std::string temporary = png_path + ".partial.png";  // plot_curve.py picks the format from the suffix
  // Its output goes to stderr: stdout belongs to the CLI.
  const std::string command = "/usr/bin/python3 " + shell_quoted(script) + " " + shell_quoted(curve_path) + " " +
                              shell_quoted(temporary) + " 1>&2";
  const int status = std::system(command.c_str());
  std::error_code error;
  if (status != 0) {
    fs::remove(temporary, error);
    logger().warn("{} not drawn: `{}` failed (status {}); it needs /usr/bin/python3 with matplotlib", png_path,
                  command, status);
    return;
  }
  fs::rename(temporary, png_path, error);
  if (error) throw_output_error(png_path, error.message());
}

}  // namespace

AblationGrid read_grid(const std::string& path, const std::string& base_config) {
  toml::table table;
  const std::string text = read_file(path);
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    throw_input_error(path, error.source().begin.line, std::string(error.description()));
  }
  AblationGrid grid;
  grid.path = path;
  for (const auto& [name, node] : table) {
    const std::string section(name.str());
    const std::size_t line = node.source().begin.line;
    if (section != "base" && section != "dataset" && section != "grid" && section != "output") {
      throw_grid_error(path, line,
                       "unknown section '" + section + "': use [base], [dataset], [grid] and [output].");
    }
    if (!node.is_table()) throw_grid_error(path, line, "'" + section + "' must be a table ([" + section + "]).");
  }
  if (const toml::table* base = section_of(table, "base")) {
    std::vector<GridSetting> settings;
    for (const auto& leaf : leaves_of(*base, path))
      settings.push_back({leaf.name, toml_text(*leaf.node), leaf.line});
    apply_settings(grid.base, settings, path);
  }
  // Its keys override the grid's [base] (the inputs usually come from the grid, the change from the file).
  if (!base_config.empty()) load_config(base_config, grid.base);
  // Without [dataset], each run is scored against its data_dir's gold (checked below).
  if (section_of(table, "dataset")) grid.gold = path_option(section_of(table, "dataset"), "dataset", "gold", path);
  grid.output_dir = path_option(section_of(table, "output"), "output", "dir", path);
  if (const toml::table* axes = section_of(table, "grid")) {
    std::map<std::string, std::size_t> varied;  // option -> line of its axis
    for (const auto& leaf : leaves_of(*axes, path)) {
      const std::string name = "'" + leaf.name + "'";
      const toml::array* values = leaf.node->as_array();
      if (!values) throw_grid_error(path, leaf.line, name + " must be an array of the values to try.");
      if (values->empty()) throw_grid_error(path, leaf.line, name + " has no value to try: give at least one.");
      GridAxis axis{leaf.name, {}, {}, leaf.line};
      const bool tied = values->front().is_table();
      for (const auto& value : *values) {
        if (value.is_table() != tied || value.is_array()) {
          throw_grid_error(path, leaf.line,
                           name + (value.is_array() ? " holds an array" : " mixes tables and plain values") +
                               ": give plain values, or tables of options to vary together.");
        }
        std::vector<GridSetting> settings;
        std::string label;
        if (tied) {
          for (const auto& option : leaves_of(*value.as_table(), path)) {
            if (option.node->is_array())
              throw_grid_error(path, option.line, "'" + option.name + "' in " + name + " must be a plain value.");
            settings.push_back({option.name, toml_text(*option.node), option.line});
            label += (label.empty() ? "" : " / ") + plain_label(*option.node);
          }
          if (settings.empty()) throw_grid_error(path, leaf.line, name + " holds an empty table: give options.");
        } else {
          settings.push_back({axis.option, toml_text(value), leaf.line});
          label = plain_label(value);
        }
        AlignConfig checked = grid.base;  // an unknown option or a bad value is reported before any run
        apply_settings(checked, settings, path);
        axis.values.push_back(std::move(settings));
        axis.labels.push_back(std::move(label));
      }
      std::set<std::string> own;  // this axis's options, in any of its tables
      for (const auto& settings : axis.values) {
        for (const auto& setting : settings) {
          if (!own.insert(setting.option).second) continue;
          if (!varied.emplace(setting.option, leaf.line).second) {
            throw_grid_error(path, setting.line,
                             "'" + setting.option + "' is varied twice (also on line " +
                                 std::to_string(varied[setting.option]) + "): vary it in one place.");
          }
        }
      }
      grid.axes.push_back(std::move(axis));
    }
  }
  std::vector<std::string> options;
  for (const auto& axis : grid.axes) options.push_back(axis.option);
  for (const auto& run : expand(grid, /*note=*/false)) {
    try {
      run.config.validate();
      if (run.gold.empty()) throw_usage_error("No gold: give [dataset] gold, or a data_dir that holds one.");
    } catch (const Error& error) {
      throw_grid_error(
          path, 0,
          "run " + std::to_string(run.number) + " (" + describe(options, run.labels) + "): " + error.what());
    }
  }
  return grid;
}

void validate(const AblationOptions& options) {
  if (options.repeats == 0) throw_usage_error("--repeats must be at least 1 (got 0).");
  if (!(options.level > 0 && options.level < 1)) {
    throw_usage_error(
        fmt::format("--level is a significance level, above 0 and below 1 (got {}).", options.level));
  }
  if (options.baseline == 0) throw_usage_error("--baseline is a run number, from 1 (got 0).");
  validate(options.significance);
}

AblationResult run_ablation(const AblationGrid& grid, const AblationOptions& options) {
  validate(options);
  AblationResult result;
  for (const auto& axis : grid.axes) result.options.push_back(axis.option);
  result.runs = expand(grid);
  result.repeats = options.repeats;
  result.baseline = options.baseline;
  result.level = options.level;
  result.significance = options.significance;
  const std::size_t count = result.runs.size();
  if (options.baseline > count) {
    throw_usage_error(
        fmt::format("--baseline {}: the grid has {} run{}.", options.baseline, count, count == 1 ? "" : "s"));
  }
  std::map<std::string, PairList> golds;  // read once per path
  auto gold_of = [&](const std::string& gold_path) -> const PairList& {
    auto found = golds.find(gold_path);
    if (found == golds.end()) found = golds.emplace(gold_path, read_pairs(gold_path, PairFileKind::gold)).first;
    return found->second;
  };
  std::error_code error;
  fs::create_directories(grid.output_dir, error);
  if (error) throw_output_error(grid.output_dir, error.message());

  std::map<std::string, TermList> term_lists;  // read once per path, not once per run
  auto term_list = [&](const std::string& term_path) -> const TermList& {
    auto found = term_lists.find(term_path);
    if (found == term_lists.end()) found = term_lists.emplace(term_path, read_term_list(term_path)).first;
    return found->second;
  };
  // Each distinct vector load once for the whole grid (runs that vary other options copy it).
  VectorCache vectors;
  EvaluationOptions evaluation_options;
  evaluation_options.breakdown = true;
  evaluation_options.details = true;  // each hit's source term: the contributions of the test
  const std::size_t repeats = options.repeats;
  std::size_t best = 0;
  std::vector<RankedPair> best_pairs;
  std::vector<CurvePoint> best_curve;
  // Each point's source terms' AP contributions, averaged over its repeats.
  std::vector<std::map<std::string, double>> contributions(count);
  for (std::size_t i = 0; i < count; ++i) {
    AblationRun& run = result.runs[i];
    logger().info("run {}/{}: {}", run.number, count, describe(result.options, run.labels));
    std::vector<RankedPair> first_pairs;
    std::vector<CurvePoint> first_curve;
    for (const char* subset : breakdown_subsets) run.subset_ap[subset] = 0;
    for (std::size_t r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      AlignConfig config = run.config;
      config.mapping.refine_split_seed += r;
      std::vector<RankedPair> pairs = align_terms(config, nullptr, single_process(), &vectors);
      PairList predictions;
      predictions.path = "run " + std::to_string(run.number);
      predictions.pairs.reserve(pairs.size());
      for (const auto& pair : pairs) predictions.pairs.emplace_back(pair.source, pair.target);
      std::vector<CurvePoint> curve;
      EvaluationResult evaluation =
          evaluate(gold_of(run.gold), predictions, &term_list(run.config.input.src_terms),
                   &term_list(run.config.input.tgt_terms), evaluation_options, r == 0 ? &curve : nullptr);
      add_contributions(evaluation, predictions, 1.0 / static_cast<double>(repeats), contributions[i]);
      evaluation.hits.clear();
      evaluation.missed.clear();
      run.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      run.repeat_ap.push_back(evaluation.ap);
      run.ap_interpolated += evaluation.ap_interpolated / static_cast<double>(repeats);
      run.tp += static_cast<double>(evaluation.tp) / static_cast<double>(repeats);
      run.recall += evaluation.recall / static_cast<double>(repeats);
      for (const char* subset : breakdown_subsets)
        run.subset_ap[subset] += evaluation.breakdown.at(subset).ap / static_cast<double>(repeats);
      if (repeats > 1) {
        logger().info("run {}/{}, repeat {}/{} (refine_split_seed {}): AP {:.4f}", run.number, count, r + 1,
                      repeats, config.mapping.refine_split_seed, evaluation.ap);
      }
      if (r == 0) {
        run.evaluation = std::move(evaluation);
        first_pairs = std::move(pairs);
        first_curve = std::move(curve);
      }
    }
    // Shifted by the first repeat's AP: repeats that agree give exactly their AP and an sd of exactly 0.
    const double first = run.repeat_ap.front();
    double shift = 0;
    for (const double ap : run.repeat_ap) shift += ap - first;
    shift /= static_cast<double>(repeats);
    run.ap = first + shift;
    double squares = 0;
    for (const double ap : run.repeat_ap) squares += (ap - first - shift) * (ap - first - shift);
    run.ap_sd = repeats > 1 ? std::sqrt(squares / static_cast<double>(repeats - 1)) : 0.0;
    logger().info("run {}/{}: AP {:.4f}{}, {} true pairs, {:.1f} s", run.number, count, run.ap,
                  repeats > 1 ? fmt::format(" (mean of {}, sd {:.4f})", repeats, run.ap_sd) : std::string(),
                  run.evaluation.tp, run.seconds);
    if (i == 0 || run.ap > result.runs[best].ap) {
      best = i;
      best_pairs = std::move(first_pairs);
      best_curve = std::move(first_curve);
    }
  }

  // Each point against the baseline: the paired sign-flip test over the source terms (of the gold and of either
  // point's lists) of the repeat-averaged contributions, in the order of the terms.
  const std::size_t base = options.baseline - 1;
  result.runs[base].baseline = true;
  for (std::size_t i = 0; i < count; ++i) {
    AblationRun& run = result.runs[i];
    if (i == base || run.gold != result.runs[base].gold) continue;
    std::map<std::string, double> differences = contributions[i];
    for (const auto& [source, share] : contributions[base]) differences[source] -= share;
    std::vector<double> units;
    units.reserve(differences.size());
    for (const auto& entry : differences) units.push_back(entry.second);
    run.compared = true;
    run.difference = run.ap - result.runs[base].ap;
    run.p_value = sign_flip_p_value(units, options.significance);
    run.significant = run.p_value < options.level;
  }

  // The best run's files first: `best` indexes the runs before sorting.
  const fs::path dir(grid.output_dir);
  AlignConfig best_config = result.runs[best].config;
  best_config.output.out = (dir / "best.submission.tsv").string();
  // Its other outputs were no file of the best run (or every run's, the last run's surviving): not written again.
  best_config.output.scores.clear();
  best_config.output.explain.clear();
  best_config.output.save_mapping.clear();
  best_config.output.save_mapped_vectors.clear();
  write_pairs(best_config.output.out, best_pairs, false);
  write_file_atomically((dir / "best.config.toml").string(), to_toml(best_config));
  const std::string curve_path = (dir / "best.curve.tsv").string();
  write_file_atomically(curve_path, format_curve(best_curve));
  plot_curve(options.plot_script, curve_path, (dir / "best.curve.png").string());

  std::stable_sort(result.runs.begin(), result.runs.end(),
                   [](const AblationRun& a, const AblationRun& b) { return a.ap > b.ap; });
  write_file_atomically((dir / "results.md").string(), format_ablation_markdown(result));
  const std::string csv_path = (dir / "results.csv").string();
  write_file_atomically(csv_path, format_ablation_csv(result));
  write_file_atomically((dir / "results.json").string(), format_ablation_json(result));
  plot_curve(options.results_plot_script, csv_path, (dir / "results.png").string());
  logger().info("best: run {} ({}), AP {:.4f}; results in {}", result.runs.front().number,
                describe(result.options, result.runs.front().labels), result.runs.front().ap, grid.output_dir);
  return result;
}

namespace {

// What the columns of results.md are, under its table.
std::string legend(const AblationResult& result) {
  return fmt::format(
      "AP: {}; AP sd: their sample standard deviation. difference, p: against run {} (the baseline), by a "
      "paired sign-flip randomisation test over source terms of the repeat-averaged AP contributions ({} "
      "resamples, seed {}); significant: p < {}.",
      result.repeats > 1 ? fmt::format("the mean over {} repeats, mapping.refine_split_seed + 0 to {}",
                                       result.repeats, result.repeats - 1)
                         : std::string("one run each"),
      result.baseline, result.significance.resamples, result.significance.seed, result.level);
}

}  // namespace

std::string format_ablation_markdown(const AblationResult& result) {
  auto line = [](const std::vector<std::string>& row) {
    std::string text = "|";
    for (const auto& cell : row) {
      std::string escaped;  // a '|' in an option value would end the cell
      for (char c : cell) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
      text += " " + escaped + " |";
    }
    return text + "\n";
  };
  const std::vector<std::string> columns = header(result);
  std::string text = line(columns);
  std::vector<std::string> rule{"---:"};  // numbers right-aligned, option values left-aligned
  rule.insert(rule.end(), result.options.size(), "---");
  rule.insert(rule.end(), columns.size() - rule.size(), "---:");
  text += line(rule);
  for (const auto& run : result.runs) text += line(cells(run, 4));
  return text + "\n" + legend(result) + "\n";
}

std::string format_ablation_csv(const AblationResult& result) {
  auto line = [](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + csv_field(row[i]);
    return text + "\n";
  };
  std::string text = line(header(result));
  for (const auto& run : result.runs) text += line(cells(run, 6));
  return text;
}

std::string format_ablation_json(const AblationResult& result) {
  std::string json = fmt::format(
      "{{\"repeats\": {}, \"repeat_seed\": \"mapping.refine_split_seed\", \"baseline\": {}, \"level\": {}, "
      "\"test\": \"paired sign-flip randomisation over source terms of the repeat-averaged AP contributions\", "
      "\"resamples\": {}, \"seed\": {},\n \"runs\": [",
      result.repeats, result.baseline, result.level, result.significance.resamples, result.significance.seed);
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    const AblationRun& run = result.runs[i];
    std::string options;
    for (std::size_t a = 0; a < result.options.size() && a < run.labels.size(); ++a)
      options += (a ? ", " : "") + json_string(result.options[a]) + ": " + json_string(run.labels[a]);
    std::string repeats;
    for (std::size_t r = 0; r < run.repeat_ap.size(); ++r)
      repeats += fmt::format("{}{}", r ? ", " : "", run.repeat_ap[r]);
    std::string subsets;
    for (const char* subset : breakdown_subsets)
      subsets +=
          fmt::format("{}{}: {}", subsets.empty() ? "" : ", ", json_string(subset), run.subset_ap.at(subset));
    json += fmt::format(
        "{}\n  {{\"run\": {}, \"options\": {{{}}}, \"ap\": {}, \"ap_sd\": {}, \"ap_repeats\": [{}], "
        "\"ap_interpolated\": {}, \"tp\": {}, \"recall\": {}, \"subset_ap\": {{{}}}, \"baseline\": {}, "
        "\"compared\": {}, \"difference\": {}, \"p_value\": {}, \"significant\": {}, \"seconds\": {}}}",
        i ? "," : "", run.number, options, run.ap, run.ap_sd, repeats, run.ap_interpolated, run.tp, run.recall,
        subsets, run.baseline, run.compared, run.compared ? fmt::format("{}", run.difference) : "null",
        run.compared ? fmt::format("{}", run.p_value) : "null", run.significant, run.seconds);
  }
  return json + "\n]}\n";
}

}  // namespace termalign
