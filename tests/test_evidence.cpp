#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>

#include "shared_data.h"
#include "term_lists.h"
#include "termalign/align.h"
#include "termalign/compositional.h"
#include "termalign/lexicon.h"

using namespace termalign;

TEST_CASE("compositional and corpus evidence are higher for the sample's gold pairs than for the others",
          "[evidence]") {
  const std::string source = TERMALIGN_SOURCE_DIR;
  std::string gold_path;
  AlignConfig config =
      termalign_tests::dataset_config(source + "/models/sample", "vec", source + "/data/sample", gold_path, true);
  REQUIRE_THAT(config.input.src_corpus, Catch::EndsWith("data/sample/corpus-en.txt"));
  REQUIRE_THAT(config.input.tgt_corpus, Catch::EndsWith("data/sample/corpus-fr.txt"));
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

namespace {
// Words with orthogonal unit vectors, one axis each, in `dim` dimensions.
Embeddings axis_embeddings(const std::vector<std::string>& words, int dim) {
  Embeddings embeddings;
  embeddings.words = words;
  embeddings.vectors = Matrix::Identity(dim, dim).topRows(static_cast<Eigen::Index>(words.size()));
  for (std::size_t i = 0; i < words.size(); ++i) embeddings.rows[words[i]] = i;
  return embeddings;
}

using termalign_tests::term_list;
}  // namespace

TEST_CASE("a word of many terms weighs less in the word-level evidence than a word of one term", "[evidence]") {
  // `file menu` against `menu de fichier` and `menu rouge fichier`: both have one target word without a partner,
  // `de` (in three of the four target terms) or `rouge` (in one). Counted alike, the two candidates would tie.
  const Embeddings source = axis_embeddings({"file", "menu", "list"}, 6);
  const Embeddings target = axis_embeddings({"fichier", "menu", "liste", "de", "rouge", "aide"}, 6);
  const Normalizer none{Normalization::none, {}};
  const TermComposer source_composer(source, none, CompositionOptions{});
  const TermComposer target_composer(target, none, CompositionOptions{});
  Mapping mapping;
  mapping.source_transform = mapping.target_transform = Matrix::Identity(6, 6);
  PairList seed;
  seed.pairs = {{"file", "fichier"}, {"list", "liste"}};
  const TermList source_terms = term_list({"file menu", "list"});
  const TermList target_terms =
      term_list({"menu de fichier", "menu rouge fichier", "liste de menu", "aide de liste"});
  CandidateEvidence evidence;
  for (const std::uint32_t target_term : {0u, 1u, 2u, 3u}) {
    evidence.source.push_back(0);
    evidence.target.push_back(target_term);
  }
  add_compositional_evidence(source_terms, target_terms, source_composer, target_composer, mapping, seed, 1,
                             evidence);
  // (translated_share is 1 for both: `de` and `rouge` have a nearest met word, at cosine 0, as every word has.)
  for (const auto* column : {&evidence.seed_share, &evidence.one_to_one, &evidence.word_alignment}) {
    REQUIRE(column->size() == 4);
    CHECK((*column)[0] > (*column)[1]);  // `de` costs less than `rouge`
    CHECK((*column)[0] < 1.0f);          // but something
    CHECK((*column)[1] > 0.0f);
  }
  CHECK(evidence.edge_agreement[0] == 1.0f);
}
