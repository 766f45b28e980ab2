// The options of `termalign align`, shared by the sub-commands that run the same pipeline.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "termalign/config.h"
#include "termalign/logging.h"

namespace termalign::cli {

// One flag per option of the library's option table (config.h: option_names), parsed as text and set by
// set_option_text, so that the table alone decides which options there are, their TOML keys and their flags (the
// help texts are the CLI's). resolve() reads the configuration file, then lets each flag that was given override
// it.
struct AlignOptions {
  std::string config_path;
  std::vector<std::pair<std::string, CLI::Option*>> given;  // flag (without "--") and its parsed option
  std::map<std::string, std::string> values;                // flag -> text typed
  bool allow_reversed = false;
  CLI::Option* allow_reversed_flag = nullptr;
  std::vector<std::string> dictionaries;  // --dictionary, repeatable
  CLI::Option* dictionary_flag = nullptr;

  // Registers every option on `command`; --out, --scores and --explain only `with_outputs`.
  static std::shared_ptr<AlignOptions> add(CLI::App* command, bool with_outputs);

  // `dataset_gold`, when given, receives the gold of a --data-dir that has one (resolve_dataset).
  AlignConfig resolve(std::string* dataset_gold = nullptr) const {
    AlignConfig config;
    if (!config_path.empty()) load_config(config_path, config);
    const auto typed = [this](const std::string& flag) {
      for (const auto& [name, parsed] : given) {
        if (name == flag) return parsed->count() > 0;
      }
      return false;
    };
    // A new --out starts a new run's outputs: the file's other outputs, those of the run it was written for
    // (a resolved O.config.toml names them), would otherwise be overwritten unasked.
    if (typed("out")) {
      struct Output {
        const char* flag;  // without "--"
        const char* key;   // in the file's [output] table
        std::string* path;
      };
      for (const Output& output :
           {Output{"scores", "scores", &config.output.scores},
            Output{"explain", "explain", &config.output.explain},
            Output{"save-mapping", "save_mapping", &config.output.save_mapping},
            Output{"save-mapped-vectors", "save_mapped_vectors", &config.output.save_mapped_vectors}}) {
        if (output.path->empty() || typed(output.flag)) continue;
        logger().warn(
            "{}: its output.{} ({}) is not written, since --out was given on the command line; give --{} "
            "to write it too",
            config_path, output.key, *output.path, output.flag);
        output.path->clear();
      }
    }
    for (const auto& [flag, parsed] : given) {
      if (parsed->count()) set_option_text(config, flag, values.at(flag));
    }
    if (allow_reversed_flag->count()) config.input.allow_reversed = allow_reversed;  // --allow-reversed=false too
    if (dictionary_flag->count()) set_option(config, "dictionary", dictionaries);
    const std::string gold = resolve_dataset(config);
    if (dataset_gold) *dataset_gold = gold;
    return config;
  }
};

}  // namespace termalign::cli
