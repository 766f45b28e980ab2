#include "commands.h"

namespace termalign::cli {
void add_evaluate_command(CLI::App& app) { app.add_subcommand("evaluate", "Score a ranked list against a gold"); }
}  // namespace termalign::cli
