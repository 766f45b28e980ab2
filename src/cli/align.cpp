// `termalign align`: flags and an optional TOML configuration, copied into termalign::AlignConfig.
#include "termalign/align.h"

#include <iostream>

#include "align_options.h"
#include "commands.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"

namespace termalign::cli {

std::shared_ptr<AlignOptions> AlignOptions::add(CLI::App* command, bool with_outputs) {
  auto state = std::make_shared<AlignOptions>();
  AlignOptions& a = *state;
  command->add_option("--config", a.config_path, "TOML configuration; flags given on the command line override it")
      ->check(CLI::ExistingFile);
  a.option(
      command, "--src-vectors", "Required: source-language vectors (.vec, .vec.gz or fastText .bin)",
      [](AlignConfig & c) -> auto& { return c.input.src_vectors; });
  a.option(
      command, "--tgt-vectors", "Required: target-language vectors (.vec, .vec.gz or fastText .bin)",
      [](AlignConfig & c) -> auto& { return c.input.tgt_vectors; });
  a.option(
      command, "--seed",
      "Required (unless --mapping or --data-dir): seed lexicon, src<TAB>tgt; 'identical' builds it from the words "
      "written alike in both vocabularies",
      [](AlignConfig & c) -> auto& { return c.input.seed; });
  a.option(
      command, "--src-terms", "Required (unless --data-dir): source term list (D1)",
      [](AlignConfig & c) -> auto& { return c.input.src_terms; });
  a.option(
      command, "--tgt-terms", "Required (unless --data-dir): target term list (D2)",
      [](AlignConfig & c) -> auto& { return c.input.tgt_terms; });
  a.option(
      command, "--data-dir",
      "BUCC dataset folder: terms-<l1>.txt, terms-<l2>.txt, seed-<l1>-<l2>.txt fill the inputs not given (with "
      "--pair); its gold terms-<l1>-<l2>.txt, when there, scores the run",
      [](AlignConfig & c) -> auto& { return c.input.data_dir; });
  a.option(
      command, "--pair", "With --data-dir: the language pair l1-l2 of its files (e.g. en-fr)",
      [](AlignConfig & c) -> auto& { return c.input.pair; });
  if (with_outputs) {
    a.option(
        command, "--out", "Required: submission to write (two TAB-separated columns)",
        [](AlignConfig & c) -> auto& { return c.output.out; });
    a.option(
        command, "--scores", "Also write the ranked list with a score column here",
        [](AlignConfig & c) -> auto& { return c.output.scores; });
    a.option(
        command, "--explain",
        "Write every output pair with the parts of its score (CSLS, cosine, r_T, r_S, orthography, re-ranker "
        "features) to this TSV file",
        [](AlignConfig & c) -> auto& { return c.output.explain; });
  }
  a.option(
      command, "--save-mapped-vectors", "Write the mapped vocabularies to PREFIX.src.vec and PREFIX.tgt.vec",
      [](AlignConfig & c) -> auto& { return c.output.save_mapped_vectors; });
  a.option(
      command, "--save-mapping", "Save the fitted mapping here",
      [](AlignConfig & c) -> auto& { return c.output.save_mapping; });
  a.option(
      command, "--mapping", "Load this mapping instead of fitting one",
      [](AlignConfig & c) -> auto& { return c.output.mapping; });
  a.option(
      command, "--src-corpus-vectors", "Source vectors trained on the corpus (train-vectors), combined with the general ones",
      [](AlignConfig & c) -> auto& { return c.input.src_corpus_vectors; });
  a.option(
      command, "--tgt-corpus-vectors", "Target vectors trained on the corpus, combined with the general ones",
      [](AlignConfig & c) -> auto& { return c.input.tgt_corpus_vectors; });
  a.option(
      command, "--corpus-weight", "Weight of the corpus vectors' cosine in the combined similarity (0-1)",
      [](AlignConfig & c) -> auto& { return c.input.corpus_weight; });
  a.option(
      command, "--joined-terms", "Use a multi-word term's own vector when the vectors have its joined token (true/false)",
      [](AlignConfig & c) -> auto& { return c.composition.joined_terms; });
  a.option(
      command, "--most-frequent", "Frequent words loaded besides the needed ones",
      [](AlignConfig & c) -> auto& { return c.input.most_frequent; });
  a.option(
      command, "--min-seed-pairs", "Fewer usable seed pairs is an error",
      [](AlignConfig & c) -> auto& { return c.mapping.min_seed_pairs; });
  a.option(
      command, "--lowercase-fallback", "Try unknown tokens lower-cased (true/false)",
      [](AlignConfig & c) -> auto& { return c.composition.lowercase_fallback; });
  a.option(
      command, "--split-compounds", "Split unknown tokens on hyphens and apostrophes (true/false)",
      [](AlignConfig & c) -> auto& { return c.composition.split_compounds; });
  a.option(
      command, "--subword-oov", "Use subword vectors of unknown tokens with .bin models (true/false)",
      [](AlignConfig & c) -> auto& { return c.composition.subword_oov; });
  a.option(
      command, "--k", "CSLS neighbourhood size", [](AlignConfig & c) -> auto& { return c.scoring.k; });
  a.option(
      command, "--neighbourhood-words", "With --neighbourhood vocabulary: frequent words per side",
      [](AlignConfig & c) -> auto& { return c.scoring.neighbourhood_words; });
  a.option(
      command, "--candidate-pool", "One-pass CSLS: targets kept per source term (0 = 4 x top_m); speed only",
      [](AlignConfig & c) -> auto& { return c.scoring.candidate_pool; });
  a.option(
      command, "--tile-rows", "Source terms per scoring tile",
      [](AlignConfig & c) -> auto& { return c.scoring.tile_rows; });
  a.option(
      command, "--tile-cols", "Target terms per scoring tile",
      [](AlignConfig & c) -> auto& { return c.scoring.tile_cols; });
  a.option(
      command, "--threads", "Threads (0 = all cores); the output does not depend on it",
      [](AlignConfig & c) -> auto& { return c.scoring.threads; });
  a.option(
      command, "--top-m", "Keep each source term's m best targets (0 = no limit)",
      [](AlignConfig & c) -> auto& { return c.ranking.top_m; });
  a.option(
      command, "--mutual-m", "Keep only pairs mutually within the top m (0 = off)",
      [](AlignConfig & c) -> auto& { return c.ranking.mutual_m; });
  a.option(
      command, "--cap", "Cut the list at this many pairs (0 = the BUCC cap)",
      [](AlignConfig & c) -> auto& { return c.ranking.cap; });
  a.option(
      command, "--reranker",
      "Re-ranker: default (the bundled model trained on enfr/train), none (unsupervised score) or a model file",
      [](AlignConfig & c) -> auto& { return c.input.reranker; });
  a.option(
      command, "--src-corpus", "Source-language corpus (one sentence per line): corpus evidence for the re-ranker",
      [](AlignConfig & c) -> auto& { return c.input.src_corpus; });
  a.option(
      command, "--tgt-corpus", "Target-language corpus, comparable to the source one",
      [](AlignConfig & c) -> auto& { return c.input.tgt_corpus; });
  a.option(
      command, "--corpus-window", "Context words on each side of a term occurrence in the corpora",
      [](AlignConfig & c) -> auto& { return c.input.corpus_window; });
  a.option(
      command, "--whiten", "Multi-step mapping: whiten both sides on the seed pairs (true/false)",
      [](AlignConfig & c) -> auto& { return c.mapping.whiten; });
  a.option(
      command, "--src-reweight", "Multi-step mapping: re-weight the source side (power of the singular values)",
      [](AlignConfig & c) -> auto& { return c.mapping.src_reweight; });
  a.option(
      command, "--tgt-reweight", "Multi-step mapping: re-weight the target side",
      [](AlignConfig & c) -> auto& { return c.mapping.tgt_reweight; });
  a.option(
      command, "--dim-reduction", "Multi-step mapping: keep this many dimensions (0 = all)",
      [](AlignConfig & c) -> auto& { return c.mapping.dim_reduction; });
  a.option(
      command, "--refine-iterations", "Self-learning refinement iterations (0 = off)",
      [](AlignConfig & c) -> auto& { return c.mapping.refine_iterations; });
  a.option(
      command, "--refine-words", "Refinement: frequent words per side among which the dictionary is induced",
      [](AlignConfig & c) -> auto& { return c.mapping.refine_words; });
  a.option(
      command, "--refine-validation",
      "Refinement: share of seed words held out; an iteration that retrieves fewer of them stops it (0 = off)",
      [](AlignConfig & c) -> auto& { return c.mapping.refine_validation; });
  a.option(
      command, "--orthographic-weight", "Add this weight x orthographic similarity to the score (0 = off)",
      [](AlignConfig & c) -> auto& { return c.orthography.weight; });
  a.option(
      command, "--transliterate", "Transliterate Cyrillic and Greek before comparing spellings (true/false)",
      [](AlignConfig & c) -> auto& { return c.orthography.transliterate; });
  a.option(
      command, "--orthographic-candidates", "Also add each source term's m closest spellings as candidates",
      [](AlignConfig & c) -> auto& { return c.orthography.candidates; });
  // A flag, not an option taking true/false: it is given to go on past the check's error.
  CLI::Option* allow_reversed =
      command->add_flag("--allow-reversed", a.flags.input.allow_reversed,
                        "Use a seed lexicon whose columns look swapped against the vectors as it is (a warning)");
  a.overrides.push_back([allow_reversed](AlignConfig& config) {
    if (allow_reversed->count()) config.input.allow_reversed = true;
  });
  // Enumerations are parsed by the library so that the names and the error sentence live in one place.
  CLI::Option* normalization =
      command->add_option("--normalization", a.normalization, "none, unit, center or unit-center-unit")
          ->capture_default_str();
  CLI::Option* neighbourhood =
      command->add_option("--neighbourhood", a.neighbourhood, "CSLS neighbourhoods among: terms or vocabulary")
          ->capture_default_str();
  CLI::Option* dewhiten =
      command->add_option("--dewhiten", a.dewhiten, "Multi-step mapping: de-whiten none, source, target or both")
          ->capture_default_str();
  // The overrides live inside the state: they refer to it by a plain pointer (a shared_ptr would be a cycle).
  AlignOptions* self = state.get();
  a.overrides.push_back([self, normalization, neighbourhood, dewhiten](AlignConfig& config) {
    if (normalization->count()) config.mapping.normalization = parse_normalization(self->normalization);
    if (neighbourhood->count()) config.scoring.neighbourhood = parse_neighbourhood(self->neighbourhood);
    if (dewhiten->count()) config.mapping.dewhiten = parse_dewhiten(self->dewhiten);
  });
  return state;
}

void add_align_command(CLI::App& app, const ProcessGroup& group) {
  CLI::App* command = app.add_subcommand("align", "Align two term lists and write a ranked, capped submission");
  auto options = AlignOptions::add(command, true);
  command->footer(
      "Required: --src-vectors, --tgt-vectors, --src-terms, --tgt-terms, --seed (or --mapping) and --out, each by "
      "its "
      "flag or in the --config file; --data-dir DIR --pair l1-l2 gives the term lists and the seed.\n"
      "Example:\n  termalign align --src-vectors en.bin --tgt-vectors fr.bin --seed seed-en-fr.txt \\\n"
      "      --src-terms terms-en.txt --tgt-terms terms-fr.txt --out submission.tsv\n"
      "  termalign align --data-dir enfr/train --pair en-fr --src-vectors en.bin --tgt-vectors fr.bin --out "
      "s.tsv\n");
  command->callback([options, &group] {
    std::string gold;
    const AlignConfig config = options->resolve(&gold);
    run_align(config, group);
    if (gold.empty() || !group.is_root()) return;
    // The dataset has its gold: the run's score, as `termalign evaluate` prints it.
    const TermList sources = read_term_list(config.input.src_terms),
                   targets = read_term_list(config.input.tgt_terms);
    const EvaluationResult result =
        evaluate(read_pairs(gold, PairFileKind::gold), read_pairs(config.output.out, PairFileKind::submission),
                 &sources, &targets, EvaluationOptions{});
    logger().info("scored {} against the dataset's gold {}", config.output.out, gold);
    std::cout << format_report(result) << std::flush;
  });
}

}  // namespace termalign::cli
