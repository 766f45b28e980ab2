#include "termalign/config.h"

#include <spdlog/fmt/fmt.h>
#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/io.h"
#include "termalign/logging.h"
#include "termalign/version.h"

namespace termalign {

namespace {

// The files of a BUCC dataset folder for languages l, l1-l2 (the organisers' names).
std::string terms_file(const std::string& l) { return "terms-" + l + ".txt"; }
std::string corpus_file(const std::string& l) { return "corpus-" + l + ".txt"; }
std::string seed_file(const std::string& l1, const std::string& l2) { return "seed-" + l1 + "-" + l2 + ".txt"; }
std::string gold_file(const std::string& l1, const std::string& l2) { return "terms-" + l1 + "-" + l2 + ".txt"; }

// A language pair "l1-l2" split at its one dash into `languages`; false when `pair` is not of that form.
bool split_pair(const std::string& pair, std::pair<std::string, std::string>& languages) {
  const std::size_t dash = pair.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == pair.size() ||
      pair.find('-', dash + 1) != std::string::npos) {
    return false;
  }
  languages = {pair.substr(0, dash), pair.substr(dash + 1)};
  return true;
}

// A change of `data_dir`, `pair` or `dataset_corpora` (to false) over a configuration that already names the
// files the former folder gave (a resolved O.config.toml does, resolve_dataset having filled them) empties those
// inputs, so that the new folder or pair fills them again: else the former dataset's lists would be scored
// against the new folder's gold. Inputs named otherwise are kept.
void forget_dataset_inputs(InputOptions& input, bool corpora_only) {
  std::pair<std::string, std::string> languages;
  if (input.data_dir.empty() || !split_pair(input.pair, languages)) return;
  const std::filesystem::path dir = std::filesystem::path(input.data_dir).lexically_normal();
  const auto from_folder = [&](const std::string& field, const std::string& name) {
    return !field.empty() && std::filesystem::path(field).lexically_normal() == dir / name;
  };
  std::vector<std::string> forgotten;
  const auto forget = [&](std::string& field, const char* key, const std::string& name) {
    if (!from_folder(field, name)) return;
    forgotten.push_back(std::string(key) + " (" + field + ")");
    field.clear();
  };
  const std::string &l1 = languages.first, &l2 = languages.second;
  if (!corpora_only) {
    forget(input.src_terms, "src_terms", terms_file(l1));
    forget(input.tgt_terms, "tgt_terms", terms_file(l2));
    forget(input.seed, "seed", seed_file(l1, l2));
  }
  if (from_folder(input.src_corpus, corpus_file(l1)) && from_folder(input.tgt_corpus, corpus_file(l2))) {
    forget(input.src_corpus, "src_corpus", corpus_file(l1));
    forget(input.tgt_corpus, "tgt_corpus", corpus_file(l2));
  }
  if (forgotten.empty()) return;
  std::string list;
  for (const std::string& item : forgotten) list += (list.empty() ? "" : ", ") + item;
  logger().info("the dataset folder {} ({}) gave {}: the new data_dir, pair or dataset_corpora decides them again",
                input.data_dir, input.pair, list);
}

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
  visit("output", "mapping", config.output.mapping);
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
  visit("orthography", "weight", config.orthography.weight);
  visit("orthography", "transliterate", config.orthography.transliterate);
  visit("orthography", "candidates", config.orthography.candidates);
  visit("orthography", "work_bound", config.orthography.work_bound);
}

// A file or folder name, relative to the configuration file that gives it (the seed's "identical" is a keyword).
bool is_path_option(const std::string& section, const std::string& key, const std::string& value) {
  if (section == "input" && key == "seed" && value == kIdenticalSeed) return false;
  if (section == "input" && key == "reranker" && (value == "default" || value == "none")) return false;
  return section == "input"
             ? key != "most_frequent" && key != "corpus_weight" && key != "pair" && key != "corpus_window"
             : section == "output";
}

