#include <spdlog/fmt/fmt.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "io/io.h"
#include "io/sanity.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"

namespace termalign::cli {

namespace {

struct EvaluateArguments {
  std::string gold, source_terms, target_terms, curve, details, missed, format, forms_language, inflected;
  std::string hunspell_dir = "/usr/share/hunspell";
  std::vector<std::string> predictions;
  bool json = false, pred_has_scores = false, allow_reversed = false, intervals = false;
  EvaluationOptions options;
  SignificanceOptions significance;
};

void run_evaluate(const EvaluateArguments& arguments) {
  // Before reading any file, so that a bad command line is reported as such.
  validate(arguments.options, !arguments.source_terms.empty(), !arguments.target_terms.empty());
  validate(arguments.significance);
  const bool table = arguments.predictions.size() > 1 || !arguments.format.empty() || arguments.intervals;
  const TableFormat format = arguments.format.empty()
                                 ? (arguments.json ? TableFormat::json : TableFormat::markdown)
                                 : parse_table_format(arguments.format);
  if (!arguments.curve.empty() && arguments.predictions.size() > 1) {
    throw_usage_error("--curve writes the curve of one run: give one --pred with it.");
  }
  if (!arguments.inflected.empty() && arguments.forms_language.empty())
    throw_usage_error("--inflected lists what --forms-language counts: give the target language with it.");
  if (!arguments.forms_language.empty() && (arguments.json || format == TableFormat::json))
    throw_usage_error("--forms-language prints a line of text after the scores: not with JSON output.");
  const PairList gold = read_pairs(arguments.gold, PairFileKind::gold);
  std::optional<TermList> source_terms, target_terms;
  if (!arguments.source_terms.empty()) {
    source_terms = read_term_list(arguments.source_terms);
    target_terms = read_term_list(arguments.target_terms);
    check_pairs_against_lists(gold, *source_terms, *target_terms, arguments.allow_reversed);
    warn_gold_outside_lists(gold, *source_terms, *target_terms);
  }
  EvaluationOptions options = arguments.options;
  options.details = !arguments.details.empty() || !arguments.missed.empty();
  std::vector<NamedResult> runs;
  std::vector<PairList> prediction_lists;  // kept for the comparison of the runs
  std::string details, missed, inflected, inflected_cases;
  for (const std::string& path : arguments.predictions) {
    PairList predictions = read_pairs(path, PairFileKind::submission,
                                      arguments.pred_has_scores ? ScoreColumn::required : ScoreColumn::detect);
    if (source_terms)
      check_pairs_against_lists(predictions, *source_terms, *target_terms, arguments.allow_reversed);
    check_predictions_against_gold(predictions, gold, arguments.allow_reversed);
    std::vector<CurvePoint> curve;
    runs.push_back({path, evaluate(gold, predictions, source_terms ? &*source_terms : nullptr,
                                   target_terms ? &*target_terms : nullptr, options,
                                   arguments.curve.empty() ? nullptr : &curve)});
    if (!arguments.curve.empty()) write_file_atomically(arguments.curve, format_curve(curve));
    const bool first = runs.size() == 1;
    if (!arguments.details.empty()) details += format_details(path, runs.back().result, predictions, first);
    if (!arguments.missed.empty()) missed += format_missed(path, runs.back().result, gold, predictions, first);
    runs.back().result.hits.clear();
    runs.back().result.missed.clear();
    if (!arguments.forms_language.empty()) {
      const InflectedFirst counted =
          inflected_first_candidates(gold, predictions, arguments.forms_language, arguments.hunspell_dir);
      inflected += fmt::format(
          "{}: first candidate another form of a gold target for {} of {} gold source terms with a pair ({} "
          "first candidates right; forms: {})\n",
          path, counted.inflected, counted.with_candidate, counted.correct, counted.analyser);
      if (!arguments.inflected.empty()) inflected_cases += format_inflected(path, counted, first);
    }
    if (arguments.predictions.size() > 1 || arguments.intervals)
      prediction_lists.push_back(std::move(predictions));
  }
  std::vector<const PairList*> lists;
  for (const PairList& list : prediction_lists) lists.push_back(&list);
  const TermList* sources = source_terms ? &*source_terms : nullptr;
  const TermList* targets = target_terms ? &*target_terms : nullptr;
  if (arguments.intervals) {
    const std::vector<ApInterval> intervals =
        ap_intervals(gold, lists, sources, targets, arguments.options, arguments.significance);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      runs[r].has_interval = true;
      runs[r].interval = intervals[r];
    }
  }
  if (lists.size() > 1) {
    const std::vector<Difference> differences =
        compare_runs(gold, lists, sources, targets, arguments.options, arguments.significance);
    for (std::size_t r = 1; r < runs.size(); ++r) {
      runs[r].has_difference = true;
      runs[r].difference = differences[r];
    }
  }
  if (!arguments.details.empty()) write_file_atomically(arguments.details, details);
  if (!arguments.missed.empty()) write_file_atomically(arguments.missed, missed);
  if (!arguments.inflected.empty()) write_file_atomically(arguments.inflected, inflected_cases);
  if (table) {
    std::cout << format_table(runs, format) << std::flush;
  } else {
    const EvaluationResult& result = runs.front().result;
    std::cout << (arguments.json ? format_json(result) : format_report(result)) << std::flush;
  }
  std::cout << inflected << std::flush;
}

}  // namespace

