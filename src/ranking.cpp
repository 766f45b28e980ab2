#include "termalign/ranking.h"

#include <algorithm>
#include <cstdio>

#include "termalign/io.h"
#include "termalign/parallel.h"

namespace termalign {

std::string format_pairs(const std::vector<RankedPair>& pairs, bool with_scores, int threads) {
  // Blocks of lines formatted on their own (in parallel), then joined in order.
  constexpr std::size_t kBlock = 16384;
  std::vector<std::string> blocks((pairs.size() + kBlock - 1) / kBlock);
  parallel_for(blocks.size(), threads, [&](std::size_t b) {
    std::string& text = blocks[b];
    const std::size_t end = std::min(pairs.size(), (b + 1) * kBlock);
    text.reserve((end - b * kBlock) * 40);
    char score[32];
    for (std::size_t i = b * kBlock; i < end; ++i) {
      text += pairs[i].source;
      text += '\t';
      text += pairs[i].target;
      if (with_scores) {
        std::snprintf(score, sizeof score, "\t%.6f", static_cast<double>(pairs[i].score));
        text += score;
      }
      text += '\n';
    }
  });
  if (blocks.size() == 1) return std::move(blocks.front());
  std::size_t size = 0;
  for (const std::string& block : blocks) size += block.size();
  std::string text;
  text.reserve(size);
  for (const std::string& block : blocks) text += block;
  return text;
}

void write_pairs(const std::string& path, const std::vector<RankedPair>& pairs, bool with_scores) {
  write_file_atomically(path, format_pairs(pairs, with_scores));
}

}  // namespace termalign
