#include "mapping/seed.h"

#include "termalign/config.h"
#include "termalign/logging.h"

namespace termalign {

PairList identical_seed(const Embeddings& source, const Embeddings& target) {
  PairList seed;
  seed.path = kIdenticalSeed;
  for (const std::string& word : source.words) {
    if (target.rows.count(word) == 0) continue;
    seed.pairs.emplace_back(word, word);
    seed.lines.push_back(seed.pairs.size());
  }
  logger().info("seed of identical words: {} words written alike in {} ({} words) and {} ({} words)",
                seed.pairs.size(), source.path, source.size(), target.path, target.size());
  return seed;
}

}  // namespace termalign
