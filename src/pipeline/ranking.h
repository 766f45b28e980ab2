// Turning candidates into the final ranked, capped list and writing it atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "termalign/types.h"

namespace termalign {

// Submission: exactly two TAB-separated columns, LF line ends; with `with_scores` a third column holds the score
// (not for submission). Blocks of lines are formatted on `threads` threads (0: OpenMP's default), each straight
// into its place in the text.
std::string format_pairs(const std::vector<RankedPair>& pairs, bool with_scores, int threads = 1);
// The same text for pairs given by their places in the source and target lists.
std::string format_ranked(const std::vector<RankedIndex>& ranked, const std::vector<std::string>& sources,
                          const std::vector<std::string>& targets, bool with_scores, int threads = 1);
// format_pairs written to a temporary file and renamed.
void write_pairs(const std::string& path, const std::vector<RankedPair>& pairs, bool with_scores);

}  // namespace termalign
