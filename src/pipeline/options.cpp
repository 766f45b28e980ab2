// The options of AlignConfig: their names, types and text, the enums' names, and the checks of a configuration.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/io.h"
#include "pipeline/option_table.h"
#include "scoring/scoring.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/logging.h"

namespace termalign {

namespace pipeline {

bool is_path_option(const std::string& section, const std::string& key, const std::string& value) {
  if (section == "input" && key == "seed" && is_induced_seed(value)) return false;
  if (section == "input" && key == "reranker" && (value == "default" || value == "none")) return false;
  if (section == "forms") return key == "hunspell_dir";
  return section == "input"
             ? key != "most_frequent" && key != "corpus_weight" && key != "pair" && key != "corpus_window"
             : section == "output";
}

std::string toml_float(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string flag_of(const std::string& section, const std::string& key) {
  std::string flag = section == "orthography" && key != "transliterate" ? "orthographic-" + key
                     : section == "forms" && key == "enabled"           ? std::string("word-forms")
                                                                        : key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

[[noreturn]] void throw_config_error(const std::string& path, std::size_t line, const std::string& message) {
  throw Error(ErrorKind::usage, path + ":" + std::to_string(line) + ": " + message);
}

}  // namespace pipeline

using pipeline::enum_name;
using pipeline::flag_of;
using pipeline::set_field;
using pipeline::visit_options;

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
    case Normalization::automatic:
      return "auto";
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

Normalization resolved_normalization(const AlignConfig& config) {
  if (config.mapping.normalization != Normalization::automatic) return config.mapping.normalization;
  return is_induced_seed(config.input.seed) && config.input.dictionary.empty() ? Normalization::unit_center_unit
                                                                               : Normalization::center;
}

Normalization parse_normalization(const std::string& name) {
  for (auto value : {Normalization::none, Normalization::unit, Normalization::center,
                     Normalization::unit_center_unit, Normalization::automatic}) {
    if (name == to_string(value)) return value;
  }
  throw_usage_error("Unknown normalisation '" + name + "': use none, unit, center, unit-center-unit or auto.");
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
  require(!input.seed.empty() || !input.saved_mapping.empty() || !input.dictionary.empty(),
          "A seed lexicon (`seed`) is needed unless a saved mapping is loaded with `mapping` or a `dictionary` is "
          "given: a file of src<TAB>tgt word pairs, or \"auto\" to induce one from the vectors.");
  require(input.saved_mapping.empty() || output.save_mapping.empty(),
          "`mapping` loads a mapping and `save_mapping` saves a fitted one: give only one of them.");
  check_neighbourhood_k(scoring.k);
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
  require(mapping.seed_spelling_similarity > 0 && mapping.seed_spelling_similarity <= 1,
          fmt::format("`seed_spelling_similarity` is a Dice coefficient, above 0 and at most 1 (got {}).",
                      mapping.seed_spelling_similarity));
  // The induced seed's words among the frequent words loaded, not among those loaded for the terms.
  const bool induced = is_induced_seed(input.seed);
  require(!induced || mapping.seed_lexicon_words <= input.most_frequent,
          "seed_lexicon_words (" + std::to_string(mapping.seed_lexicon_words) +
              ") cannot exceed the number of frequent words loaded, most_frequent (" +
              std::to_string(input.most_frequent) + ").");
  require(mapping.seed_term_converged > 0 && mapping.seed_term_converged <= 1,
          fmt::format("`seed_term_converged` is a share of a round's word pairs, above 0 and at most 1 (got {}).",
                      mapping.seed_term_converged));
  require(mapping.seed_start_gain > 0,
          fmt::format("`seed_start_gain` is a factor of the start's mean CSLS, above 0 (got {}).",
                      mapping.seed_start_gain));
  require(input.dictionary_min_coverage >= 0 && input.dictionary_min_coverage <= 1,
          fmt::format("`dictionary_min_coverage` is a share of the source terms' words, from 0 to 1 (got {}).",
                      input.dictionary_min_coverage));
  require(input.dictionary_seed_translations >= 1,
          "`dictionary_seed_translations` must be at least 1 (each seed word keeps one translation or more).");
  require(mapping.seed_ranked_rounds == 0 || mapping.seed_ranked_pairs >= 1,
          "A ranked round reads the seed off at least one pair: give seed_ranked_pairs of at least 1, or "
          "seed_ranked_rounds 0.");
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
  for (const std::string& dictionary : input.dictionary)
    require(!dictionary.empty(), "`dictionary` names files: an empty name is not one.");
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
      input.src_corpus_vectors.empty() || input.saved_mapping.empty(),
      "Combining corpus vectors fits a second mapping from the seed lexicon: it cannot be used with `mapping`.");
}

bool uses_reranker(const AlignConfig& config) { return config.input.reranker != "none"; }

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
    } else if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
      if (std::holds_alternative<std::string>(value)) {
        field = {std::get<std::string>(value)};
      } else if (std::holds_alternative<std::vector<std::string>>(value)) {
        field = std::get<std::vector<std::string>>(value);
      } else {
        throw_usage_error(option + " must be a string or a list of strings.");
      }
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
    } else if constexpr (std::is_same_v<Field, std::string> || std::is_same_v<Field, std::vector<std::string>>) {
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
    } else if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
      for (const std::string& item : field) text += (text.empty() ? "" : " ") + item;
    } else {
      text = enum_name(field);
    }
  });
  return text;
}

}  // namespace termalign
