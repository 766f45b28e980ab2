#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "termalign/evaluation.h"
#include "termalign/io.h"
#include "termalign/lexicon.h"

namespace termalign::cli {

namespace {

struct EvaluateArguments {
  std::string gold, predictions, source_terms, target_terms, curve;
  bool json = false;
  EvaluationOptions options;
};

void run_evaluate(const EvaluateArguments& arguments) {
  // Before reading any file, so that a bad command line is reported as such.
  validate(arguments.options, !arguments.source_terms.empty(), !arguments.target_terms.empty());
  const PairList gold = read_pairs(arguments.gold, PairFileKind::gold);
  const PairList predictions = read_pairs(arguments.predictions, PairFileKind::submission);
  std::optional<TermList> source_terms, target_terms;
  if (!arguments.source_terms.empty()) {
    source_terms = read_term_list(arguments.source_terms);
    target_terms = read_term_list(arguments.target_terms);
  }
  std::vector<CurvePoint> curve;
  const EvaluationResult result =
      evaluate(gold, predictions, source_terms ? &*source_terms : nullptr, target_terms ? &*target_terms : nullptr,
               arguments.options, arguments.curve.empty() ? nullptr : &curve);
  if (!arguments.curve.empty()) write_file_atomically(arguments.curve, format_curve(curve));
  std::cout << (arguments.json ? format_json(result) : format_report(result)) << std::flush;
}

}  // namespace

void add_evaluate_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "evaluate", "Score a ranked list of term pairs against a gold dictionary (BUCC 2022 average precision)");
  auto arguments = std::make_shared<EvaluateArguments>();
  command->add_option("--gold", arguments->gold, "Gold pairs, src<TAB>tgt per line")->required();
  command->add_option("--pred", arguments->predictions, "Ranked predicted pairs, src<TAB>tgt per line, best first")
      ->required();
  command->add_option("--src-terms", arguments->source_terms, "Source term list D1 (enables the cap)");
  command->add_option("--tgt-terms", arguments->target_terms, "Target term list D2 (enables the cap)");
  command->add_flag("--ignore-oov", arguments->options.ignore_oov,
                    "Drop predicted pairs with a term outside the term lists, before ranking");
  command->add_flag("--breakdown", arguments->options.breakdown,
                    "Recall and AP on identical / close / far and single- / multi-word gold subsets");
  command->add_flag("--json", arguments->json, "Print the scores as one JSON object");
  command->add_option("--curve", arguments->curve, "Write P, R, F1 and AP at every rank to this TSV file");
  command->callback([arguments] { run_evaluate(*arguments); });
}

}  // namespace termalign::cli