// A float as typed: the shortest text that reads back to the same double (0.1, not 0.10000000000000001), with a
// decimal point so that TOML reads it as a float.
std::string toml_float(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

// The CLI flag of an option (without "--"): its key with dashes, except where the flag says which section it is
// of.
std::string flag_of(const std::string& section, const std::string& key) {
  std::string flag = section == "orthography" && key != "transliterate" ? "orthographic-" + key : key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

template <class Enum>
std::string enum_name(Enum value) {
  return to_string(value);
}

// A configuration value the user must change: a usage error (exit 2), as for a flag, naming the file and line.
[[noreturn]] void throw_config_error(const std::string& path, std::size_t line, const std::string& message) {
  throw Error(ErrorKind::usage, path + ":" + std::to_string(line) + ": " + message);
}

}  // namespace

const char* to_string(Normalization normalization) {
  switch (normalization) {
    case Normalization::none:
      return "none";
    case Normalization::unit:
      return "unit";
    case Normalization::center:
      return "center";
    case Normalization::unit_center_unit:
      return "unit-center-unit";
  }
  return "?";
}

const char* to_string(Neighbourhood neighbourhood) {
  return neighbourhood == Neighbourhood::terms ? "terms" : "vocabulary";
}

const char* to_string(Dewhiten dewhiten) {
  switch (dewhiten) {
    case Dewhiten::none:
      return "none";
    case Dewhiten::source:
      return "source";
    case Dewhiten::target:
      return "target";
    case Dewhiten::both:
      return "both";
  }
  return "?";
}

Dewhiten parse_dewhiten(const std::string& name) {
  for (auto value : {Dewhiten::none, Dewhiten::source, Dewhiten::target, Dewhiten::both}) {
    if (name == to_string(value)) return value;
  }
  throw_usage_error("Unknown de-whitening '" + name + "': use none, source, target or both.");
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return "fp32";
    case Precision::bf16:
      return "bf16";
    case Precision::automatic:
      return "auto";
  }
  return "?";
}

Precision parse_precision(const std::string& name) {
  for (auto value : {Precision::fp32, Precision::bf16, Precision::automatic}) {
    if (name == to_string(value)) return value;
  }
  throw_usage_error("Unknown scoring precision '" + name + "': use fp32, bf16 or auto.");
}

Normalization parse_normalization(const std::string& name) {
  for (auto value :
       {Normalization::none, Normalization::unit, Normalization::center, Normalization::unit_center_unit}) {
    if (name == to_string(value)) return value;
  }
  throw_usage_error("Unknown normalisation '" + name + "': use none, unit, center or unit-center-unit.");
}

Neighbourhood parse_neighbourhood(const std::string& name) {
  for (auto value : {Neighbourhood::terms, Neighbourhood::vocabulary}) {
    if (name == to_string(value)) return value;
  }
  throw_usage_error("Unknown CSLS neighbourhood '" + name + "': use terms or vocabulary.");
}

