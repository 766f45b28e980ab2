#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "termalign/orthography.h"

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

TEST_CASE("orthographic_neighbours equals a brute-force search", "[orthography]") {
  std::mt19937 generator(11);
  const std::string letters = "abcde";
  auto random_word = [&] {
    std::string word;
    const int length = 2 + static_cast<int>(generator() % 6);
    for (int i = 0; i < length; ++i) word += letters[generator() % letters.size()];
    return word;
  };
  std::vector<std::string> sources(30), targets(45);
  for (auto& word : sources) word = random_word();
  for (auto& word : targets) word = random_word();
  const auto source_profiles = ngram_profiles(sources, true, 2);
  const auto target_profiles = ngram_profiles(targets, true, 2);
  const std::size_t m = 4;
  const double minimum = 0.2;
  const auto matches = orthographic_neighbours(source_profiles, target_profiles, m, minimum, 2);
  std::vector<OrthographicMatch> expected;
  for (std::uint32_t s = 0; s < sources.size(); ++s) {
    std::vector<OrthographicMatch> row;
    for (std::uint32_t t = 0; t < targets.size(); ++t) {
      const double similarity = ngram_similarity(source_profiles[s], target_profiles[t]);
      // Pairs sharing no trigram are invisible to the index; with minimum 0.2 they may still qualify by bigrams.
      bool shares_trigram = false;
      for (auto hash : source_profiles[s])
        if ((hash & 1u) && std::binary_search(target_profiles[t].begin(), target_profiles[t].end(), hash))
          shares_trigram = true;
      if (similarity >= minimum && shares_trigram) row.push_back({s, t, static_cast<float>(similarity)});
    }
    std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.similarity > b.similarity; });
    if (row.size() > m) row.resize(m);
    expected.insert(expected.end(), row.begin(), row.end());
  }
  REQUIRE(matches.size() == expected.size());
  for (std::size_t i = 0; i < matches.size(); ++i) {
    CHECK(matches[i].source == expected[i].source);
    CHECK(matches[i].target == expected[i].target);
    CHECK(matches[i].similarity == expected[i].similarity);
  }
}
