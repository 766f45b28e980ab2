// `termalign align`: flags and an optional TOML configuration, copied into termalign::AlignConfig.
#include <iostream>
#include <map>
#include <string>

#include "align_options.h"
#include "commands.h"
#include "io/sanity.h"
#include "termalign/aligner.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"

namespace termalign::cli {

namespace {

// The help of each option's flag; every option of the table (config.h) has one here (checked when the command is
// built, so a new option cannot go without).
const std::map<std::string, std::string>& option_help() {
  static const std::map<std::string, std::string> help = {
      {"src-vectors", "Required: source-language vectors (.vec or fastText .bin, either gzipped)"},
      {"tgt-vectors", "Required: target-language vectors (.vec or fastText .bin, either gzipped)"},
      {"seed",
       "Required (unless --mapping or --data-dir): seed lexicon, src<TAB>tgt (e.g. a MUSE dictionary), or one "
       "induced from the vectors: 'identical' (the words written alike in both vocabularies), 'transliterated' "
       "(also those spelt alike or nearly so in Latin letters), 'auto' (the task's condition, the default of a "
       "--data-dir without a seed file: the words spelt alike, then the term lists' and the run's own best pairs, "
       "README and docs/commands.md)"},
      {"src-terms", "Required (unless --data-dir): source term list (D1)"},
      {"tgt-terms", "Required (unless --data-dir): target term list (D2)"},
      {"most-frequent", "Frequent words loaded besides the needed ones"},
      {"reranker",
       "Re-ranker: default (the bundled model trained on enfr/train), none (unsupervised score) or a model file"},
      {"src-corpus", "Source-language corpus (one sentence per line): corpus evidence for the re-ranker"},
      {"tgt-corpus", "Target-language corpus, comparable to the source one"},
      {"corpus-window", "Context words on each side of a term occurrence in the corpora"},
      {"src-corpus-vectors",
       "Source vectors trained on the corpus (train-vectors), combined with the general ones"},
      {"tgt-corpus-vectors", "Target vectors trained on the corpus, combined with the general ones"},
      {"corpus-weight", "Weight of the corpus vectors' cosine in the combined similarity (0-1)"},
      {"dictionary",
       "A bilingual dictionary as evidence (repeatable): a dictd database (.index, .dict.dz or base name; "
       "freedict-eng-deu reads forward, freedict-deu-eng backward for en-de) or a two-column file (src<TAB>tgt, "
       "or "
       "two words); without a seed lexicon, its frequent single-word pairs are the seed"},
      {"dictionary-seed-translations",
       "Without a seed lexicon: each frequent source word's dictionary translations kept in the mapping's seed, "
       "the most frequent first"},
      {"dictionary-min-coverage",
       "The dictionaries' features rank the run when they translate at least this share of the source terms' "
       "words, else their candidates only (chosen on enru/train: FreeDict en-ru covers 12 %, and its features "
       "cost 0.017 AP there; enfr/train 46 %)"},
      {"allow-reversed", "Use a seed lexicon whose columns look swapped against the vectors as it is (a warning)"},
      {"data-dir",
       "BUCC dataset folder: terms-<l1>.txt, terms-<l2>.txt and, when there, the corpora corpus-<l1>.txt, "
       "corpus-<l2>.txt and a seed lexicon seed-<l1>-<l2>.txt fill the inputs not given (without a seed file, "
       "--seed auto); its gold terms-<l1>-<l2>.txt, when there, scores the run"},
      {"pair",
       "With --data-dir: the language pair l1-l2 of its files (e.g. en-fr); read from their names when they "
       "name one pair only, else English first when its two term lists are English and another language"},
      {"dataset-corpora",
       "With --data-dir: its corpus-<l1>.txt and corpus-<l2>.txt, when both are there, are the corpora unless "
       "--src-corpus/--tgt-corpus are given"},
      {"out", "Required: submission to write (two TAB-separated columns)"},
      {"scores", "Also write the ranked list with a score column here"},
      {"save-mapping", "Save the fitted mapping here"},
      {"mapping", "Load this mapping instead of fitting one"},
      {"save-mapped-vectors", "Write the mapped vocabularies to PREFIX.src.vec and PREFIX.tgt.vec"},
      {"explain",
       "Write every output pair with the parts of its score (CSLS, cosine, r_T, r_S, orthography, re-ranker "
       "features) to this TSV file"},
      {"normalization",
       "none, unit, center, unit-center-unit or auto (center with a seed lexicon or --dictionary, "
       "unit-center-unit with a seed induced from the vectors)"},
      {"min-seed-pairs", "Fewer usable seed pairs is an error"},
      {"whiten", "Multi-step mapping: whiten both sides on the seed pairs"},
      {"src-reweight", "Multi-step mapping: re-weight the source side (power of the singular values)"},
      {"tgt-reweight", "Multi-step mapping: re-weight the target side"},
      {"dewhiten", "Multi-step mapping: de-whiten none, source, target or both"},
      {"dim-reduction", "Multi-step mapping: keep this many dimensions (0 = all)"},
      {"refine-iterations", "Self-learning refinement iterations (0 = off)"},
      {"refine-words", "Refinement: frequent words per side among which the dictionary is induced"},
      {"refine-validation",
       "Refinement: share of seed words held out; an iteration that retrieves fewer of them stops it (0 = off)"},
      {"refine-split-seed", "Refinement: seed of the shuffle that chooses the held-out seed words"},
      {"seed-spelling-similarity",
       "Induced seeds: words of at least 4 letters this alike in Latin letters (n-gram Dice), each the other's "
       "closest, pair up"},
      {"seed-lexicon-words",
       "With an induced seed: the re-ranker's seed evidence reads the mutual CSLS nearest neighbours among this "
       "many frequent words per side under the fitted mapping (0 = the induced seed itself)"},
      {"seed-term-rounds",
       "Induced seeds: at most this many rounds of reading the seed off the term lists (the mutual CSLS nearest "
       "term pairs' words seed the next fit, until they no longer change; with a --dictionary and no seed "
       "lexicon, "
       "added to the dictionary's pairs; 0 = off)"},
      {"seed-term-pairs", "Induced seeds: the most confident term pairs read in each round (0 = all)"},
      {"seed-term-converged",
       "Induced seeds: the term rounds stop when a round's word pairs are at least this share of the last round's "
       "(chosen on ende/train and enru/train: 85-91 % after 2 and 4-5 rounds, the terms' mean CSLS flat)"},
      {"seed-start-gain",
       "Induced seeds: the first term round's fit replaces the start only when it raises the mean CSLS of the "
       "mutual nearest term pairs by this factor (chosen on the dev sets: enru/train +35 %, ende/train +7.3 %, "
       "enfr/train +1.4 %, whose start is kept; any factor between the last two chooses alike)"},
      {"seed-ranked-rounds",
       "Induced seeds, with a re-ranker: rounds of reading the seed off the run's own re-ranked list (the best "
       "pairs' words seed the next fit, whose run is ranked again; 0 = off)"},
      {"seed-ranked-pairs", "Induced seeds: the best pairs of the re-ranked list read in each ranked round"},
      {"seed-ranked-fusion",
       "After ranked rounds: rank each candidate by its mean score over the runs (false: the last run's score)"},
      {"lowercase-fallback", "Try unknown tokens lower-cased, then as cased words of the vectors"},
      {"split-compounds", "Split unknown tokens on hyphens and apostrophes"},
      {"split-closed-compounds", "Read unknown tokens as closed compounds of known words (dateiformat)"},
      {"closed-compound-share", "Split closed compounds in lists where at least this share of the words are such"},
      {"subword-oov", "Use subword vectors of unknown tokens with .bin models"},
      {"joined-terms", "Use a multi-word term's own vector when the vectors have its joined token"},
      {"k", "CSLS neighbourhood size"},
      {"neighbourhood", "CSLS neighbourhoods among: terms or vocabulary"},
      {"neighbourhood-words", "With --neighbourhood vocabulary: frequent words per side"},
      {"candidate-pool", "One-pass CSLS: targets kept per source term (0 = 4 x top_m); speed only"},
      {"tile-rows", "Source terms per scoring tile"},
      {"tile-cols", "Target terms per scoring tile"},
      {"threads", "Threads (0 = all cores); the output does not depend on it"},
      {"precision",
       "Similarity tiles: fp32, bf16 (bf16 products, every deciding value rescored in fp32) or auto (bf16 where "
       "the CPU has AVX512_BF16 or AMX-BF16); the output is the same"},
      {"spill-mb",
       "Word vectors kept for the evidence wait in a temporary file beside the output during the scoring when "
       "larger than this many MiB (0 = never); the output does not depend on it"},
      {"top-m", "Keep each source term's m best targets (0 = no limit)"},
      {"mutual-m", "Keep only pairs mutually within the top m (0 = off)"},
      {"cap", "Cut the list at this many pairs, at most the BUCC cap (0 = the BUCC cap)"},
      {"dictionary-candidates",
       "With --dictionary: target terms in which every word of a source term has a translation, added as its "
       "candidates (at most this many)"},
      {"orthographic-weight",
       "Unsupervised score (--reranker none): add this weight x orthographic similarity (0 = off); a re-ranker "
       "weighs the spelling itself"},
      {"transliterate", "Transliterate Cyrillic and Greek before comparing spellings"},
      {"orthographic-candidates", "Also add each source term's m closest spellings as candidates"},
      {"orthographic-work-bound",
       "The search of the orthographic candidates reads at most this many n-gram postings per source term (0 = no "
       "bound: the exact top m)"},
      {"word-forms",
       "Group each term list into families of word forms (Hunspell's dictionary forms, else Snowball's stems): "
       "their features for the re-ranker and their members as candidates (false: none, for ablations)"},
      {"src-language",
       "The source terms' language for their word forms (en, fr, de, ru, ...); default: the dataset's pair, "
       "else the term list's name terms-<language>.txt"},
      {"tgt-language", "The target terms' language, as --src-language"},
      {"hunspell-dir", "The folder of the Hunspell dictionaries (<ll>_<LL>.aff and .dic)"},
      {"agreement-order",
       "For a source term in citation form, give the best scores among its candidates of one family of forms to "
       "the targets in citation form, then to those not shorter than their dictionary form (an inflected source "
       "term keeps the model's order), as the task's gold respects grammatical number"},
      {"family-candidates",
       "The family members of each source term's best this many targets (by CSLS) join its candidates (0 = "
       "none)"},
  };
  return help;
}

}  // namespace

std::shared_ptr<AlignOptions> AlignOptions::add(CLI::App* command, bool with_outputs) {
  auto state = std::make_shared<AlignOptions>();
  AlignOptions& a = *state;
  command->add_option("--config", a.config_path,
                      "TOML configuration; flags given on the command line override it");
  const AlignConfig defaults;
  for (const OptionName& name : option_names()) {
    const auto help = option_help().find(name.flag);
    if (help == option_help().end()) throw Error(ErrorKind::internal, "no help for the option --" + name.flag);
    if (!with_outputs && (name.flag == "out" || name.flag == "scores" || name.flag == "explain")) continue;
    if (name.flag == "dictionary") {
      // A list: each --dictionary adds one.
      a.dictionary_flag = command->add_option("--dictionary", a.dictionaries, help->second)
                              ->allow_extra_args(false)
                              ->type_name("TEXT");
      continue;
    }
    if (name.flag == "allow-reversed") {
      // A flag, not an option taking true/false: it is given to go on past the check's error.
      a.allow_reversed_flag = command->add_flag("--allow-reversed", a.allow_reversed, help->second);
      continue;
    }
    // The values live in the map: its nodes do not move as it grows.
    std::string& value = a.values[name.flag];
    CLI::Option* parsed = command->add_option("--" + name.flag, value, help->second)
                              ->default_str(option_text(defaults, name.flag))
                              ->type_name(option_type_name(name.flag));
    a.given.emplace_back(name.flag, parsed);
  }
  return state;
}

void add_align_command(CLI::App& app, const ProcessGroup& group) {
  CLI::App* command = app.add_subcommand("align", "Align two term lists and write a ranked, capped submission");
  auto options = AlignOptions::add(command, true);
  command->footer(
      "Required: --src-vectors, --tgt-vectors, --src-terms, --tgt-terms, --seed (or --mapping) and --out, each by "
      "its flag or in the --config file; --data-dir DIR [--pair l1-l2] gives the term lists, the corpora and the "
      "seed lexicon when it has one (else --seed auto).\n"
      "Example:\n  termalign align --src-vectors en.bin --tgt-vectors fr.bin --seed seed-en-fr.txt \\\n"
      "      --src-terms terms-en.txt --tgt-terms terms-fr.txt --out submission.tsv\n"
      "  termalign align --data-dir enfr/train --src-vectors en.bin --tgt-vectors fr.bin --out "
      "s.tsv\n");
  command->callback([options, &group] {
    std::string gold;
    const AlignConfig config = options->resolve(&gold);
    run_align(config, group);
    if (gold.empty() || !group.is_root()) return;
    // The dataset has its gold: the run's score, as `termalign evaluate` prints it.
    // The run read the lists and warned about them (CRLF, a BOM, repeats): they are read again without warnings.
    struct ErrorsOnly {
      spdlog::level::level_enum level = logger().level();
      ErrorsOnly() { logger().set_level(std::max(level, spdlog::level::err)); }
      ~ErrorsOnly() { logger().set_level(level); }
    };
    TermList sources, targets;
    {
      const ErrorsOnly quiet;
      sources = read_term_list(config.input.src_terms);
      targets = read_term_list(config.input.tgt_terms);
    }
    const PairList gold_pairs = read_pairs(gold, PairFileKind::gold);
    warn_gold_outside_lists(gold_pairs, sources, targets);
    const EvaluationResult result = evaluate(gold_pairs, read_pairs(config.output.out, PairFileKind::submission),
                                             &sources, &targets, EvaluationOptions{});
    logger().info("scored {} against the dataset's gold {}", config.output.out, gold);
    std::cout << format_report(result) << std::flush;
  });
}

}  // namespace termalign::cli
