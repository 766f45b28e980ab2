#include "mapping/seed.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "termalign/config.h"
#include "termalign/logging.h"
#include "text/spelling.h"
#include "util/parallel.h"

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

namespace {

// Spellings of fewer letters pair by chance too often to be matched by similarity (`os` / `ос`, `ne` / `не`).
constexpr std::size_t kMinNearLetters = 4;

std::size_t ascii_letters(const std::string& spelling) {
  std::size_t letters = 0;
  for (const char c : spelling) letters += std::isalpha(static_cast<unsigned char>(c)) != 0;
  return letters;
}

std::vector<std::string> latin_spellings(const std::vector<std::string>& words, int threads) {
  std::vector<std::string> spellings(words.size());
  parallel_for(words.size(), threads, [&](std::size_t i) { spellings[i] = latin_spelling(words[i]); });
  return spellings;
}

}  // namespace

PairList transliterated_seed(const Embeddings& source, const Embeddings& target, double min_similarity,
                             int threads) {
  constexpr std::int64_t kNone = -1;
  const std::vector<std::string> source_spellings = latin_spellings(source.words, threads);
  const std::vector<std::string> target_spellings = latin_spellings(target.words, threads);
  std::unordered_map<std::string, std::uint32_t> target_of_spelling;
  for (std::size_t t = 0; t < target.size(); ++t)
    target_of_spelling.emplace(target_spellings[t], static_cast<std::uint32_t>(t));

  std::vector<std::int64_t> partner(source.size(), kNone);
  std::vector<char> target_paired(target.size(), 0);
  std::size_t identical = 0, same_spelling = 0, near = 0;
  for (std::size_t s = 0; s < source.size(); ++s) {
    const auto row = target.rows.find(source.words[s]);
    if (row == target.rows.end()) continue;
    partner[s] = static_cast<std::int64_t>(row->second);
    target_paired[row->second] = 1;
    ++identical;
  }
  for (std::size_t s = 0; s < source.size(); ++s) {
    if (partner[s] != kNone) continue;
    const auto found = target_of_spelling.find(source_spellings[s]);
    if (found == target_of_spelling.end()) continue;
    partner[s] = found->second;
    target_paired[found->second] = 1;
    ++same_spelling;
  }

  // The near spellings: mutual closest among the words still unpaired, by the orthographic evidence's measure.
  std::vector<std::uint32_t> open_sources, open_targets;
  for (std::size_t s = 0; s < source.size(); ++s)
    if (partner[s] == kNone && ascii_letters(source_spellings[s]) >= kMinNearLetters)
      open_sources.push_back(static_cast<std::uint32_t>(s));
  for (std::size_t t = 0; t < target.size(); ++t)
    if (!target_paired[t] && ascii_letters(target_spellings[t]) >= kMinNearLetters)
      open_targets.push_back(static_cast<std::uint32_t>(t));
  const auto profiles = [](const std::vector<std::string>& spellings, const std::vector<std::uint32_t>& ids) {
    std::vector<NgramProfile> result;
    result.reserve(ids.size());
    for (const std::uint32_t id : ids) result.push_back(ngram_profile(spellings[id]));
    return result;
  };
  const std::vector<NgramProfile> source_profiles = profiles(source_spellings, open_sources);
  const std::vector<NgramProfile> target_profiles = profiles(target_spellings, open_targets);
  // No work bound: the exact closest spelling on both sides, so that "each other's closest" is well defined.
  constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();
  const std::vector<OrthographicMatch> forward =
      orthographic_neighbours(source_profiles, target_profiles, 1, min_similarity, threads, kUnbounded);
  const std::vector<OrthographicMatch> backward =
      orthographic_neighbours(target_profiles, source_profiles, 1, min_similarity, threads, kUnbounded);
  std::vector<std::int64_t> closest_source(open_targets.size(), kNone);
  for (const OrthographicMatch& match : backward) closest_source[match.source] = match.target;
  for (const OrthographicMatch& match : forward) {
    if (closest_source[match.target] != static_cast<std::int64_t>(match.source)) continue;
    partner[open_sources[match.source]] = open_targets[match.target];
    ++near;
  }

  PairList seed;
  seed.path = kTransliteratedSeed;
  for (std::size_t s = 0; s < source.size(); ++s) {
    if (partner[s] == kNone) continue;
    seed.pairs.emplace_back(source.words[s], target.words[static_cast<std::size_t>(partner[s])]);
    seed.lines.push_back(seed.pairs.size());
  }
  logger().info(
      "seed of words spelt alike in Latin letters: {} pairs of {} ({} words) and {} ({} words): {} written "
      "alike, {} alike once transliterated, {} each other's closest spelling (n-gram Dice at least {})",
      seed.pairs.size(), source.path, source.size(), target.path, target.size(), identical, same_spelling, near,
      min_similarity);
  return seed;
}

}  // namespace termalign
