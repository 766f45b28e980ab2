#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>

#include "shared_data.h"
#include "termalign/align.h"
#include "termalign/compositional.h"
#include "termalign/lexicon.h"

using namespace termalign;

TEST_CASE("compositional and corpus evidence are higher for the sample's gold pairs than for the others",
          "[evidence]") {
  const std::string source = TERMALIGN_SOURCE_DIR;
  std::string gold_path;
  AlignConfig config =
      termalign_tests::dataset_config(source + "/models/sample", "vec", source + "/data/sample", gold_path);
  config.input.src_corpus = source + "/data/sample/corpus-en.txt";
  config.input.tgt_corpus = source + "/data/sample/corpus-fr.txt";
  const CandidateSet candidates = generate_candidates(config, true);
  const CandidateEvidence& evidence = candidates.evidence;
  const PairList gold = read_pairs(gold_path, PairFileKind::gold);
  const std::set<std::pair<std::string, std::string>> gold_pairs(gold.pairs.begin(), gold.pairs.end());
  REQUIRE(evidence.one_to_one.size() == evidence.size());
  REQUIRE(evidence.context_similarity.size() == evidence.size());
  REQUIRE(evidence.seed_share.size() == evidence.size());
  constexpr int kColumns = 6;
  double sums[2][kColumns] = {}, counts[2] = {};
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const bool in_gold = gold_pairs.count({candidates.source_terms.terms[evidence.source[i]],
                                           candidates.target_terms.terms[evidence.target[i]]}) != 0;
    const double values[kColumns] = {evidence.one_to_one[i],
                                     evidence.translated_share[i],
                                     evidence.edge_agreement[i],
                                     evidence.seed_share[i],
                                     evidence.context_similarity[i],
                                     -std::abs(evidence.source_frequency_z[i] - evidence.target_frequency_z[i])};
    for (int j = 0; j < kColumns; ++j) sums[in_gold][j] += values[j];
    counts[in_gold] += 1;
  }
  REQUIRE(counts[1] > 50);
  for (int j = 0; j < kColumns; ++j) {
    CAPTURE(j, sums[1][j] / counts[1], sums[0][j] / counts[0]);
    CHECK(sums[1][j] / counts[1] > sums[0][j] / counts[0]);
  }
}

TEST_CASE("forms of one word share a stem: a long common prefix, never a short one", "[evidence]") {
  CHECK(same_stem("window", "windows"));
  CHECK(same_stem("fenêtre", "fenêtres"));
  CHECK(same_stem("insérer", "inséré"));  // 6 of 8 bytes in common
  CHECK(same_stem("файл", "файла"));      // Cyrillic: bytes, 8 of 10
  CHECK(same_stem("cut", "cut"));         // short words only as they are
  CHECK_FALSE(same_stem("cut", "cuts"));
  CHECK_FALSE(same_stem("form", "format"));  // 4 of 6
  CHECK_FALSE(same_stem("insert", "insertion"));
  CHECK_FALSE(same_stem("abcd", "abce"));
  CHECK_FALSE(same_stem("", "a"));
  // The rule is symmetric.
  for (const auto& [a, b] : {std::pair<const char*, const char*>{"window", "windows"}, {"form", "format"}})
    CHECK(same_stem(a, b) == same_stem(b, a));
}
