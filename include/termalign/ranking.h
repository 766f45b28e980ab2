// Turning candidates into the final ranked, capped list and writing it atomically.
#pragma once

#include <string>
#include <vector>

#include "termalign/scoring.h"

namespace termalign {

struct RankedPair {
  std::string source, target;
  float score = 0;
};

// Submission: exactly two TAB-separated columns, LF line ends; with `with_scores` a third column holds the score
// (not for submission). Blocks of lines are formatted on `threads` threads (0: OpenMP's default).
std::string format_pairs(const std::vector<RankedPair>& pairs, bool with_scores, int threads = 1);
// format_pairs written to a temporary file and renamed.
void write_pairs(const std::string& path, const std::vector<RankedPair>& pairs, bool with_scores);

}  // namespace termalign
