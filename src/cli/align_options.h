// The options of `termalign align`, shared by the sub-commands that run the same pipeline.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "termalign/config.h"

namespace termalign::cli {

// Flags are parsed into their own AlignConfig (so that --help shows the library's defaults); resolve() reads the
// configuration file, then lets each flag that was given override it.
struct AlignOptions {
  AlignConfig flags;
  std::string config_path, normalization = to_string(flags.mapping.normalization),
                           neighbourhood = to_string(flags.scoring.neighbourhood),
                           dewhiten = to_string(flags.mapping.dewhiten);
  std::vector<std::function<void(AlignConfig&)>> overrides;

  // Registers every option on `command`; --out and --scores only `with_outputs`.
  static std::shared_ptr<AlignOptions> add(CLI::App* command, bool with_outputs);

  template <class Access>
  void option(CLI::App* command, const std::string& name, const std::string& help, Access access) {
    CLI::Option* parsed = command->add_option(name, access(flags), help)->capture_default_str();
    overrides.push_back([this, parsed, access](AlignConfig& config) {
      if (parsed->count()) access(config) = access(flags);
    });
  }

  // `dataset_gold`, when given, receives the gold of a --data-dir that has one (resolve_dataset).
  AlignConfig resolve(std::string* dataset_gold = nullptr) const {
    AlignConfig config;
    if (!config_path.empty()) load_config(config_path, config);
    for (const auto& apply : overrides) apply(config);
    const std::string gold = resolve_dataset(config);
    if (dataset_gold) *dataset_gold = gold;
    return config;
  }
};

}  // namespace termalign::cli
