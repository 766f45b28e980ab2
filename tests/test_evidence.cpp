#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>

#include "shared_data.h"
#include "termalign/align.h"
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
  double sums[2][5] = {}, counts[2] = {};
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const bool in_gold = gold_pairs.count({candidates.source_terms.terms[evidence.source[i]],
                                           candidates.target_terms.terms[evidence.target[i]]}) != 0;
    const double values[5] = {evidence.one_to_one[i], evidence.translated_share[i], evidence.edge_agreement[i],
                              evidence.context_similarity[i],
                              -std::abs(evidence.source_frequency_z[i] - evidence.target_frequency_z[i])};
    for (int j = 0; j < 5; ++j) sums[in_gold][j] += values[j];
    counts[in_gold] += 1;
  }
  REQUIRE(counts[1] > 50);
  for (int j = 0; j < 5; ++j) {
    CAPTURE(j, sums[1][j] / counts[1], sums[0][j] / counts[0]);
    CHECK(sums[1][j] / counts[1] > sums[0][j] / counts[0]);
  }
}
