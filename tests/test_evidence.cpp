#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>

#include "evidence/compositional.h"
#include "shared_data.h"
#include "term_lists.h"
#include "termalign/aligner.h"
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

TEST_CASE("a word is a member of a closed compound it starts or ends, with a long enough rest", "[evidence]") {
  CHECK(compound_member("datei", "dateiformat"));
  CHECK(compound_member("format", "dateiformat"));
  CHECK(compound_member("data", "database"));
  CHECK(compound_member("zeitung", "zeitungspapier"));  // a linking -s stays with the rest
  CHECK(compound_member("файл", "файлменеджер"));       // letters of any script
  CHECK_FALSE(compound_member("по", "пользователь"));   // two letters in four bytes: no member
  CHECK(compound_member("файл", "файлов"));             // a rest of four bytes: an inflection, as in bytes
  CHECK_FALSE(compound_member("pré", "précédent"));     // three letters
  CHECK(compound_member("über", "überschrift"));
  CHECK_FALSE(compound_member("table", "tableau"));  // a rest of 2 bytes is an ending, not a word
  CHECK_FALSE(compound_member("form", "format"));
  CHECK_FALSE(compound_member("ei", "dateiformat"));    // too short to say
  CHECK_FALSE(compound_member("teif", "dateiformat"));  // inside, not at an edge
  CHECK_FALSE(compound_member("dateiformat", "dateiformat"));
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

// The compositional evidence of the first source term against each target term, in a space where every word of
// the two vocabularies is an axis of its own and the map is the identity.
CandidateEvidence first_source_evidence(const std::vector<std::string>& source_words,
                                        const std::vector<std::string>& target_words, const PairList& seed,
                                        const TermList& source_terms, const TermList& target_terms) {
  const int dim = static_cast<int>(std::max(source_words.size(), target_words.size()));
  const Embeddings source = axis_embeddings(source_words, dim), target = axis_embeddings(target_words, dim);
  const Normalizer none{Normalization::none, {}};
  const TermComposer source_composer(source, none, CompositionOptions{});
  const TermComposer target_composer(target, none, CompositionOptions{});
  Mapping mapping;
  mapping.source_transform = mapping.target_transform = Matrix::Identity(dim, dim);
  CandidateEvidence evidence;
  for (std::uint32_t target_term = 0; target_term < target_terms.size(); ++target_term) {
    evidence.source.push_back(0);
    evidence.target.push_back(target_term);
  }
  TermWords source_list = term_words(source_terms.terms), target_list = term_words(target_terms.terms);
  source_list.vectors = mapped_word_vectors(source_list.words, source_composer, mapping.source_transform, 1);
  target_list.vectors = mapped_word_vectors(target_list.words, target_composer, mapping.target_transform, 1);
  add_compositional_evidence(source_list, target_list, seed, 1, evidence);
  return evidence;
}
}  // namespace

TEST_CASE("a word of many terms weighs less in the word-level evidence than a word of one term", "[evidence]") {
  // `file menu` against `menu de fichier` and `menu rouge fichier`: both have one target word without a partner,
  // `de` (in three of the four target terms) or `rouge` (in one). Counted alike, the two candidates would tie.
  PairList seed;
  seed.pairs = {{"file", "fichier"}, {"list", "liste"}};
  const CandidateEvidence evidence = first_source_evidence(
      {"file", "menu", "list"}, {"fichier", "menu", "liste", "de", "rouge", "aide"}, seed,
      term_list({"file menu", "list"}),
      term_list({"menu de fichier", "menu rouge fichier", "liste de menu", "aide de liste"}));
  // (translated_share is 1 for both: `de` and `rouge` have a nearest met word, at cosine 0, as every word has.)
  for (const auto* column : {&evidence.seed_share, &evidence.one_to_one, &evidence.word_alignment}) {
    REQUIRE(column->size() == 4);
    CHECK((*column)[0] > (*column)[1]);  // `de` costs less than `rouge`
    CHECK((*column)[0] < 1.0f);          // but something
    CHECK((*column)[1] > 0.0f);
  }
  CHECK(evidence.edge_agreement[0] == 1.0f);
}

TEST_CASE("seed translations found as members of a closed compound count as partners, not as conflicts",
          "[evidence]") {
  // `file format` against the German compound `dateiformat` (`datei` + `format`) and against `dateiname`
  // (`datei` + `name`): the seed pairs file/datei and format/format are both in the first, one in the second.
  PairList seed;
  seed.pairs = {{"file", "Datei"}, {"format", "Format"}};  // the seed's case, as in xling-eval's German lists
  const CandidateEvidence evidence =
      first_source_evidence({"file", "format"}, {"dateiformat", "dateiname", "format", "datei"}, seed,
                            term_list({"file format"}), term_list({"dateiformat", "dateiname", "format"}));
  CHECK(evidence.seed_share[0] == Approx(1.0));  // every word of both terms has its partner
  CHECK(evidence.seed_conflict[0] == Approx(0.0));
  CHECK(evidence.seed_share[1] > 0.0f);  // `file` in `dateiname`
  CHECK(evidence.seed_share[1] < evidence.seed_share[0]);
  CHECK(evidence.seed_conflict[1] > 0.0f);  // `format` is a seed word, missing from `dateiname`
  CHECK(evidence.seed_conflict[2] > 0.0f);  // `file` is missing from `format`
}

TEST_CASE("seed translations match term words written with ё for е, and the other way", "[evidence]") {
  // Russian texts may write е for ё: a seed lexicon with `отчет` and a term list with `отчёт` (or the reverse).
  PairList seed;
  seed.pairs = {{"report", "отчет"}, {"calculation", "Расчёт"}};
  const CandidateEvidence evidence =
      first_source_evidence({"report", "calculation"}, {"отчёт", "расчет", "другой"}, seed,
                            term_list({"report calculation"}), term_list({"отчёт расчет", "отчёт другой"}));
  CHECK(evidence.seed_share[0] == Approx(1.0));  // both words have their partner
  CHECK(evidence.seed_conflict[0] == Approx(0.0));
  CHECK(evidence.seed_share[1] > 0.0f);  // `report`/`отчёт` only
  CHECK(evidence.seed_share[1] < evidence.seed_share[0]);
}
