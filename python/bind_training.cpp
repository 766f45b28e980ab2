// The module's training functions: train_reranker, ablate (a grid of runs) and train_vectors.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "io/train_vectors.h"
#include "module_support.h"
#include "pipeline/ablation.h"
#include "pipeline/reranker_training.h"
#include "rerank/reranker.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"

namespace termalign::python {

void bind_training(py::module_& m) {
  const RerankerTrainingOptions kTrainingDefaults;
  m.def(
      "train_reranker",
      [](py::object gold, py::object config, std::size_t folds, std::uint32_t fold_seed,
         const std::string& learner, std::size_t stages, int rounds, int max_depth, int second_rounds,
         int second_max_depth, double eta, double l2, bool ablation, py::kwargs options) {
        std::string dataset_gold;
        const AlignConfig resolved = make_config(config, options, &dataset_gold);
        RerankerTrainingOptions training;
        training.gold = gold.is_none() ? dataset_gold : fspath(gold);
        if (training.gold.empty())
          throw_usage_error("train_reranker needs the gold: gold=, or a data_dir that holds one.");
        training.folds = folds;
        training.seed = fold_seed;
        training.learner = learner;
        training.stages = stages;
        training.trees.rounds = rounds;
        training.trees.max_depth = max_depth;
        training.second_rounds = second_rounds;
        training.second_max_depth = second_max_depth;
        training.trees.eta = eta;
        training.l2 = l2;
        training.ablation = ablation;
        follow_python_level();
        RerankerTrainingResult result;
        std::string model;
        without_gil([&] {
          result = train_reranker(resolved, training);
          model = format_reranker(result.model);
        });
        py::dict learners, groups;
        for (const auto& [name, ap] : result.learners) learners[py::str(name)] = ap;
        for (const AblationRow& row : result.ablation) groups[py::str(row.group)] = row.cross_validated_ap;
        py::list held_out(result.held_out.size());
        for (std::size_t i = 0; i < result.held_out.size(); ++i) {
          const HeldOutScore& row = result.held_out[i];
          held_out[i] = py::make_tuple(row.source, row.target, row.gold, row.fold, row.score);
        }
        py::dict out;
        out["model"] = model;
        out["learner"] = to_string(result.model.learner);
        out["stages"] = result.model.stages();
        out["cross_validated_ap"] = result.cross_validated_ap;
        out["one_stage_ap"] = result.one_stage_ap;
        out["learners"] = learners;
        out["without_group"] = groups;
        out["candidates"] = result.candidates;
        out["positives"] = result.positives;
        out["gold_pairs"] = result.gold_pairs;
        out["candidate_recall"] = result.candidate_recall;
        out["csls_ap"] = result.csls_ap;
        out["unsupervised_ap"] = result.unsupervised_ap;
        out["held_out"] = held_out;
        return out;
      },
      // The defaults are the library's (and the CLI's).
      py::arg("gold") = py::none(), py::arg("config") = py::none(), py::arg("folds") = kTrainingDefaults.folds,
      py::arg("fold_seed") = kTrainingDefaults.seed, py::arg("learner") = kTrainingDefaults.learner,
      py::arg("stages") = kTrainingDefaults.stages, py::arg("rounds") = kTrainingDefaults.trees.rounds,
      py::arg("max_depth") = kTrainingDefaults.trees.max_depth,
      py::arg("second_rounds") = kTrainingDefaults.second_rounds,
      py::arg("second_max_depth") = kTrainingDefaults.second_max_depth,
      py::arg("eta") = kTrainingDefaults.trees.eta, py::arg("l2") = kTrainingDefaults.l2,
      py::arg("ablation") = kTrainingDefaults.ablation,
      "Trains a re-ranker as `termalign train-reranker` does: a dict with the model's text (`model`, for a file "
      "that align(reranker=path) reads), the cross-validated AP (`cross_validated_ap`; its first stage's alone in "
      "`one_stage_ap`; each learner's in `learners`, each feature group's absence in `without_group` with "
      "ablation=True), the candidate recall, "
      "and the cross-validated list `held_out` as (source, target, gold, fold, score) tuples, best first.\n"
      "options: align's, as in align(); gold: the gold pairs' file, or the data_dir's.");

  m.def(
      "ablate",
      [](py::object grid, py::object base, py::object plot_script, std::size_t repeats, std::size_t baseline,
         double level, std::size_t resamples, std::uint64_t test_seed) {
        const std::string grid_path = fspath(grid);
        const std::string base_path = base.is_none() ? std::string() : fspath(base);
        AblationOptions options;
        if (!plot_script.is_none()) {
          options.plot_script = fspath(plot_script);
          options.results_plot_script =
              (std::filesystem::path(options.plot_script).parent_path() / "plot_ablation.py").string();
        }
        options.repeats = repeats;
        options.baseline = baseline;
        options.level = level;
        options.significance.resamples = resamples;
        options.significance.seed = test_seed;
        validate(options);
        follow_python_level();
        const AblationResult result =
            without_gil([&] { return run_ablation(read_grid(grid_path, base_path), options); });
        py::module_ json = py::module_::import("json"), tomllib = py::module_::import("tomllib");
        py::list runs;
        for (const AblationRun& run : result.runs) {
          py::dict row = json.attr("loads")(format_json(run.evaluation));
          py::dict values, labels;
          for (const GridSetting& setting : run.settings)  // typed as TOML reads the grid's value
            values[py::str(setting.option)] = tomllib.attr("loads")("value = " + setting.value)["value"];
          for (std::size_t a = 0; a < result.options.size() && a < run.labels.size(); ++a)
            labels[py::str(result.options[a])] = run.labels[a];
          row["run"] = run.number;
          row["options"] = values;
          row["labels"] = labels;
          row["seconds"] = run.seconds;
          row["ap_mean"] = run.ap;
          row["ap_sd"] = run.ap_sd;
          row["ap_repeats"] = run.repeat_ap;
          row["baseline"] = run.baseline;
          row["compared"] = run.compared;
          row["difference"] = run.compared ? py::object(py::float_(run.difference)) : py::object(py::none());
          row["p_value"] = run.compared ? py::object(py::float_(run.p_value)) : py::object(py::none());
          row["significant"] = run.significant;
          runs.append(row);
        }
        return runs;
      },
      py::arg("grid"), py::arg("base") = py::none(), py::arg("plot_script") = py::none(),
      py::arg("repeats") = AblationOptions().repeats, py::arg("baseline") = AblationOptions().baseline,
      py::arg("level") = AblationOptions().level, py::arg("resamples") = SignificanceOptions().resamples,
      py::arg("test_seed") = SignificanceOptions().seed,
      "Runs a grid as `termalign ablate --grid GRID [--base BASE] [--repeats N ...]` does, writing the same files "
      "into the grid's [output] dir: the runs, best mean AP first, as dicts of `termalign evaluate --json`'s keys "
      "(the first repeat's) plus `run` (its number), `options` (each varied option's value, typed: int, float, "
      "bool or str; options varied together each under its own name), `labels` (each axis's value as results.md "
      "shows it), `seconds`, `ap_mean`, `ap_sd`, `ap_repeats` (over the repeats: mapping.refine_split_seed + 0 "
      "to repeats - 1), `baseline`, `compared`, `difference`, `p_value` (None where not compared) and "
      "`significant` (p below level, against run `baseline`). plot_script: scripts/plot_curve.py to draw the best "
      "run's curve, and plot_ablation.py beside it the table's plot (default: none).");

  const TrainVectorsOptions kVectorDefaults;
  m.def(
      "train_vectors",
      [](py::object corpus, py::object out, py::object terms, int dim, int epoch, int min_count, int minn,
         int maxn, int bucket, const std::string& model, double lr, int window, int negatives, int threads,
         int seed, bool lowercase) {
        TrainVectorsOptions options;
        options.corpus = fspath(corpus);
        options.out = fspath(out);
        if (!terms.is_none()) options.terms = fspath(terms);
        options.dim = dim;
        options.epoch = epoch;
        options.min_count = min_count;
        options.minn = minn;
        options.maxn = maxn;
        options.bucket = bucket;
        options.model = parse_vector_model(model);
        options.learning_rate = lr;
        options.window = window;
        options.negatives = negatives;
        options.threads = threads;
        options.seed = seed;
        options.lowercase = lowercase;
        follow_python_level();
        const TrainVectorsReport report = without_gil([&] { return train_vectors(options); });
        py::dict result;
        result["bin"] = options.out + ".bin";
        result["vec"] = options.out + ".vec";
        result["lines"] = report.lines;
        result["tokens"] = report.tokens;
        result["joined_occurrences"] = report.joined_occurrences;
        result["joined_terms"] = report.joined_terms;
        result["vocabulary"] = report.vocabulary;
        result["seconds"] = report.tokenize_seconds + report.train_seconds + report.save_seconds;
        return result;
      },
      py::arg("corpus"), py::arg("out"), py::arg("terms") = py::none(), py::arg("dim") = kVectorDefaults.dim,
      py::arg("epoch") = kVectorDefaults.epoch, py::arg("min_count") = kVectorDefaults.min_count,
      py::arg("minn") = kVectorDefaults.minn, py::arg("maxn") = kVectorDefaults.maxn,
      py::arg("bucket") = kVectorDefaults.bucket, py::arg("model") = to_string(kVectorDefaults.model),
      py::arg("lr") = kVectorDefaults.learning_rate, py::arg("window") = kVectorDefaults.window,
      py::arg("negatives") = kVectorDefaults.negatives, py::arg("threads") = kVectorDefaults.threads,
      py::arg("seed") = kVectorDefaults.seed, py::arg("lowercase") = kVectorDefaults.lowercase,
      "Trains fastText vectors on a corpus as `termalign train-vectors` does, writing OUT.bin and OUT.vec (terms: "
      "a term list whose multi-word terms are joined into one token each). Returns the files written and the "
      "counts of the report (lines, tokens, joined_occurrences, joined_terms, vocabulary) and seconds.");
}

}  // namespace termalign::python