void AlignConfig::validate() const {
  auto require = [](bool condition, const std::string& sentence) {
    if (!condition) throw_usage_error(sentence);
  };
  require(!input.src_vectors.empty() && !input.tgt_vectors.empty(),
          "Both vector files are needed: give `src_vectors` and `tgt_vectors` (or [input] in the configuration).");
  require(!input.src_terms.empty() && !input.tgt_terms.empty(),
          "Both term lists are needed: give `src_terms` and `tgt_terms`.");
  require(!input.seed.empty() || !output.mapping.empty(),
          "A seed lexicon (`seed`) is needed unless a saved mapping is loaded with `mapping`.");
  require(output.mapping.empty() || output.save_mapping.empty(),
          "`mapping` loads a mapping and `save_mapping` saves a fitted one: give only one of them.");
  require(scoring.k >= 1, "The CSLS neighbourhood k must be at least 1 (got " + std::to_string(scoring.k) + ").");
  require(scoring.tile_rows >= 1 && scoring.tile_cols >= 1,
          fmt::format("`tile_rows` and `tile_cols` must be at least 1 (got {} and {}).", scoring.tile_rows,
                      scoring.tile_cols));
  require(scoring.threads >= 0,
          fmt::format("`threads` must be 0 (all cores) or a positive number (got {}).", scoring.threads));
  require(scoring.neighbourhood != Neighbourhood::vocabulary || scoring.neighbourhood_words >= 1,
          "With neighbourhood = \"vocabulary\", neighbourhood_words must be at least 1.");
  require(scoring.neighbourhood != Neighbourhood::vocabulary || input.most_frequent >= scoring.neighbourhood_words,
          "neighbourhood_words (" + std::to_string(scoring.neighbourhood_words) +
              ") cannot exceed the number of frequent words loaded, most_frequent (" +
              std::to_string(input.most_frequent) + ").");
  require(mapping.refine_iterations == 0 || input.most_frequent >= mapping.refine_words,
          "refine_words (" + std::to_string(mapping.refine_words) +
              ") cannot exceed the number of frequent words loaded, most_frequent (" +
              std::to_string(input.most_frequent) +
              "): the refinement would induce its dictionary among words loaded only for the terms and the seed. "
              "Lower refine_words too, or set refine_iterations = 0.");
  require(mapping.min_seed_pairs >= 1, "min_seed_pairs must be at least 1.");
  require(mapping.dewhiten == Dewhiten::none || mapping.whiten, "De-whitening needs whiten = true.");
  require(
      mapping.src_reweight >= 0 && mapping.tgt_reweight >= 0,
      fmt::format("The re-weighting powers `src_reweight` and `tgt_reweight` cannot be negative (got {} and {}).",
                  mapping.src_reweight, mapping.tgt_reweight));
  require(mapping.refine_iterations == 0 || mapping.refine_words >= 1,
          "Self-learning refinement needs refine_words of at least 1.");
  require(mapping.refine_validation >= 0 && mapping.refine_validation < 1,
          fmt::format("`refine_validation` is the share of seed words held out, from 0 "
                      "(unchecked) to below 1 (got {}).",
                      mapping.refine_validation));
  require(orthography.weight >= 0,
          fmt::format("The orthographic weight `orthographic_weight` cannot be negative (got {}).",
                      orthography.weight));
  require(input.src_corpus_vectors.empty() == input.tgt_corpus_vectors.empty(),
          "Corpus vectors are combined for both languages or neither: give both `src_corpus_vectors` and "
          "`tgt_corpus_vectors`.");
  require(input.src_corpus.empty() == input.tgt_corpus.empty(),
          "The corpus evidence needs both corpora: give both `src_corpus` and `tgt_corpus`.");
  require(input.corpus_window >= 1,
          "`corpus_window` must be at least 1 (got " + std::to_string(input.corpus_window) + ").");
  require(!input.reranker.empty(), "`reranker` cannot be empty: give \"default\", \"none\" or a model file.");
  require(composition.closed_compound_share >= 0 && composition.closed_compound_share <= 1,
          fmt::format("`closed_compound_share` is a share of a list's words, from 0 to 1 (got {}).",
                      composition.closed_compound_share));
  require(input.corpus_weight >= 0 && input.corpus_weight <= 1,
          fmt::format("`corpus_weight` must be between 0 and 1 (got {}).", input.corpus_weight));
  require(input.src_corpus_vectors.empty() || scoring.neighbourhood == Neighbourhood::terms,
          "Combined corpus vectors need neighbourhood = \"terms\" (the vocabulary neighbourhoods are words of the "
          "general vectors alone).");
  require(
      input.src_corpus_vectors.empty() || output.mapping.empty(),
      "Combining corpus vectors fits a second mapping from the seed lexicon: it cannot be used with `mapping`.");
}

bool uses_reranker(const AlignConfig& config) { return config.input.reranker != "none"; }

