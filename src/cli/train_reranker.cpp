#include "commands.h"

namespace termalign::cli {
void add_train_reranker_command(CLI::App& app) {
  app.add_subcommand("train-reranker", "Train a re-ranker of candidate pairs on a gold (not implemented yet)");
}
}  // namespace termalign::cli
