// `termalign ablate --grid FILE`: the runs of a grid of options, repeated over the refinement's split seed,
// scored, compared with a baseline point and tabulated (results.md on stdout).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>

#include "commands.h"
#include "pipeline/ablation.h"

namespace termalign::cli {

namespace {

struct AblateArguments {
  std::string grid, base;
  AblationOptions options;
};

// plot_curve.py beside the binary: scripts/ of the source tree for a binary built in a directory of it
// (build-*/termalign), share/termalign/ of an installed one (PREFIX/bin/termalign, `cmake --install`).
std::string default_plot_script() {
  std::error_code error;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  const std::filesystem::path root = executable.parent_path().parent_path();
  const std::filesystem::path installed = root / "share" / "termalign" / "plot_curve.py";
  if (std::filesystem::exists(installed, error)) return installed.string();
  return (root / "scripts" / "plot_curve.py").string();
}

}  // namespace

void add_ablate_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "ablate", "Run a grid of configurations, score each against the gold and tabulate the results");
  auto arguments = std::make_shared<AblateArguments>();
  arguments->options.plot_script = default_plot_script();
  // plot_ablation.py beside it.
  if (!arguments->options.plot_script.empty()) {
    arguments->options.results_plot_script =
        (std::filesystem::path(arguments->options.plot_script).parent_path() / "plot_ablation.py").string();
  }
  command
      ->add_option("--grid", arguments->grid,
                   "Grid file (TOML): [base] options, [dataset] gold, [grid] option = [values], [output] dir")
      ->required();
  command
      ->add_option("--plot-script", arguments->options.plot_script,
                   "scripts/plot_curve.py, run with /usr/bin/python3 to draw the best run's curve (the table's "
                   "plot is drawn by plot_ablation.py in the same folder)")
      ->capture_default_str()
      ->each([arguments](const std::string& script) {
        arguments->options.results_plot_script =
            script.empty() ? std::string()
                           : (std::filesystem::path(script).parent_path() / "plot_ablation.py").string();
      });
  command->add_option(
      "--base", arguments->base,
      "A configuration (e.g. configs/ablations/k10.toml) over the grid's [base]: every run starts from "
      "it");
  command
      ->add_option("--repeats", arguments->options.repeats,
                   "Run each grid point this many times, repeat r with mapping.refine_split_seed + r (the one "
                   "random choice of a run), and tabulate the mean AP and its sd")
      ->capture_default_str();
  command
      ->add_option("--baseline", arguments->options.baseline,
                   "The run (its number in the tables) every other point is compared with")
      ->capture_default_str();
  command
      ->add_option("--level", arguments->options.level,
                   "Mark a point significant when its paired test against the baseline gives p below this")
      ->capture_default_str();
  command
      ->add_option("--resamples", arguments->options.significance.resamples,
                   "Resamples of the paired sign-flip test over source terms")
      ->capture_default_str();
  command
      ->add_option("--test-seed", arguments->options.significance.seed,
                   "Seed of the test's resamples (the figures do not depend on the thread count)")
      ->capture_default_str();
  command->callback([arguments] {
    validate(arguments->options);
    const AblationResult result = run_ablation(read_grid(arguments->grid, arguments->base), arguments->options);
    std::cout << format_ablation_markdown(result) << std::flush;
  });
}

}  // namespace termalign::cli
