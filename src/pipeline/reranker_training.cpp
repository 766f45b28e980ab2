#include "pipeline/reranker_training.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <set>
#include <utility>

#include "io/io.h"
#include "termalign/aligner.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/interrupt.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "termalign/version.h"
#include "util/seeded_shuffle.h"

namespace termalign {

namespace {

double ranked_ap(const CandidateSet& candidates, const Eigen::VectorXd& scores, const PairList& gold) {
  PairList predictions;
  predictions.path = "(candidates)";
  for (const RankedPair& pair : rank_candidates(candidates, scores))
    predictions.pairs.emplace_back(pair.source, pair.target);
  return evaluate(gold, predictions, &candidates.source_terms, &candidates.target_terms, EvaluationOptions{}).ap;
}

Matrix select_rows(const Matrix& matrix, const std::vector<std::size_t>& rows) {
  Matrix selected(static_cast<Eigen::Index>(rows.size()), matrix.cols());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    selected.row(static_cast<Eigen::Index>(i)) = matrix.row(static_cast<Eigen::Index>(rows[i]));
  }
  return selected;
}

// A model of the first stage, or of the second (the trees with the second stage's rounds and depth).
Reranker fit(Learner learner, const Matrix& x, const std::vector<std::string>& names,
             const std::vector<std::uint8_t>& labels, const RerankerTrainingOptions& options, int threads,
             bool second_stage = false) {
  if (learner == Learner::logistic) return train_logistic(x, names, labels, options.l2);
  Reranker model;
  model.learner = learner;
  model.features = names;
  BoostedTreesOptions trees = options.trees;
  if (second_stage) {
    trees.rounds = options.second_rounds;
    trees.max_depth = options.second_max_depth;
  }
  trees.objective = learner == Learner::ranking ? "rank:pairwise" : "binary:logistic";
  trees.threads = threads;
  model.booster = train_boosted_trees(x, labels, trees, names);
  model.compiled = compile_boosted_trees(model.booster);
  return model;
}

// What a trained model's file records of how it was made (Reranker::provenance): enough to train it again.
std::vector<std::string> training_provenance(const AlignConfig& config, const RerankerTrainingOptions& options,
                                             const RerankerTrainingResult& result) {
  const Reranker& model = result.model;
  const BoostedTreesOptions& trees = options.trees;
  std::vector<std::string> lines = {
      fmt::format("trained by termalign {} (train-reranker)", version()),
      fmt::format("feature revision {}", kFeatureRevision),
      fmt::format(
          "recipe: learner {}{}, {} stage{}, {} folds over source terms, fold seed {}, l2 {}; trees: rounds "
          "{}, max depth {}, eta {}, subsample {}, colsample {}, min child weight {}, lambda {}, seed {}; "
          "second stage: rounds {}, max depth {}",
          to_string(model.learner), options.learner == "auto" ? " (chosen by auto)" : "", model.stages(),
          model.stages() > 1 ? "s" : "", options.folds, options.seed, options.l2, trees.rounds, trees.max_depth,
          trees.eta, trees.subsample, trees.colsample, trees.min_child_weight, trees.lambda, trees.seed,
          options.second_rounds, options.second_max_depth),
      fmt::format("{}-fold cross-validated AP {:.4f} (one stage {:.4f}); {} candidates, {} of {} gold pairs among "
                  "them (candidate recall {:.4f})",
                  options.folds, result.cross_validated_ap, result.one_stage_ap, result.candidates,
                  result.positives, result.gold_pairs, result.candidate_recall)};
  // The files by name and contents (their paths are the machine's), then every option not at its default.
  const InputOptions& input = config.input;
  std::vector<std::pair<const char*, const std::string*>> files = {
      {"gold", &options.gold},
      {"src_vectors", &input.src_vectors},
      {"tgt_vectors", &input.tgt_vectors},
      {"seed", &input.seed},
      {"src_terms", &input.src_terms},
      {"tgt_terms", &input.tgt_terms},
      {"src_corpus", &input.src_corpus},
      {"tgt_corpus", &input.tgt_corpus},
      {"src_corpus_vectors", &input.src_corpus_vectors},
      {"tgt_corpus_vectors", &input.tgt_corpus_vectors},
      {"mapping", &config.input.saved_mapping}};
  for (const std::string& dictionary : input.dictionary) files.emplace_back("dictionary", &dictionary);
  for (const auto& [name, path] : files) {
    if (path->empty()) continue;
    if (name == std::string("seed") && is_induced_seed(*path)) {
      lines.push_back(fmt::format("input seed: {} (induced from the vectors)", *path));
      continue;
    }
    // Read again after the training: a file that cannot be is noted, not fatal (the model is trained).
    const std::string file = std::filesystem::path(*path).filename().string();
    try {
      const std::string fingerprint = file_fingerprint(*path);
      lines.push_back(fingerprint.empty()
                          ? fmt::format("input {}: {} (not a regular file: no fingerprint)", name, file)
                          : fmt::format("input {}: {}, {} bytes, {}", name, file,
                                        std::filesystem::file_size(*path), fingerprint));
    } catch (const std::exception& error) {  // Error or filesystem_error; an interruption goes on
      if (const auto* stop = dynamic_cast<const Error*>(&error); stop && stop->kind() == ErrorKind::interrupted)
        throw;
      lines.push_back(fmt::format("input {}: {} (could not be read again: no fingerprint)", name, file));
    }
  }
  const std::vector<std::string> changed = changed_options(config);
  if (changed.empty()) lines.emplace_back("options: align's defaults");
  for (const std::string& option : changed) lines.push_back("option " + option);
  return lines;
}

}  // namespace