namespace {

// Parses a whole TOML document; a syntax error is an input error naming `origin` and the line.
template <class Parse>
toml::table parse_toml(const std::string& origin, Parse&& parse) {
  try {
    return parse();
  } catch (const toml::parse_error& error) {
    throw_input_error(origin, error.source().begin.line, std::string(error.description()));
  }
}

// The section of a resolved configuration that says what wrote it (to_toml), read back only to compare.
constexpr const char* kProvenance = "provenance";

// A resolved configuration's [provenance] against this build: a run of the bundled re-ranker with other models
// than the file's cannot give the file's ranking, and the log says so. Other keys of the section are errors, as
// anywhere.
void check_provenance(const toml::table& section, const std::string& path, const AlignConfig& config) {
  for (const auto& [key, value] : section) {
    const std::string name(key.str());
    if (name != "termalign" && name != "bundled_models") {
      throw_config_error(path, value.source().begin.line,
                         "unknown key '" + std::string(kProvenance) + "." + name +
                             "' (the section says what wrote the file: 'termalign' and 'bundled_models').");
    }
    if (!value.is_string()) {
      throw_config_error(path, value.source().begin.line,
                         "'" + std::string(kProvenance) + "." + name + "' must be a string.");
    }
  }
  const std::string written = section["termalign"].value_or(std::string());
  const std::string models = section["bundled_models"].value_or(std::string());
  const bool other_models = !models.empty() && models != bundled_models_id();
  if (other_models && config.input.reranker == "default") {
    logger().warn(
        "{}: written by termalign {} with other bundled re-ranker models ({}; this build has termalign {}, {}): "
        "with reranker = 'default' this run will not rank as that one did; to reproduce it, run that version or "
        "give its model file as reranker",
        path, written.empty() ? "(unknown version)" : written, models, version(), bundled_models_id());
  } else if (!written.empty() && written != version()) {
    logger().info("{}: written by termalign {} (this is {}; {})", path, written, version(),
                  other_models ? "its bundled re-ranker models differ, and this run does not use them"
                               : "the same bundled re-ranker models");
  }
}

// Reads the options of `table` over `config`: `path` names the file in errors and anchors relative paths.
void apply_table(const toml::table& table, const std::string& path, AlignConfig& config) {
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  std::set<std::string> known;
  visit_options(config, [&](const std::string& section, const std::string& key, auto& field) {
    known.insert(section + "." + key);
    const toml::node* node = table.at_path(section + "." + key).node();
    if (!node) return;
    const std::string name = "'" + section + "." + key + "'";
    const auto line = node->source().begin.line;
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Field, bool>) {
      if (!node->is_boolean()) throw_config_error(path, line, name + " must be true or false.");
      set_field(config.input, section, key, field, node->as_boolean()->get());
    } else if constexpr (std::is_floating_point_v<Field>) {
      if (!node->is_number()) throw_config_error(path, line, name + " must be a number.");
      field =
          node->is_integer() ? static_cast<Field>(node->as_integer()->get()) : node->as_floating_point()->get();
    } else if constexpr (std::is_integral_v<Field>) {
      if (!node->is_integer()) throw_config_error(path, line, name + " must be an integer.");
      const auto value = node->as_integer()->get();
      if (value < 0)
        throw_config_error(path, line, name + " cannot be negative (got " + std::to_string(value) + ").");
      if (static_cast<std::uint64_t>(value) > static_cast<std::uint64_t>(std::numeric_limits<Field>::max()))
        throw_config_error(path, line, name + " is too large (got " + std::to_string(value) + ").");
      field = static_cast<Field>(value);
    } else {
      if (!node->is_string()) throw_config_error(path, line, name + " must be a string.");
      const std::string value = node->as_string()->get();
      if constexpr (std::is_same_v<Field, std::string>) {
        const bool relative =
            is_path_option(section, key, value) && !value.empty() && std::filesystem::path(value).is_relative();
        // A relative path is relative to the configuration file.
        set_field(config.input, section, key, field,
                  relative ? (base / value).lexically_normal().string() : value);
      } else {
        try {
          if constexpr (std::is_same_v<Field, Normalization>) field = parse_normalization(value);
          if constexpr (std::is_same_v<Field, Neighbourhood>) field = parse_neighbourhood(value);
          if constexpr (std::is_same_v<Field, Dewhiten>) field = parse_dewhiten(value);
          if constexpr (std::is_same_v<Field, Precision>) field = parse_precision(value);
        } catch (const Error& error) {
          throw_config_error(path, line, error.what());
        }
      }
    }
  });
  for (const auto& [section_name, section] : table) {
    const std::string section_key(section_name.str());
    const auto line = section.source().begin.line;
    if (!section.is_table()) throw_config_error(path, line, "unknown key '" + section_key + "'.");
    if (section_key == kProvenance) {
      check_provenance(*section.as_table(), path, config);
      continue;
    }
    for (const auto& [key, value] : *section.as_table()) {
      const std::string full = section_key + "." + std::string(key.str());
      if (!known.count(full)) {
        const std::string near = closest_name(full, std::vector<std::string>(known.begin(), known.end()));
        throw_config_error(path, value.source().begin.line,
                           "unknown key '" + full + "'" + (near.empty() ? "." : "; did you mean '" + near + "'?"));
      }
    }
  }
}

}  // namespace

