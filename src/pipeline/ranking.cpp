#include "termalign/ranking.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string_view>

#include "termalign/io.h"
#include "termalign/parallel.h"

namespace termalign {

namespace {

// The text of `n` lines "source TAB target [TAB score] LF", line(i) giving line i's source, target and score.
// Two passes over blocks of lines, shared out among the threads: each block's size, then each block formatted
// straight into its place in the text (no block strings joined afterwards).
template <typename Line>
std::string format_lines(std::size_t n, bool with_scores, int threads, const Line& line) {
  constexpr std::size_t kBlock = 16384;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  // "\t%.6f" of the score into `buffer` (32 bytes); returns its length.
  const auto score_text = [](float score, char* buffer) {
    return static_cast<std::size_t>(std::snprintf(buffer, 32, "\t%.6f", static_cast<double>(score)));
  };
  std::vector<std::size_t> offsets(blocks + 1, 0);
  parallel_for(blocks, threads, [&](std::size_t b) {
    std::size_t size = 0;
    char score[32];
    for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
      const auto [source, target, value] = line(i);
      size += source.size() + target.size() + 2 + (with_scores ? score_text(value, score) : 0);
    }
    offsets[b + 1] = size;
  });
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  std::string text(offsets.back(), '\0');
  parallel_for(blocks, threads, [&](std::size_t b) {
    char* out = text.data() + offsets[b];
    char score[32];
    for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
      const auto [source, target, value] = line(i);
      out = std::copy(source.begin(), source.end(), out);
      *out++ = '\t';
      out = std::copy(target.begin(), target.end(), out);
      if (with_scores) out = std::copy_n(score, score_text(value, score), out);
      *out++ = '\n';
    }
  });
  return text;
}

struct Line {
  std::string_view source, target;
  float score;
};

}  // namespace

std::string format_pairs(const std::vector<RankedPair>& pairs, bool with_scores, int threads) {
  return format_lines(pairs.size(), with_scores, threads, [&](std::size_t i) {
    return Line{pairs[i].source, pairs[i].target, pairs[i].score};
  });
}

std::string format_ranked(const std::vector<RankedIndex>& ranked, const std::vector<std::string>& sources,
                          const std::vector<std::string>& targets, bool with_scores, int threads) {
  return format_lines(ranked.size(), with_scores, threads, [&](std::size_t i) {
    return Line{sources[ranked[i].source], targets[ranked[i].target], ranked[i].score};
  });
}

void write_pairs(const std::string& path, const std::vector<RankedPair>& pairs, bool with_scores) {
  write_file_atomically(path, format_pairs(pairs, with_scores));
}

}  // namespace termalign