RerankerTrainingResult train_reranker(const AlignConfig& config, const RerankerTrainingOptions& options) {
  if (options.folds < 2)
    throw_usage_error("Cross-validation needs at least 2 folds (got " + std::to_string(options.folds) + ").");
  if (options.stages != 1 && options.stages != 2)
    throw_usage_error("A re-ranker has 1 or 2 stages (got " + std::to_string(options.stages) + ").");
  // XGBoost would take some of these and train a useless model, or fail after the candidates with its own words.
  const auto at_least_one = [](const char* name, const char* flag, int value) {
    if (value < 1)
      throw_usage_error(fmt::format("Training option {} ({}) must be at least 1 (got {}).", name, flag, value));
  };
  at_least_one("rounds", "--rounds", options.trees.rounds);
  at_least_one("max_depth", "--max-depth", options.trees.max_depth);
  at_least_one("second_rounds", "--second-rounds", options.second_rounds);
  at_least_one("second_max_depth", "--second-max-depth", options.second_max_depth);
  if (!(options.trees.eta > 0 && options.trees.eta <= 1))
    throw_usage_error(fmt::format("Training option eta (--eta) must be in (0, 1] (got {}).", options.trees.eta));
  if (!(options.l2 >= 0 && std::isfinite(options.l2)))
    throw_usage_error(fmt::format("Training option l2 (--l2) must be 0 or more (got {}).", options.l2));
  if (config.input.reranker != kDefaultReranker && config.input.reranker != kNoReranker) {
    throw_usage_error("A re-ranker is being trained: do not give one to apply (--reranker).");
  }
  std::vector<Learner> learners;
  if (options.learner == "auto") {
    learners = {Learner::logistic, Learner::trees, Learner::ranking};
  } else if (options.learner == "logistic" || options.learner == "trees" || options.learner == "ranking") {
    learners = {parse_learner(options.learner)};
  } else {
    throw_usage_error("Unknown learner '" + options.learner + "': expected logistic, trees, ranking or auto.");
  }
  const PairList gold = read_pairs(options.gold, PairFileKind::gold);
  AlignConfig unsupervised = config;
  unsupervised.input.reranker = kNoReranker;
  const CandidateSet candidates = generate_candidates(unsupervised, true);
  const CandidateEvidence& evidence = candidates.evidence;
  const FeatureTable table = candidate_feature_table(evidence);
  const int threads = config.scoring.threads;

  std::set<std::pair<std::string, std::string>> gold_pairs(gold.pairs.begin(), gold.pairs.end());
  std::vector<std::uint8_t> labels(evidence.size());
  RerankerTrainingResult result;
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    labels[i] = gold_pairs.count({candidates.source_terms.terms[evidence.source[i]],
                                  candidates.target_terms.terms[evidence.target[i]]}) != 0;
    result.positives += labels[i];
  }
  for (const auto& [source, target] : gold_pairs)
    result.gold_pairs += candidates.source_terms.contains(source) && candidates.target_terms.contains(target);
  result.candidates = evidence.size();
  result.candidate_recall =
      result.gold_pairs ? static_cast<double>(result.positives) / static_cast<double>(result.gold_pairs) : 0.0;
  if (result.positives == 0) {
    throw_input_error(options.gold, 0, "no candidate pair is in the gold: is it the gold of these term lists?");
  }

  // A fold needs source terms of its own, and only terms with candidates count (a term without a vector has none).
  std::vector<char> has_candidates(candidates.source_terms.size(), 0);
  for (const std::uint32_t source : evidence.source) has_candidates[source] = 1;
  const auto sources = static_cast<std::size_t>(std::count(has_candidates.begin(), has_candidates.end(), 1));
  if (options.folds > sources) {
    throw_usage_error(fmt::format(
        "{} folds for {} source terms with candidates: each fold needs source terms of its own (--folds).",
        options.folds, sources));
  }
  // Folds over source terms, so that no term is scored by a model trained on its own pairs.
  std::vector<std::uint32_t> fold_of(candidates.source_terms.size());
  std::vector<std::uint32_t> order(fold_of.size());
  std::iota(order.begin(), order.end(), 0u);
  detail::seeded_shuffle(order, options.seed);
  for (std::size_t i = 0; i < order.size(); ++i) fold_of[order[i]] = static_cast<std::uint32_t>(i % options.folds);
  std::vector<std::vector<std::size_t>> train_rows(options.folds), test_rows(options.folds);
  for (std::uint32_t fold = 0; fold < options.folds; ++fold) {
    for (std::size_t i = 0; i < evidence.size(); ++i) {
      (fold_of[evidence.source[i]] == fold ? test_rows : train_rows)[fold].push_back(i);
    }
    if (train_rows[fold].empty()) {
      throw_usage_error(fmt::format(
          "Fold {} of {} holds every source term with candidates ({}), so no model can score it: use fewer folds "
          "(--folds) or another --fold-seed.",
          fold + 1, options.folds, sources));
    }
  }
  // A second stage learns from first-stage scores of rows the first stage did not see, as it meets them in
  // `align`: within a training fold, those come from an inner split of its source terms in two.
  std::vector<std::uint32_t> inner_fold_of(fold_of.size());
  detail::seeded_shuffle(order, std::uint64_t{options.seed} + 1);
  for (std::size_t i = 0; i < order.size(); ++i) inner_fold_of[order[i]] = static_cast<std::uint32_t>(i % 2);
  const auto labels_of = [&](const std::vector<std::size_t>& rows) {
    std::vector<std::uint8_t> selected;
    for (const std::size_t i : rows) selected.push_back(labels[i]);
    return selected;
  };
  // Fits on `fit_rows` and writes the scores of `score_rows` into `scores`.
  const auto fit_and_score = [&](Learner learner, const Matrix& x, const std::vector<std::string>& names,
                                 const std::vector<std::size_t>& fit_rows,
                                 const std::vector<std::size_t>& score_rows, Eigen::VectorXd& scores,
                                 bool second_stage = false) {
    const Reranker model =
        fit(learner, select_rows(x, fit_rows), names, labels_of(fit_rows), options, threads, second_stage);
    const Eigen::VectorXd part = model.score(select_rows(x, score_rows), threads);
    for (std::size_t i = 0; i < score_rows.size(); ++i)
      scores(static_cast<Eigen::Index>(score_rows[i])) = part(static_cast<Eigen::Index>(i));
  };
  // Every candidate's score by the model (of `stages` stages) of the folds that did not hold its source term. With
  // two stages, `one_stage` (the same learner's one-stage scores over the same columns, if known) gives the test
  // folds' first-stage scores: the same fits.
  const auto held_out_scores = [&](Learner learner, const std::vector<std::string>& names, std::size_t stages,
                                   const Eigen::VectorXd* one_stage = nullptr) {
    const FeatureTable selected{names, table.select(names, "(training)")};
    const Matrix& x = selected.values;
    Eigen::VectorXd held_out(static_cast<Eigen::Index>(evidence.size()));
    for (std::uint32_t fold = 0; fold < options.folds; ++fold) {
      throw_if_interrupted();
      if (stages == 1) {
        fit_and_score(learner, x, names, train_rows[fold], test_rows[fold], held_out);
        continue;
      }
      // First-stage scores: the test fold's by the training fold's model, the training fold's by inner folds.
      Eigen::VectorXd first(static_cast<Eigen::Index>(evidence.size()));
      if (one_stage) {
        for (const std::size_t i : test_rows[fold])
          first(static_cast<Eigen::Index>(i)) = (*one_stage)(static_cast<Eigen::Index>(i));
      } else {
        fit_and_score(learner, x, names, train_rows[fold], test_rows[fold], first);
      }
      for (std::uint32_t inner = 0; inner < 2; ++inner) {
        std::vector<std::size_t> fit_rows, score_rows;
        for (const std::size_t i : train_rows[fold])
          (inner_fold_of[evidence.source[i]] == inner ? score_rows : fit_rows).push_back(i);
        if (fit_rows.empty()) {  // a training fold of one source term: nothing to learn its scores from
          for (const std::size_t i : score_rows) first(static_cast<Eigen::Index>(i)) = 0;
        } else if (!score_rows.empty()) {
          fit_and_score(learner, x, names, fit_rows, score_rows, first);
        }
      }
      const FeatureTable second = with_stage_columns(selected, evidence, first, threads);
      fit_and_score(learner, second.values, second.names, train_rows[fold], test_rows[fold], held_out, true);
    }
    return held_out;
  };

  Learner chosen = learners.front();
  Eigen::VectorXd chosen_held_out;
  result.cross_validated_ap = -1;
  for (const Learner learner : learners) {
    Eigen::VectorXd held_out = held_out_scores(learner, table.names, 1);
    const double ap = ranked_ap(candidates, held_out, gold);
    result.learners.emplace_back(to_string(learner), ap);
    logger().info("re-ranker {}: {}-fold cross-validated AP {:.4f}", to_string(learner), options.folds, ap);
    if (ap > result.cross_validated_ap) {
      result.cross_validated_ap = ap;
      chosen = learner;
      chosen_held_out = std::move(held_out);
    }
  }
  // The first stage's cross-validated scores: what its second stage learns from.
  const Eigen::VectorXd first_stage_held_out = chosen_held_out;
  result.one_stage_ap = result.cross_validated_ap;
  if (options.stages == 2) {
    chosen_held_out = held_out_scores(chosen, table.names, 2, &first_stage_held_out);
    result.cross_validated_ap = ranked_ap(candidates, chosen_held_out, gold);
    logger().info("re-ranker {}, two stages: {}-fold cross-validated AP {:.4f}", to_string(chosen), options.folds,
                  result.cross_validated_ap);
    if (result.cross_validated_ap < result.one_stage_ap) {
      logger().warn(
          "the second stage lowers the cross-validated AP ({:.4f} against {:.4f} with one stage): with this "
          "little data or these features, --stages 1 may do better",
          result.cross_validated_ap, result.one_stage_ap);
    }
  }
  for (const RankedIndex& pair : rank_candidate_indices(candidates, chosen_held_out, threads)) {
    const std::string& source = candidates.source_terms.terms[pair.source];
    const std::string& target = candidates.target_terms.terms[pair.target];
    result.held_out.push_back(
        {source, target, gold_pairs.count({source, target}) != 0, fold_of[pair.source], pair.score});
  }
  if (options.ablation) {
    std::vector<std::string> groups;
    for (const std::string& name : table.names) {
      const std::string group = feature_group(name);
      if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
    }
    for (const std::string& group : groups) {
      std::vector<std::string> kept;
      for (const std::string& name : table.names)
        if (feature_group(name) != group) kept.push_back(name);
      if (kept.empty()) continue;
      const double ap = ranked_ap(candidates, held_out_scores(chosen, kept, options.stages), gold);
      result.ablation.push_back({group, table.names.size() - kept.size(), ap});
      logger().info("re-ranker without the {} features: cross-validated AP {:.4f}", group, ap);
    }
  }
  Eigen::VectorXd csls_scores(static_cast<Eigen::Index>(evidence.size()));
  for (std::size_t i = 0; i < evidence.size(); ++i) csls_scores(static_cast<Eigen::Index>(i)) = evidence.csls[i];
  result.csls_ap = ranked_ap(candidates, csls_scores, gold);
  result.unsupervised_ap = ranked_ap(candidates, candidate_scores(candidates, unsupervised), gold);
  result.model = fit(chosen, table.values, table.names, labels, options, threads);
  if (options.stages == 2) {
    auto first_stage = std::make_shared<const Reranker>(std::move(result.model));
    const FeatureTable second = with_stage_columns(table, evidence, first_stage_held_out, threads);
    result.model = fit(chosen, second.values, second.names, labels, options, threads, true);
    result.model.first_stage = std::move(first_stage);
  }
  result.model.provenance = training_provenance(config, options, result);
  result.model.feature_revision = kFeatureRevision;
  logger().info(
      "re-ranker: {} candidates, {} of {} gold pairs among them (recall {:.4f}); AP by CSLS {:.4f}, unsupervised "
      "{:.4f}, {}-fold cross-validated AP {:.4f} ({})",
      result.candidates, result.positives, result.gold_pairs, result.candidate_recall, result.csls_ap,
      result.unsupervised_ap, options.folds, result.cross_validated_ap, to_string(chosen));
  return result;
}