namespace {

// Calls visit(section, key, field) for the option `name` (flag with dashes or underscores, or "section.key");
// a usage error when there is none.
template <class Config, class Visitor>
void visit_option(Config& config, const std::string& name, Visitor&& visit) {
  std::string wanted = name;
  std::replace(wanted.begin(), wanted.end(), '_', '-');
  bool found = false;
  visit_options(config, [&](const std::string& section, const std::string& key, auto& field) {
    if (found || (wanted != flag_of(section, key) && name != section + "." + key)) return;
    found = true;
    visit(section, key, field);
  });
  if (!found) {
    // The nearest name in the style typed: section.key, or the flag with underscores (Python) or dashes.
    std::vector<std::string> names;
    const bool dotted = name.find('.') != std::string::npos, underscored = name.find('_') != std::string::npos;
    visit_options(config, [&](const std::string& section, const std::string& key, auto&) {
      std::string flag = flag_of(section, key);
      if (underscored) std::replace(flag.begin(), flag.end(), '-', '_');
      names.push_back(dotted ? section + "." + key : flag);
    });
    const std::string near = closest_name(name, names);
    throw_usage_error("Unknown option '" + name + "'" + (near.empty() ? "." : "; did you mean '" + near + "'?"));
  }
}

}  // namespace

std::vector<OptionName> option_names() {
  std::vector<OptionName> names;
  AlignConfig config;
  visit_options(config, [&](const std::string& section, const std::string& key, auto&) {
    names.push_back({section, key, flag_of(section, key)});
  });
  return names;
}

void set_option(AlignConfig& config, const std::string& name, const OptionValue& value) {
  visit_option(config, name, [&](const std::string& section, const std::string& key, auto& field) {
    std::string keyword = flag_of(section, key);
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    const std::string option = "Option `" + keyword + "`";
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Field, bool>) {
      if (!std::holds_alternative<bool>(value)) throw_usage_error(option + " must be true or false.");
      set_field(config.input, section, key, field, std::get<bool>(value));
    } else if constexpr (std::is_floating_point_v<Field>) {
      if (std::holds_alternative<double>(value)) {
        field = std::get<double>(value);
      } else if (std::holds_alternative<std::int64_t>(value)) {
        field = static_cast<Field>(std::get<std::int64_t>(value));
      } else {
        throw_usage_error(option + " must be a number.");
      }
    } else if constexpr (std::is_integral_v<Field>) {
      if (!std::holds_alternative<std::int64_t>(value)) throw_usage_error(option + " must be an integer.");
      const std::int64_t number = std::get<std::int64_t>(value);
      if (number < 0) throw_usage_error(option + " cannot be negative (got " + std::to_string(number) + ").");
      if (static_cast<std::uint64_t>(number) > static_cast<std::uint64_t>(std::numeric_limits<Field>::max()))
        throw_usage_error(option + " is too large (got " + std::to_string(number) + ").");
      field = static_cast<Field>(number);
    } else {
      if (!std::holds_alternative<std::string>(value)) throw_usage_error(option + " must be a string.");
      const std::string& text = std::get<std::string>(value);
      if constexpr (std::is_same_v<Field, std::string>) set_field(config.input, section, key, field, text);
      try {
        if constexpr (std::is_same_v<Field, Normalization>) field = parse_normalization(text);
        if constexpr (std::is_same_v<Field, Neighbourhood>) field = parse_neighbourhood(text);
        if constexpr (std::is_same_v<Field, Dewhiten>) field = parse_dewhiten(text);
        if constexpr (std::is_same_v<Field, Precision>) field = parse_precision(text);
      } catch (const Error& error) {
        throw_usage_error(option + ": " + error.what());
      }
    }
  });
}

