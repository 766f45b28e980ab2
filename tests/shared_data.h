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

// True when `file` (under shared_data()) exists; otherwise skips the test (see above) and returns false. With
// TERMALIGN_TESTS_WITHOUT_SHARED=1 the data counts as absent: scripts/sanitize.sh sets it, since these tests pin
// figures on the real data and the sample's tests take the same code paths at a fraction of the time.
inline bool shared_file_or_skip(const std::string& file) {
  const std::string path = shared_data() + "/" + file;
  const char* without = std::getenv("TERMALIGN_TESTS_WITHOUT_SHARED");
  const bool left_out = without && std::string(without) == "1";
  if (!left_out && std::filesystem::exists(path)) return true;
  const std::string why = left_out ? " is left out (TERMALIGN_TESTS_WITHOUT_SHARED=1)" : " is not there";
  if (const char* code = std::getenv("TERMALIGN_SKIP_CODE")) {
    std::fprintf(stderr, "SKIPPED: %s%s\n", path.c_str(), why.c_str());
    std::fflush(nullptr);
    std::_Exit(std::atoi(code));
  }
  WARN("skipped: " << path << why);
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
