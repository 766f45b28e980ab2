#include "commands.h"

namespace termalign::cli {
void add_ablate_command(CLI::App& app) {
  app.add_subcommand("ablate", "Run a grid of configurations and tabulate the results (not implemented yet)");
}
}  // namespace termalign::cli
