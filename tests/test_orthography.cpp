#include <omp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "text/spelling.h"

using namespace termalign;

TEST_CASE("Spellings are lower-cased, transliterated to Latin and stripped of diacritics", "[orthography]") {
  CHECK(latin_spelling("Équation") == "equation");
  CHECK(latin_spelling("функция") == "funkcia");  // ICU's Russian-Latin (ISO 9 style) rules
  CHECK(latin_spelling("Funktionsübersicht") == "funktionsubersicht");
  CHECK(latin_spelling("Функция", false) == "функция");
}

TEST_CASE("A transliterated Cyrillic cognate scores above an unrelated pair", "[orthography]") {
  const double cognate = orthographic_similarity("function", "функция");
  const double unrelated = orthographic_similarity("function", "таблица");
  CAPTURE(cognate, unrelated);
  CHECK(cognate > unrelated);
  CHECK(cognate > 0.3);
  CHECK(orthographic_similarity("protocol", "протокол") > 0.7);
  // Without transliteration the scripts share nothing.
  CHECK(orthographic_similarity("protocol", "протокол", false) == 0.0);
}

TEST_CASE("Dice similarity of n-gram profiles by hand", "[orthography]") {
  CHECK(ngram_similarity(ngram_profile("pdf"), ngram_profile("pdf")) == 1.0);
  CHECK(ngram_similarity(ngram_profile("abc"), ngram_profile("xyz")) == 0.0);
  // "ab": #a ab b# + #ab ab# (5); "abc": #a ab bc c# + #ab abc bc# (7); shared: #a ab #ab -> 2*3/12.
  CHECK(ngram_similarity(ngram_profile("ab"), ngram_profile("abc")) == Approx(0.5));
}

namespace {
// The top-m of every source by brute force: similarity at least `minimum`, ties by target index.
std::vector<OrthographicMatch> brute_force_neighbours(const std::vector<NgramProfile>& sources,
                                                      const std::vector<NgramProfile>& targets, std::size_t m,
                                                      double minimum) {
  std::vector<OrthographicMatch> expected;
  for (std::uint32_t s = 0; s < sources.size(); ++s) {
    std::vector<OrthographicMatch> row;
    for (std::uint32_t t = 0; t < targets.size(); ++t) {
      const auto similarity = static_cast<float>(ngram_similarity(sources[s], targets[t]));
      if (similarity >= minimum) row.push_back({s, t, similarity});
    }
    std::stable_sort(row.begin(), row.end(),
                     [](const auto& a, const auto& b) { return a.similarity > b.similarity; });
    if (row.size() > m) row.resize(m);
    expected.insert(expected.end(), row.begin(), row.end());
  }
  return expected;
}

// Words of a few letters: many shared bigrams and trigrams, many equal sizes and tied similarities.
std::vector<std::string> random_words(std::size_t count, std::mt19937& generator) {
  const std::string letters = "abcde";
  std::vector<std::string> words(count);
  for (auto& word : words) {
    const int length = 2 + static_cast<int>(generator() % 9);
    for (int i = 0; i < length; ++i) word += letters[generator() % letters.size()];
    if (generator() % 4 == 0) word += ' ' + word.substr(0, 1 + generator() % word.size());  // multi-word terms
  }
  return words;
}
}  // namespace

TEST_CASE("orthographic_neighbours equals a brute-force top-m", "[orthography]") {
  std::mt19937 generator(11);
  const auto source_profiles = ngram_profiles(random_words(300, generator), true, 2);
  const auto target_profiles = ngram_profiles(random_words(700, generator), true, 2);
  for (const std::size_t m : {std::size_t{1}, std::size_t{4}, std::size_t{25}}) {
    for (const double minimum : {0.0, 0.2, 0.5}) {
      for (const int threads : {1, 2}) {
        CAPTURE(m, minimum, threads);
        // A bound above any source's postings: the search must be exact.
        const auto matches =
            orthographic_neighbours(source_profiles, target_profiles, m, minimum, threads, std::size_t{1} << 40);
        const auto expected = brute_force_neighbours(source_profiles, target_profiles, m, minimum);
        REQUIRE(matches.size() == expected.size());
        std::size_t differences = 0;
        for (std::size_t i = 0; i < matches.size(); ++i) {
          differences += matches[i].source != expected[i].source || matches[i].target != expected[i].target ||
                         matches[i].similarity != expected[i].similarity;
        }
        CHECK(differences == 0);
      }
    }
  }
}

TEST_CASE("orthographic_neighbours called from a host program's parallel region equals the plain call",
          "[orthography]") {
  // Its per-thread scratch is sized for its own 2 threads; the host's 4 threads each call it (serially inside).
  std::mt19937 generator(13);
  const auto source_profiles = ngram_profiles(random_words(200, generator), true, 2);
  const auto target_profiles = ngram_profiles(random_words(500, generator), true, 2);
  const auto expected = orthographic_neighbours(source_profiles, target_profiles, 4, 0.2, 2, 1000);
  std::vector<int> same(4, 0);
#pragma omp parallel num_threads(4)
  {
    const auto matches = orthographic_neighbours(source_profiles, target_profiles, 4, 0.2, 2, 1000);
    bool equal = matches.size() == expected.size();
    for (std::size_t i = 0; equal && i < matches.size(); ++i)
      equal = matches[i].source == expected[i].source && matches[i].target == expected[i].target &&
              matches[i].similarity == expected[i].similarity;
    same[static_cast<std::size_t>(omp_get_thread_num())] = equal;
  }
  CHECK(same == std::vector<int>(4, 1));
}

TEST_CASE("orthographic_neighbours under a small work bound keeps true similarities, best first",
          "[orthography]") {
  std::mt19937 generator(12);
  const auto source_profiles = ngram_profiles(random_words(200, generator), true, 2);
  const auto target_profiles = ngram_profiles(random_words(3000, generator), true, 2);
  const std::size_t m = 5;
  const auto bounded = orthographic_neighbours(source_profiles, target_profiles, m, 0.3, 2, 500);
  const auto exact = brute_force_neighbours(source_profiles, target_profiles, m, 0.3);
  // Each match's similarity is the true one, each source's list is ordered and no longer than m, and a bounded
  // source's best is never above the exact best.
  std::vector<float> exact_best(source_profiles.size(), -1), bounded_best(source_profiles.size(), -1);
  for (const auto& match : exact) exact_best[match.source] = std::max(exact_best[match.source], match.similarity);
  std::vector<std::size_t> per_source(source_profiles.size(), 0);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bounded.size(); ++i) {
    const auto& match = bounded[i];
    wrong += match.similarity !=
             static_cast<float>(ngram_similarity(source_profiles[match.source], target_profiles[match.target]));
    wrong += match.similarity < 0.3f || ++per_source[match.source] > m;
    if (i > 0 && bounded[i - 1].source == match.source) wrong += bounded[i - 1].similarity < match.similarity;
    if (i > 0) wrong += bounded[i - 1].source > match.source;
    bounded_best[match.source] = std::max(bounded_best[match.source], match.similarity);
  }
  CHECK(wrong == 0);
  std::size_t above = 0, found_best = 0;
  for (std::size_t s = 0; s < source_profiles.size(); ++s) {
    above += bounded_best[s] > exact_best[s];
    found_best += bounded_best[s] == exact_best[s];
  }
  CHECK(above == 0);
  // The rarest n-grams come first, so the bound still finds most sources' closest spelling.
  CHECK(found_best > source_profiles.size() * 8 / 10);
  // And it is a bound: the exact search reads more.
  CHECK(bounded.size() <= exact.size());
}
