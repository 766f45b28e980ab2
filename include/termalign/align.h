// The whole `align` pipeline: load vectors, normalise, map, compose terms, score with CSLS, rank, write.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/ranking.h"

namespace termalign {

struct AlignmentSummary {
  std::size_t source_terms = 0, target_terms = 0;     // listed
  std::size_t source_usable = 0, target_usable = 0;   // with a vector
  std::size_t seed_pairs = 0, seed_pairs_usable = 0;  // 0 usable when the mapping was loaded
  std::size_t cap = 0;
  double seconds = 0;
};

// Runs the pipeline and returns the ranked, capped pairs (the best first). Does not write anything except the
// mapping when config.output.save_mapping is set.
std::vector<RankedPair> align_terms(const AlignConfig& config, AlignmentSummary* summary = nullptr);

// align_terms, then writes the submission, the optional score list and the resolved configuration
// (`<out>.config.toml`), each atomically.
AlignmentSummary run_align(const AlignConfig& config);

}  // namespace termalign
