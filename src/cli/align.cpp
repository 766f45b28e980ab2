#include "commands.h"

namespace termalign::cli {
void add_align_command(CLI::App& app) { app.add_subcommand("align", "Align two term lists"); }
}  // namespace termalign::cli
