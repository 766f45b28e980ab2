#include "termalign/ranking.h"

#include <cstdio>

#include "termalign/io.h"

namespace termalign {

std::string format_pairs(const std::vector<RankedPair>& pairs, bool with_scores) {
  std::string text;
  text.reserve(pairs.size() * 40);
  char score[32];
  for (const auto& pair : pairs) {
    text += pair.source;
    text += '\t';
    text += pair.target;
    if (with_scores) {
      std::snprintf(score, sizeof score, "\t%.6f", static_cast<double>(pair.score));
      text += score;
    }
    text += '\n';
  }
  return text;
}

void write_pairs(const std::string& path, const std::vector<RankedPair>& pairs, bool with_scores) {
  write_file_atomically(path, format_pairs(pairs, with_scores));
}

}  // namespace termalign
