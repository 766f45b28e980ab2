// `termalign train-reranker`: the inputs of `align` plus a gold; writes a re-ranker model.
#include <iostream>

#include "align_options.h"
#include "commands.h"
#include "termalign/io.h"
#include "termalign/reranker.h"
#include "termalign/training.h"

namespace termalign::cli {

void add_train_reranker_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "train-reranker", "Train a re-ranker of candidate pairs on a gold (AP reported by cross-validation)");
  auto options = AlignOptions::add(command, false);
  auto training = std::make_shared<RerankerTrainingOptions>();
  auto model_path = std::make_shared<std::string>();
  command->add_option("--gold", training->gold, "Gold pairs of the training dataset")->required();
  command->add_option("--out", *model_path, "Model file to write")->required();
  command->add_option("--folds", training->folds, "Cross-validation folds over source terms")
      ->capture_default_str();
  command->add_option("--l2", training->l2, "L2 penalty of the logistic regression")->capture_default_str();
  command->add_option("--fold-seed", training->seed, "Seed of the fold assignment")->capture_default_str();
  command->callback([options, training, model_path] {
    // The model's temporary file is created before the training, as align does with its outputs: a folder that
    // is missing or cannot be written stops the command at once, not after the training.
    AtomicFile model_file(*model_path);
    const RerankerTrainingResult result = train_reranker(options->resolve(), *training);
    model_file.write(format_reranker(result.model));
    model_file.commit();
    std::cout << "candidates: " << result.candidates << "\npositives: " << result.positives
              << "\nAP_csls: " << result.csls_ap << "\nAP_cross_validated: " << result.cross_validated_ap << "\n";
  });
}

}  // namespace termalign::cli
