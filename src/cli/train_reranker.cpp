// `termalign train-reranker`: the inputs of `align` plus a gold; writes a re-ranker model.
#include <iostream>
#include <memory>

#include "align_options.h"
#include "commands.h"
#include "io/io.h"
#include "pipeline/reranker_training.h"
#include "rerank/reranker.h"
#include "termalign/error.h"

namespace termalign::cli {

void add_train_reranker_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "train-reranker", "Train a re-ranker of candidate pairs on a gold (AP reported by cross-validation)");
  auto options = AlignOptions::add(command, false);
  auto training = std::make_shared<RerankerTrainingOptions>();
  auto model_path = std::make_shared<std::string>();
  command->add_option(
      "--gold", training->gold,
      "Required (unless --data-dir holds terms-<l1>-<l2>.txt): gold pairs of the training dataset");
  command->add_option("--out", *model_path, "Model file to write")->required();
  command->add_option("--folds", training->folds, "Cross-validation folds over source terms")
      ->capture_default_str();
  command->add_option("--l2", training->l2, "L2 penalty of the logistic regression")->capture_default_str();
  command->add_option("--fold-seed", training->seed, "Seed of the fold assignment")->capture_default_str();
  command
      ->add_option("--learner", training->learner,
                   "logistic, trees (XGBoost), ranking (XGBoost, pairwise) or auto (best cross-validated AP)")
      ->capture_default_str();
  command
      ->add_option("--stages", training->stages,
                   "1, or 2: a second model over the features and the first's cross-validated scores")
      ->check(CLI::IsMember({1, 2}))
      ->capture_default_str();
  command->add_option("--rounds", training->trees.rounds, "Trees: boosting rounds")->capture_default_str();
  command->add_option("--max-depth", training->trees.max_depth, "Trees: depth")->capture_default_str();
  command->add_option("--second-rounds", training->second_rounds, "Trees of the second stage: boosting rounds")
      ->capture_default_str();
  command->add_option("--second-max-depth", training->second_max_depth, "Trees of the second stage: depth")
      ->capture_default_str();
  command->add_option("--eta", training->trees.eta, "Trees: learning rate")->capture_default_str();
  command
      ->add_option("--ablation", training->ablation,
                   "Also the cross-validated AP with each feature group left out")
      ->default_str("false");
  auto report_path = std::make_shared<std::string>();
  command->add_option("--report", *report_path, "Write the Markdown table of the cross-validated figures here");
  auto held_out_path = std::make_shared<std::string>();
  command->add_option(
      "--held-out", *held_out_path,
      "Write the cross-validated ranked list (rank, source, target, gold, fold, score) here as TSV");
  command->callback([options, training, model_path, report_path, held_out_path] {
    // Every output's temporary file is created before the training, as align does with its outputs: a folder
    // that is missing or cannot be written stops the command at once, not after the training. All are written
    // before any is renamed, so a failure leaves every previous output as it was.
    AtomicFile model_file(*model_path);
    std::unique_ptr<AtomicFile> report_file, held_out_file;
    if (!report_path->empty()) report_file = std::make_unique<AtomicFile>(*report_path);
    if (!held_out_path->empty()) held_out_file = std::make_unique<AtomicFile>(*held_out_path);
    std::string dataset_gold;
    const AlignConfig config = options->resolve(&dataset_gold);
    if (training->gold.empty()) training->gold = dataset_gold;
    if (training->gold.empty())
      throw_usage_error("A gold is needed: give --gold, or a --data-dir that holds terms-<l1>-<l2>.txt.");
    const RerankerTrainingResult result = train_reranker(config, *training);
    const std::string report = format_training_report(result, training->folds);
    model_file.write(format_reranker(result.model));
    if (report_file) report_file->write(report);
    if (held_out_file) held_out_file->write(format_held_out(result));
    model_file.commit();
    if (report_file) report_file->commit();
    if (held_out_file) held_out_file->commit();
    std::cout << "candidates: " << result.candidates << "\npositives: " << result.positives
              << "\nAP_csls: " << result.csls_ap << "\nAP_unsupervised: " << result.unsupervised_ap
              << "\ncandidate_recall: " << result.candidate_recall
              << "\nlearner: " << to_string(result.model.learner) << "\nstages: " << result.model.stages()
              << "\nAP_one_stage: " << result.one_stage_ap << "\nAP_cross_validated: " << result.cross_validated_ap
              << "\n\n"
              << report;
  });
}

}  // namespace termalign::cli
