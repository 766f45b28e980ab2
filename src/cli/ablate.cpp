// `termalign ablate --grid FILE`: the runs of a grid of options, scored and tabulated (results.md on stdout).
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
  command
      ->add_option("--grid", arguments->grid,
                   "Grid file (TOML): [base] options, [dataset] gold, [grid] option = [values], [output] dir")
      ->required();
  command
      ->add_option("--plot-script", arguments->options.plot_script,
                   "scripts/plot_curve.py, run with /usr/bin/python3 to draw the best run's curve")
      ->capture_default_str();
  command->add_option(
      "--base", arguments->base,
      "A configuration (e.g. configs/ablations/k10.toml) over the grid's [base]: every run starts from "
      "it");
  command->callback([arguments] {
    const AblationResult result = run_ablation(read_grid(arguments->grid, arguments->base), arguments->options);
    std::cout << format_ablation_markdown(result) << std::flush;
  });
}

}  // namespace termalign::cli
