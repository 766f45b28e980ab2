#include "commands.h"

namespace termalign::cli {
void add_train_vectors_command(CLI::App& app) {
  app.add_subcommand("train-vectors", "Train fastText vectors on a corpus (not implemented yet)");
}
}  // namespace termalign::cli
