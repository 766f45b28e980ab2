// The project's data beside the repository (../shared/data), which some tests use when it is there. Without it,
// such a test is reported as skipped by ctest: run by ctest (TERMALIGN_SKIP_CODE set, SKIP_RETURN_CODE in
// CMakeLists.txt) it exits with that code; run by hand it warns and returns.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "termalign/config.h"

namespace termalign_tests {

// ../shared/data relative to the source tree.
inline std::string shared_data() { return std::string(TERMALIGN_SOURCE_DIR) + "/../shared/data"; }

// True when `file` (under shared_data()) exists; otherwise skips the test (see above) and returns false.
inline bool shared_file_or_skip(const std::string& file) {
  const std::string path = shared_data() + "/" + file;
  if (std::filesystem::exists(path)) return true;
  if (const char* code = std::getenv("TERMALIGN_SKIP_CODE")) {
    std::fprintf(stderr, "SKIPPED: %s is not there\n", path.c_str());
    std::fflush(nullptr);
    std::_Exit(std::atoi(code));
  }
  WARN("skipped: " << path << " is not there");
  return false;
}

// A configuration with the en-fr inputs of the BUCC dataset folder `dataset` (term lists, seed and, with
// `corpora`, the corpora: resolve_dataset) and the vectors `vectors`/en.`extension` and fr.`extension`; `gold`
// receives the dataset's gold.
inline termalign::AlignConfig dataset_config(const std::string& vectors, const std::string& extension,
                                             const std::string& dataset, std::string& gold, bool corpora = false) {
  termalign::AlignConfig config;
  config.input.src_vectors = vectors + "/en." + extension;
  config.input.tgt_vectors = vectors + "/fr." + extension;
  config.input.data_dir = dataset;
  config.input.pair = "en-fr";
  config.input.dataset_corpora = corpora;
  gold = termalign::resolve_dataset(config);
  return config;
}

}  // namespace termalign_tests