void add_evaluate_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "evaluate", "Score a ranked list of term pairs against a gold dictionary (BUCC 2022 average precision)");
  auto arguments = std::make_shared<EvaluateArguments>();
  command->add_option("--gold", arguments->gold, "Gold pairs, src<TAB>tgt per line (required)")->required();
  command
      ->add_option(
          "--pred", arguments->predictions,
          "Ranked predicted pairs, src<TAB>tgt per line, best first (required); repeat it to compare runs "
          "in one table")
      ->required()
      ->take_all();
  command->add_option("--src-terms", arguments->source_terms, "Source term list D1 (enables the cap)");
  command->add_option("--tgt-terms", arguments->target_terms, "Target term list D2 (enables the cap)");
  command->add_flag("--ignore-oov", arguments->options.ignore_oov,
                    "Drop predicted pairs with a term outside the term lists, before ranking");
  command->add_flag("--breakdown", arguments->options.breakdown,
                    "Recall and AP on identical / close / far and single- / multi-word gold subsets");
  CLI::Option* json = command->add_flag("--json", arguments->json,
                                        "Print the scores as one JSON object (with several runs: an array)");
  command
      ->add_option("--format", arguments->format,
                   "Print one table row per run: markdown, tsv or json (the default with several --pred: "
                   "markdown)")
      ->excludes(json);
  command->add_option("--curve", arguments->curve, "Write P, R, F1 and AP at every rank to this TSV file");
  command->add_option("--details", arguments->details,
                      "Write each hit with its rank and the running P, R and AP to this TSV file");
  command->add_option(
      "--missed", arguments->missed,
      "Write the gold pairs not found, with the best-ranked pair of their source term, to this TSV "
      "file");
  command
      ->add_option("--resamples", arguments->significance.resamples,
                   "With several --pred or --intervals: resamples of the bootstrap intervals and of the "
                   "randomisation test of each run's AP difference to the first run")
      ->capture_default_str();
  command
      ->add_option("--seed", arguments->significance.seed,
                   "With several --pred or --intervals: seed of the resamples (the figures do not depend on the "
                   "thread count)")
      ->capture_default_str();
  command->add_option("--forms-language", arguments->forms_language,
                      "Also count the gold source terms whose first candidate is another form of a gold target "
                      "(`файла` for `файл`), with this language's word forms (en, fr, de, ru, ...)");
  command->add_option("--hunspell-dir", arguments->hunspell_dir, "The Hunspell dictionaries of --forms-language")
      ->capture_default_str();
  command->add_option("--inflected", arguments->inflected,
                      "With --forms-language: write those source terms, their first candidate and its gold target "
                      "to this TSV file (run, source, candidate, gold_target)");
  command->add_flag("--intervals", arguments->intervals,
                    "Each run's AP with its 95 % interval, from a bootstrap over the source terms of the gold and "
                    "of its list (--resamples, --seed); prints the table of --format");
  command->add_flag("--pred-has-scores", arguments->pred_has_scores,
                    "Each --pred line has a third column, a score (align --scores); detected when the first line "
                    "has a numeric third column");
  command->add_flag("--allow-reversed", arguments->allow_reversed,
                    "Score files whose columns look swapped (target<TAB>source) as they are, with a warning");
  command->footer(
      "Example:\n  termalign evaluate --gold terms-en-fr.txt --pred run1.tsv --pred run2.tsv \\\n"
      "      --src-terms terms-en.txt --tgt-terms terms-fr.txt --details hits.tsv --missed missed.tsv\n"
      "Required: --gold and --pred.\n");
  command->callback([arguments] { run_evaluate(*arguments); });
}

}  // namespace termalign::cli
