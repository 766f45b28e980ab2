// Configuration files: TOML read over a configuration, the resolved configuration written, and its provenance
// (what wrote it) checked against this build.
#include <spdlog/fmt/fmt.h>
#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "io/io.h"
#include "pipeline/option_table.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/logging.h"
#include "termalign/version.h"

namespace termalign {

using pipeline::enum_name;
using pipeline::is_path_option;
using pipeline::set_field;
using pipeline::throw_config_error;
using pipeline::toml_float;
using pipeline::visit_options;

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

// Options that are gone, with what replaced them: a resolved configuration of an older build that names one
// still loads (the key ignored, with a warning), since its other options still say how that run was made.
struct RetiredOption {
  const char* key;
  const char* why;
};
constexpr RetiredOption kRetiredOptions[] = {
    {"mapping.seed_selection_words",
     "seed 'auto' no longer compares two starts by the mean CSLS of the frequent words: it starts from the words "
     "spelt alike ('transliterated'), of which the other start's are a part"},
};

const RetiredOption* retired_option(const std::string& key) {
  for (const RetiredOption& option : kRetiredOptions)
    if (key == option.key) return &option;
  return nullptr;
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
    } else if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
      // A list of files (or one file), each relative to the configuration file.
      std::vector<std::string> values;
      const auto add = [&](const toml::node& item) {
        if (!item.is_string()) throw_config_error(path, line, name + " must be a string or a list of strings.");
        const std::string value = item.as_string()->get();
        values.push_back(!value.empty() && std::filesystem::path(value).is_relative()
                             ? (base / value).lexically_normal().string()
                             : value);
      };
      if (node->is_array()) {
        for (const toml::node& item : *node->as_array()) add(item);
      } else {
        add(*node);
      }
      field = values;
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
      if (known.count(full)) continue;
      if (const RetiredOption* retired = retired_option(full)) {
        logger().warn("{}:{}: '{}' is no longer an option and is ignored: {}", path, value.source().begin.line,
                      full, retired->why);
        continue;
      }
      const std::string near = closest_name(full, std::vector<std::string>(known.begin(), known.end()));
      throw_config_error(path, value.source().begin.line,
                         "unknown key '" + full + "'" + (near.empty() ? "." : "; did you mean '" + near + "'?"));
    }
  }
}

}  // namespace

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
    } else if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
      path = true;  // files, written absolute
      toml::array list;
      for (const std::string& value : field)
        list.push_back(value.empty() ? value : std::filesystem::absolute(value).string());
      text << list;
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
