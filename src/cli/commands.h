// Sub-commands of the termalign CLI. Each adds itself to the app; its callback copies the parsed values into
// the library's option structs and calls the library.
#pragma once

#include <CLI/CLI.hpp>

#include "util/distributed.h"

namespace termalign::cli {

void add_evaluate_command(CLI::App& app);
// Under mpirun, `group` spans the ranks: they share the scoring and rank 0 writes.
void add_align_command(CLI::App& app, const ProcessGroup& group);
void add_train_reranker_command(CLI::App& app);
void add_train_vectors_command(CLI::App& app);
void add_ablate_command(CLI::App& app);
void add_report_command(CLI::App& app);

}  // namespace termalign::cli