std::string format_held_out(const RerankerTrainingResult& result) {
  std::string text = "rank\tsource\ttarget\tgold\tfold\tscore\n";
  std::size_t rank = 0;
  for (const HeldOutScore& row : result.held_out) {
    text += fmt::format("{}\t{}\t{}\t{}\t{}\t{:.6g}\n", ++rank, row.source, row.target, row.gold ? 1 : 0, row.fold,
                        row.score);
  }
  return text;
}

std::string format_training_report(const RerankerTrainingResult& result, std::size_t folds) {
  // The unsupervised score learns nothing: its AP is the same list's, not cross-validated.
  std::string text =
      fmt::format("| configuration | AP ({}-fold cross-validated where learnt) |\n|---|---:|\n", folds);
  text +=
      fmt::format("| unsupervised score (CSLS + orthographic bonus), same candidates, nothing learnt | {:.4f} |\n",
                  result.unsupervised_ap);
  for (const auto& [learner, ap] : result.learners) text += fmt::format("| learner {} | {:.4f} |\n", learner, ap);
  const std::string chosen = to_string(result.model.learner);
  const std::string stages = result.model.stages() == 2 ? ", two stages" : "";
  if (result.model.stages() == 2)
    text += fmt::format("| {}{} | {:.4f} |\n", chosen, stages, result.cross_validated_ap);
  for (const AblationRow& row : result.ablation) {
    text += fmt::format("| {}{} without the {} features ({}) | {:.4f} |\n", chosen, stages, row.group,
                        row.features, row.cross_validated_ap);
  }
  text += fmt::format("\ncandidates: {}; gold pairs among them: {} of {} (candidate recall {:.4f})\n",
                      result.candidates, result.positives, result.gold_pairs, result.candidate_recall);
  return text;
}

}  // namespace termalign