void set_option_text(AlignConfig& config, const std::string& name, const std::string& text) {
  OptionValue value = text;
  visit_option(config, name, [&](const std::string&, const std::string&, auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Field, bool>) {
      for (const char* yes : {"true", "1", "yes", "on"})
        if (text == yes) value = true;
      for (const char* no : {"false", "0", "no", "off"})
        if (text == no) value = false;
    } else if constexpr (std::is_arithmetic_v<Field>) {
      const char* end = text.data() + text.size();
      std::int64_t integer = 0;
      double number = 0;
      if (const auto parsed = std::from_chars(text.data(), end, integer);
          parsed.ec == std::errc() && parsed.ptr == end) {
        value = integer;
      } else if (const auto real = std::from_chars(text.data(), end, number);
                 std::is_floating_point_v<Field> && real.ec == std::errc() && real.ptr == end) {
        value = number;
      }
    }
  });
  // A text that is not of the option's type stays a string: set_option's error names the option and the type.
  try {
    set_option(config, name, value);
  } catch (const Error& error) {
    if (std::holds_alternative<std::string>(value)) {
      std::string message = error.what();
      if (message.find("'" + text + "'") != std::string::npos) throw;  // it names the value already (enums)
      if (!message.empty() && message.back() == '.') message.pop_back();
      throw_usage_error(message + " (got '" + text + "').");
    }
    throw;
  }
}

std::string option_type_name(const std::string& name) {
  const AlignConfig config;
  std::string type;
  visit_option(config, name, [&](const std::string&, const std::string&, const auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Field, bool>) {
      type = "BOOLEAN";
    } else if constexpr (std::is_floating_point_v<Field>) {
      type = "FLOAT";
    } else if constexpr (std::is_integral_v<Field>) {
      type = std::is_unsigned_v<Field> ? "UINT" : "INT";
    } else if constexpr (std::is_same_v<Field, std::string>) {
      type = "TEXT";
    } else {
      type = "ENUM";
    }
  });
  return type;
}

std::string option_text(const AlignConfig& config, const std::string& name) {
  std::string text;
  visit_option(config, name, [&](const std::string&, const std::string&, const auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Field, bool>) {
      text = field ? "true" : "false";
    } else if constexpr (std::is_floating_point_v<Field>) {
      text = fmt::format("{}", field);
    } else if constexpr (std::is_integral_v<Field>) {
      text = std::to_string(field);
    } else if constexpr (std::is_same_v<Field, std::string>) {
      text = field;
    } else {
      text = enum_name(field);
    }
  });
  return text;
}

namespace {

// The language pairs a BUCC folder names in its files (seed-<l1>-<l2>.txt, terms-<l1>-<l2>.txt), each as "l1-l2",
// sorted and without repeats; a pair counts only when the folder also holds its two term lists.
std::vector<std::string> pairs_in_folder(const std::filesystem::path& dir) {
  std::set<std::string> pairs;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    for (const std::string prefix : {"seed-", "terms-"}) {
      if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + 4 ||
          name.compare(name.size() - 4, 4, ".txt") != 0) {
        continue;
      }
      const std::string pair = name.substr(prefix.size(), name.size() - prefix.size() - 4);
      std::pair<std::string, std::string> languages;
      if (split_pair(pair, languages) && std::filesystem::exists(dir / terms_file(languages.first), error) &&
          std::filesystem::exists(dir / terms_file(languages.second), error)) {
        pairs.insert(pair);
      }
    }
  }
  return {pairs.begin(), pairs.end()};
}

