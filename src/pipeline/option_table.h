// The option table of AlignConfig and what reading and writing options share (options.cpp, config_file.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "termalign/config.h"

namespace termalign::pipeline {

// A change of `data_dir`, `pair` or `dataset_corpora` (to false) empties the inputs the former folder gave
// (dataset.cpp).
void forget_dataset_inputs(InputOptions& input, bool corpora_only);

// Sets `field` (data_dir, pair or dataset_corpora; any other option is only set) to `value`, first forgetting the
// inputs the former dataset gave when the value changes (forget_dataset_inputs).
template <class Field>
void set_field(InputOptions& input, const std::string& section, const std::string& key, Field& field,
               const Field& value) {
  if (section == "input" && field != value) {
    if constexpr (std::is_same_v<Field, std::string>) {
      if (key == "data_dir" || key == "pair") forget_dataset_inputs(input, false);
    } else if constexpr (std::is_same_v<Field, bool>) {
      if (key == "dataset_corpora" && !value) forget_dataset_inputs(input, true);
    }
  }
  field = value;
}

// Every option of AlignConfig, once: reading, writing and the unknown-key check all walk this list, so a new
// option cannot be readable but not written (or the reverse).
template <class Config, class Visitor>
void visit_options(Config& config, Visitor&& visit) {
  visit("input", "src_vectors", config.input.src_vectors);
  visit("input", "tgt_vectors", config.input.tgt_vectors);
  visit("input", "seed", config.input.seed);
  visit("input", "dictionary", config.input.dictionary);
  visit("input", "dictionary_seed_translations", config.input.dictionary_seed_translations);
  visit("input", "dictionary_min_coverage", config.input.dictionary_min_coverage);
  visit("input", "src_terms", config.input.src_terms);
  visit("input", "tgt_terms", config.input.tgt_terms);
  visit("input", "most_frequent", config.input.most_frequent);
  visit("input", "reranker", config.input.reranker);
  visit("input", "src_corpus", config.input.src_corpus);
  visit("input", "tgt_corpus", config.input.tgt_corpus);
  visit("input", "corpus_window", config.input.corpus_window);
  visit("input", "src_corpus_vectors", config.input.src_corpus_vectors);
  visit("input", "tgt_corpus_vectors", config.input.tgt_corpus_vectors);
  visit("input", "corpus_weight", config.input.corpus_weight);
  visit("input", "allow_reversed", config.input.allow_reversed);
  visit("input", "data_dir", config.input.data_dir);
  visit("input", "pair", config.input.pair);
  visit("input", "dataset_corpora", config.input.dataset_corpora);
  visit("output", "out", config.output.out);
  visit("output", "scores", config.output.scores);
  visit("output", "save_mapping", config.output.save_mapping);
  visit("output", "mapping", config.input.saved_mapping);
  visit("output", "save_mapped_vectors", config.output.save_mapped_vectors);
  visit("output", "explain", config.output.explain);
  visit("mapping", "normalization", config.mapping.normalization);
  visit("mapping", "min_seed_pairs", config.mapping.min_seed_pairs);
  visit("mapping", "whiten", config.mapping.whiten);
  visit("mapping", "src_reweight", config.mapping.src_reweight);
  visit("mapping", "tgt_reweight", config.mapping.tgt_reweight);
  visit("mapping", "dewhiten", config.mapping.dewhiten);
  visit("mapping", "dim_reduction", config.mapping.dim_reduction);
  visit("mapping", "refine_iterations", config.mapping.refine_iterations);
  visit("mapping", "refine_words", config.mapping.refine_words);
  visit("mapping", "refine_validation", config.mapping.refine_validation);
  visit("mapping", "refine_split_seed", config.mapping.refine_split_seed);
  visit("mapping", "seed_spelling_similarity", config.mapping.seed_spelling_similarity);
  visit("mapping", "seed_lexicon_words", config.mapping.seed_lexicon_words);
  visit("mapping", "seed_term_rounds", config.mapping.seed_term_rounds);
  visit("mapping", "seed_term_pairs", config.mapping.seed_term_pairs);
  visit("mapping", "seed_term_converged", config.mapping.seed_term_converged);
  visit("mapping", "seed_start_gain", config.mapping.seed_start_gain);
  visit("mapping", "seed_ranked_rounds", config.mapping.seed_ranked_rounds);
  visit("mapping", "seed_ranked_pairs", config.mapping.seed_ranked_pairs);
  visit("mapping", "seed_ranked_fusion", config.mapping.seed_ranked_fusion);
  visit("composition", "lowercase_fallback", config.composition.lowercase_fallback);
  visit("composition", "split_compounds", config.composition.split_compounds);
  visit("composition", "split_closed_compounds", config.composition.split_closed_compounds);
  visit("composition", "closed_compound_share", config.composition.closed_compound_share);
  visit("composition", "subword_oov", config.composition.subword_oov);
  visit("composition", "joined_terms", config.composition.joined_terms);
  visit("scoring", "k", config.scoring.k);
  visit("scoring", "neighbourhood", config.scoring.neighbourhood);
  visit("scoring", "neighbourhood_words", config.scoring.neighbourhood_words);
  visit("scoring", "candidate_pool", config.scoring.candidate_pool);
  visit("scoring", "tile_rows", config.scoring.tile_rows);
  visit("scoring", "tile_cols", config.scoring.tile_cols);
  visit("scoring", "threads", config.scoring.threads);
  visit("scoring", "spill_mb", config.scoring.spill_mb);
  visit("scoring", "precision", config.scoring.precision);
  visit("ranking", "top_m", config.ranking.top_m);
  visit("ranking", "mutual_m", config.ranking.mutual_m);
  visit("ranking", "cap", config.ranking.cap);
  visit("ranking", "dictionary_candidates", config.ranking.dictionary_candidates);
  visit("orthography", "weight", config.orthography.weight);
  visit("orthography", "transliterate", config.orthography.transliterate);
  visit("orthography", "candidates", config.orthography.candidates);
  visit("orthography", "work_bound", config.orthography.work_bound);
  visit("forms", "enabled", config.forms.enabled);
  visit("forms", "src_language", config.forms.src_language);
  visit("forms", "tgt_language", config.forms.tgt_language);
  visit("forms", "hunspell_dir", config.forms.hunspell_dir);
  visit("forms", "family_candidates", config.forms.family_candidates);
  visit("forms", "agreement_order", config.forms.agreement_order);
}

// A file or folder name, relative to the configuration file that gives it (the seed's "identical",
// "transliterated" and "auto" are keywords).
bool is_path_option(const std::string& section, const std::string& key, const std::string& value);

// A float as typed: the shortest text that reads back to the same double (0.1, not 0.10000000000000001), with a
// decimal point so that TOML reads it as a float.
std::string toml_float(double value);

// The CLI flag of an option (without "--"): its key with dashes, except where the flag says which section it is
// of.
std::string flag_of(const std::string& section, const std::string& key);

template <class Enum>
std::string enum_name(Enum value) {
  return to_string(value);
}

// A configuration value the user must change: a usage error (exit 2), as for a flag, naming the file and line.
[[noreturn]] void throw_config_error(const std::string& path, std::size_t line, const std::string& message);

}  // namespace termalign::pipeline
