// The project's data beside the repository (../shared/data), which some tests use when it is there. Without it,
// such a test is reported as skipped (skip.h).
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "skip.h"
#include "termalign/config.h"

namespace termalign_tests {

// The source tree (the repository's root).
inline const std::string kSource = TERMALIGN_SOURCE_DIR;

// ../shared/data relative to the source tree.
inline std::string shared_data() { return kSource + "/../shared/data"; }

// True when `file` (under shared_data()) exists; otherwise skips the test (see above) and returns false. With
// TERMALIGN_TESTS_WITHOUT_SHARED=1 the data counts as absent (a quick run of the suite).
inline bool shared_file_or_skip(const std::string& file) {
  const std::string path = shared_data() + "/" + file;
  const char* without = std::getenv("TERMALIGN_TESTS_WITHOUT_SHARED");
  const bool left_out = without && std::string(without) == "1";
  if (!left_out && std::filesystem::exists(path)) return true;
  skip_test(path + (left_out ? " is left out (TERMALIGN_TESTS_WITHOUT_SHARED=1)" : " is not there"));
  return false;
}

// A configuration with the bundled sample's inputs (data/sample, models/sample/{en,fr}.`extension`), every other
// option at its default.
inline termalign::AlignConfig sample_inputs(const std::string& extension = "vec") {
  const std::string source = TERMALIGN_SOURCE_DIR;
  termalign::AlignConfig config;
  config.input.src_vectors = source + "/models/sample/en." + extension;
  config.input.tgt_vectors = source + "/models/sample/fr." + extension;
  config.input.seed = source + "/data/sample/seed-en-fr.txt";
  config.input.src_terms = source + "/data/sample/terms-en.txt";
  config.input.tgt_terms = source + "/data/sample/terms-fr.txt";
  return config;
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