// Term lists named as in a BUCC folder (terms-<l>.txt) with that folder's corpora beside them, given without
// them: the run leaves out the corpus evidence, most likely by oversight (a note, not a warning: runs without
// corpora are legitimate ablations).
void note_corpora_beside_lists(const InputOptions& input) {
  if (!input.src_corpus.empty() || !input.tgt_corpus.empty()) return;
  const auto corpus_beside = [](const std::string& terms) {
    const std::filesystem::path path(terms);
    const std::string name = path.filename().string();
    const std::size_t dash = name.find('-'), dot = name.rfind('.');
    if (dash == std::string::npos || dot == std::string::npos || dot <= dash + 1) return std::filesystem::path();
    const std::string language = name.substr(dash + 1, dot - dash - 1);
    if (name != terms_file(language)) return std::filesystem::path();
    const std::filesystem::path corpus = path.parent_path() / corpus_file(language);
    std::error_code error;
    return std::filesystem::is_regular_file(corpus, error) ? corpus : std::filesystem::path();
  };
  const std::filesystem::path source = corpus_beside(input.src_terms), target = corpus_beside(input.tgt_terms);
  if (source.empty() || target.empty()) return;
  logger().info(
      "the corpora {} and {} lie beside the term lists and are not used: --src-corpus and --tgt-corpus "
      "(or --data-dir) add their evidence to the ranking",
      source.lexically_normal().string(), target.lexically_normal().string());
}

}  // namespace

std::string resolve_dataset(AlignConfig& config, bool note) {
  InputOptions& input = config.input;
  if (input.data_dir.empty()) {
    if (!input.pair.empty()) throw_usage_error("`pair` names the language pair of a `data_dir`: give both.");
    if (note) note_corpora_beside_lists(input);
    return {};
  }
  const std::filesystem::path dir(input.data_dir);
  // The folder's files are looked up without throwing: a path the system refuses (too long, not permitted) is an
  // input error naming it, or a file that is not there.
  std::error_code status;
  if (!std::filesystem::is_directory(dir, status)) {
    throw_input_error(input.data_dir, 0,
                      "is not a folder (`data_dir`)" + (status ? ": " + status.message() : std::string()));
  }
  const auto there = [](const std::filesystem::path& path) {
    std::error_code ignored;
    return std::filesystem::exists(path, ignored);
  };
  if (input.pair.empty()) {
    // The folder's file names say its pair when they name one only (a folder of both directions must choose).
    const std::vector<std::string> pairs = pairs_in_folder(dir);
    if (pairs.size() != 1) {
      std::string found;
      for (const std::string& pair : pairs) found += (found.empty() ? "" : ", ") + pair;
      throw_usage_error("`data_dir` needs the language pair of its files as `pair` l1-l2, e.g. en-fr: " +
                        (pairs.empty() ? std::string("its file names (seed-l1-l2.txt, terms-l1-l2.txt beside "
                                                     "terms-l1.txt and terms-l2.txt) name none")
                                       : "its file names name several (" + found + ")") +
                        ".");
    }
    input.pair = pairs.front();
    if (note) logger().info("language pair {}, read from the file names of {}", input.pair, input.data_dir);
  }
  std::pair<std::string, std::string> languages;
  if (!split_pair(input.pair, languages)) {
    throw_usage_error("`data_dir` needs the language pair of its files as `pair` l1-l2, e.g. en-fr (got '" +
                      input.pair + "').");
  }
  const std::string &l1 = languages.first, &l2 = languages.second;
  const auto take = [&](std::string& field, const std::string& name) {
    if (!field.empty()) return;
    const std::filesystem::path file = dir / name;
    if (!there(file)) {
      std::string cause = " (a BUCC dataset holds " + terms_file(l1) + ", " + terms_file(l2) + " and " +
                          seed_file(l1, l2) + "); give that input with its own option.";
      // A folder of the other direction: its seed lexicon reads l2<TAB>l1, which a run l1-l2 cannot take.
      if (there(dir / seed_file(l2, l1)) && !there(dir / seed_file(l1, l2))) {
        cause = ": it is a dataset of the pair " + l2 + "-" + l1 + " (" + seed_file(l2, l1) + "). Give --pair " +
                l2 + "-" + l1 + ", or for the direction " + l1 + "-" + l2 +
                " a seed lexicon with the columns swapped (--seed).";
      }
      throw_input_error(input.data_dir, 0, "the dataset folder has no " + name + cause);
    }
    field = file.lexically_normal().string();
  };
  take(input.src_terms, terms_file(l1));
  take(input.tgt_terms, terms_file(l2));
  if (config.output.mapping.empty()) take(input.seed, seed_file(l1, l2));
  // The corpora: both or neither (a dataset with one of them is used without; a corpus given by its own option
  // keeps the pair as given, and validate() asks for the other).
  const std::filesystem::path src_corpus = dir / corpus_file(l1), tgt_corpus = dir / corpus_file(l2);
  if (input.dataset_corpora && input.src_corpus.empty() && input.tgt_corpus.empty() && there(src_corpus) &&
      there(tgt_corpus)) {
    input.src_corpus = src_corpus.lexically_normal().string();
    input.tgt_corpus = tgt_corpus.lexically_normal().string();
  }
  const std::filesystem::path gold = dir / gold_file(l1, l2);
  return there(gold) ? gold.lexically_normal().string() : std::string();
}

