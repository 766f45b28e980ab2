#include "termalign/report.h"

#include <memory>

#include "commands.h"

namespace termalign::cli {

void add_report_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "report", "Write one self-contained HTML page of error analysis for one or several runs against a gold");
  auto options = std::make_shared<ReportOptions>();
  command->add_option("--gold", options->gold, "Gold pairs, src<TAB>tgt per line (required unless --data-dir)");
  command
      ->add_option("--pred", options->predictions,
                   "Ranked predicted pairs, best first (required); repeat it to compare runs on one page")
      ->required()
      ->take_all();
  command->add_option("--explain", options->explanations,
                      "The `align --explain` file of a run: the parts of each pair's score, shown beside its "
                      "wrong pairs (repeatable; each is matched to the --pred list it explains)");
  command->add_option("--src-terms", options->source_terms, "Source term list D1 (the cap)");
  command->add_option("--tgt-terms", options->target_terms, "Target term list D2 (the cap)");
  command->add_option("--data-dir", options->data_dir,
                      "A BUCC dataset folder: its term lists and gold (terms-l1-l2.txt) fill those not given");
  command->add_option("--pair", options->pair, "The language pair l1-l2 of --data-dir (read from its file names)");
  command->add_option("--out", options->out, "The HTML page to write (required)")->required();
  command->add_option("--max-rows", options->max_rows, "Rows listed per table; the page says how many there are")
      ->capture_default_str();
  command->footer(
      "Example:\n  termalign report --data-dir data/sample --pred run.tsv --pred plain.tsv \\\n"
      "      --explain run.explain.tsv --out report.html\n");
  command->callback([options] { write_report(*options); });
}

}  // namespace termalign::cli