void load_config(const std::string& path, AlignConfig& config) {
  // read_file's errors, as for any input that cannot be read (a missing file, a folder).
  const std::string text = read_file(path);
  apply_table(parse_toml(path, [&] { return toml::parse(text, path); }), path, config);
}

void apply_toml(AlignConfig& config, const std::string& toml_text, const std::string& origin) {
  apply_table(parse_toml(origin, [&] { return toml::parse(toml_text, origin); }), origin, config);
}

namespace {

// Each option of `config` as a line of TOML ("key = value"), with its section and whether it names a file (whose
// path is written absolute).
struct OptionLine {
  std::string section, line;
  bool path = false;
};

std::vector<OptionLine> option_lines(const AlignConfig& config) {
  std::vector<OptionLine> lines;
  visit_options(config, [&](const std::string& section, const std::string& key, const auto& field) {
    using Field = std::decay_t<decltype(field)>;
    std::ostringstream text;
    bool path = false;
    text << key << " = ";
    if constexpr (std::is_same_v<Field, bool>) {
      text << (field ? "true" : "false");
    } else if constexpr (std::is_floating_point_v<Field>) {
      text << toml_float(field);
    } else if constexpr (std::is_integral_v<Field>) {
      text << field;
    } else if constexpr (std::is_same_v<Field, std::string>) {
      std::string value = field;
      path = is_path_option(section, key, value);
      if (path && !value.empty()) value = std::filesystem::absolute(value).string();
      text << toml::value<std::string>(value);
    } else {
      text << toml::value<std::string>(enum_name(field));
    }
    lines.push_back({section, text.str(), path});
  });
  return lines;
}

}  // namespace

std::vector<std::string> changed_options(const AlignConfig& config) {
  const std::vector<OptionLine> lines = option_lines(config), defaults = option_lines(AlignConfig{});
  std::vector<std::string> changed;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].path && !defaults[i].path && lines[i].line != defaults[i].line)
      changed.push_back(lines[i].section + "." + lines[i].line);
  }
  return changed;
}

std::string to_toml(const AlignConfig& config) {
  std::ostringstream text;
  text << "# termalign align: fully resolved configuration. `termalign align --config FILE` reproduces the run.\n";
  std::string current_section;
  for (const OptionLine& option : option_lines(config)) {
    if (option.section != current_section) {
      text << (current_section.empty() ? "" : "\n") << "[" << option.section << "]\n";
      current_section = option.section;
    }
    text << option.line << "\n";
  }
  // Not options: what wrote the file. Reading it back compares them with this build (check_provenance).
  text << "\n[" << kProvenance << "]\n"
       << "termalign = " << toml::value<std::string>(version()) << "\n"
       << "bundled_models = " << toml::value<std::string>(bundled_models_id()) << "\n";
  return text.str();
}

}  // namespace termalign
