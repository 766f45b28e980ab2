// Seeds read off the term lists (mapping/term_seed.h) and the induced seed's rounds (induced_seed).
#include <Eigen/QR>
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mapping/composition.h"
#include "mapping/mapping.h"
#include "mapping/term_seed.h"
#include "pipeline/stages.h"
#include "scoring/scoring.h"
#include "scoring_helpers.h"

using namespace termalign;

namespace {

Embeddings embeddings(const std::vector<std::string>& words, Matrix vectors) {
  Embeddings e;
  e.path = "synthetic";
  e.words = words;
  for (std::size_t i = 0; i < words.size(); ++i) e.rows.emplace(words[i], i);
  e.vectors = std::move(vectors);
  return e;
}

// A seeded random rotation of `d` dimensions: the Q of a QR decomposition of random unit rows.
Matrix random_rotation(Eigen::Index d, unsigned seed) {
  const Eigen::MatrixXd g =
      testing::random_unit_rows(static_cast<int>(d), static_cast<int>(d), seed).cast<double>();
  return Matrix(Eigen::MatrixXd(Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ()).cast<float>());
}

// The brute-force mutual CSLS nearest neighbours, best first, from the scoring tests' plain references.
std::vector<Candidate> brute_force_mutual(const Matrix& X, const Matrix& Z, int k) {
  const std::vector<std::vector<float>> s = testing::all_similarities(X, Z);
  const NeighbourhoodMeans means = testing::reference_means(X, Z, k);
  Eigen::MatrixXd csls(X.rows(), Z.rows());
  for (Eigen::Index i = 0; i < X.rows(); ++i)
    for (Eigen::Index j = 0; j < Z.rows(); ++j) csls(i, j) = 2.0 * s[i][j] - means.source[i] - means.target[j];
  std::vector<Candidate> pairs;
  for (Eigen::Index i = 0; i < csls.rows(); ++i) {
    Eigen::Index j = 0, back = 0;
    csls.row(i).maxCoeff(&j);
    csls.col(j).maxCoeff(&back);
    if (back == i)
      pairs.push_back(
          {static_cast<float>(csls(i, j)), s[i][j], static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)});
  }
  std::sort(pairs.begin(), pairs.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return pairs;
}

}  // namespace

TEST_CASE("confident_term_pairs: the brute-force mutual CSLS nearest neighbours, best first", "[seed][scoring]") {
  // Rows that cross many tile borders (the tiles are the scoring's defaults: 512 x 2048 and more rows than that
  // on the target side), half of them near a partner.
  const int n1 = 700, n2 = 2300, d = 12;
  const Matrix X = testing::random_unit_rows(n1, d, 5);
  Matrix Z = testing::random_unit_rows(n2, d, 6);
  for (Eigen::Index i = 0; i < n1; i += 2) Z.row(3 * i) = X.row(i) + 0.3f * Z.row(3 * i);
  Z.rowwise().normalize();
  const std::vector<Candidate> expected = brute_force_mutual(X, Z, 3);
  REQUIRE(expected.size() > 300);
  for (const int threads : {1, 2}) {
    const std::vector<Candidate> pairs = confident_term_pairs(X, Z, 3, 0, threads);
    REQUIRE(pairs.size() == expected.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      CHECK(pairs[p].source == expected[p].source);
      CHECK(pairs[p].target == expected[p].target);
      CHECK(pairs[p].score == Approx(expected[p].score).margin(1e-5));
    }
    const std::vector<Candidate> first = confident_term_pairs(X, Z, 3, 10, threads);
    REQUIRE(first.size() == 10);
    CHECK(std::equal(first.begin(), first.end(), pairs.begin(), [](const Candidate& a, const Candidate& b) {
      return a.source == b.source && a.target == b.target;
    }));
  }
  CHECK(confident_term_pairs(Matrix(0, d), Z, 3, 0, 1).empty());
}

TEST_CASE("term_word_pairs: one-word terms pair their words, longer ones their mutually closest words", "[seed]") {
  // Identity mapping; the target words are the source words' vectors under other names.
  const Matrix vectors = Matrix::Identity(5, 5);
  const Embeddings source = embeddings({"file", "format", "cell", "menu", "the"}, vectors);
  const Embeddings target = embeddings({"fichier", "format", "cellule", "menu", "le"}, vectors);
  Normalizer none;
  CompositionOptions known_only;
  known_only.split_compounds = false;
  known_only.subword_oov = false;
  known_only.split_closed_compounds = false;
  const TermComposer source_words(source, none, known_only), target_words(target, none, known_only);
  const std::vector<std::string> source_terms = {"file format", "cell", "unknown", "menu the"};
  const std::vector<std::string> target_terms = {"format de fichier", "cellule", "menu", "inconnu"};
  const std::vector<std::uint32_t> ids = {0, 1, 2, 3};
  const Matrix identity = Matrix::Identity(5, 5);
  std::vector<Candidate> pairs(4);
  pairs[0].source = 0, pairs[0].target = 0;  // file format / format de fichier: two word pairs, `de` unknown
  pairs[1].source = 1, pairs[1].target = 1;  // cell / cellule
  pairs[2].source = 2, pairs[2].target = 3;  // nothing known: no pair
  pairs[3].source = 3, pairs[3].target = 2;  // menu the / menu: menu only (`the` is closest to menu, not back)
  const PairList seed = term_word_pairs(pairs, {source_terms, ids, source_words, identity},
                                        {target_terms, ids, target_words, identity}, "auto");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"file", "fichier"}, {"format", "format"}, {"cell", "cellule"}, {"menu", "menu"}};
  CHECK(seed.pairs == expected);
  CHECK(seed.path == "auto");
  CHECK(seed.lines.size() == seed.pairs.size());
}

// The case of a language pair whose words written alike are mostly the other language's words inside it (English
// passages of Russian documentation): the identical seed ties them, not the target language's own words, and the
// map it gives finds few translations. The term lists hold translations of each other; reading the seed off them
// finds the rest.
TEST_CASE("An induced seed read off the term lists recovers the map its start misses", "[seed]") {
  std::mt19937 generator(11);
  const Eigen::Index d = 24;
  const Matrix R = random_rotation(d, 12);
  std::vector<std::string> source_words, target_words;
  std::vector<RowVector> source_rows, target_rows;
  const auto add = [&](const std::string& s, const RowVector& x, const std::string& t, const RowVector& z) {
    source_words.push_back(s);
    source_rows.push_back(x);
    target_words.push_back(t);
    target_rows.push_back(z);
  };
  std::normal_distribution<float> normal;
  const auto random_row = [&] {
    RowVector row(d);
    for (Eigen::Index c = 0; c < d; ++c) row(c) = normal(generator);
    return RowVector(row.normalized());
  };
  const auto translation = [&](const RowVector& x) {
    return RowVector((x * R + 0.15f * random_row()).normalized());
  };
  // 100 words written alike that are not translations (unrelated vectors), 40 that are (numbers, names).
  for (int i = 0; i < 100; ++i) add("x" + std::to_string(i), random_row(), "x" + std::to_string(i), random_row());
  for (int i = 0; i < 40; ++i) {
    const RowVector x = random_row();
    add("n" + std::to_string(i), x, "n" + std::to_string(i), translation(x));
  }
  // 400 translated words, spelt unalike (the target's in Cyrillic letters: no Latin spelling is a source word),
  // and 300 target words with no translation.
  const int translated = 400;
  for (int i = 0; i < translated; ++i) {
    const RowVector x = random_row();
    add("w" + std::to_string(i), x, "слово" + std::to_string(i), translation(x));
  }
  std::vector<std::string> target_only;
  for (int i = 0; i < 300; ++i) {
    target_only.push_back("другое" + std::to_string(i));
    target_words.push_back(target_only.back());
    target_rows.push_back(random_row());
  }
  const auto stack = [](const std::vector<RowVector>& rows) {
    Matrix m(static_cast<Eigen::Index>(rows.size()), rows.front().size());
    for (std::size_t i = 0; i < rows.size(); ++i) m.row(static_cast<Eigen::Index>(i)) = rows[i];
    return m;
  };
  // Term lists: each translated word, 200 two-word terms of them, in the target list their translations in
  // another order, plus 300 distractors.
  std::vector<std::string> source_terms, target_terms;
  std::map<std::string, std::string> gold;
  std::uniform_int_distribution<int> word(0, translated - 1);
  for (int i = 0; i < translated; ++i) {
    source_terms.push_back("w" + std::to_string(i));
    target_terms.push_back("слово" + std::to_string(i));
  }
  for (int i = 0; i < 200; ++i) {
    const int a = word(generator), b = word(generator);
    source_terms.push_back("w" + std::to_string(a) + " w" + std::to_string(b));
    target_terms.push_back("слово" + std::to_string(a) + " слово" + std::to_string(b));
  }
  for (std::size_t i = 0; i < source_terms.size(); ++i) gold[source_terms[i]] = target_terms[i];
  for (const std::string& other : target_only) target_terms.push_back(other);
  std::shuffle(target_terms.begin(), target_terms.end(), generator);

  // P@1 of the source terms' nearest target term (cosine) under the induced seed's mapping.
  const auto precision = [&](std::size_t rounds, const PairList* dictionary = nullptr) {
    AlignConfig config;
    config.input.seed = kAutoSeed;
    config.mapping.seed_term_rounds = rounds;
    config.mapping.refine_iterations = 0;  // the seed, not the refinement, is the point
    config.scoring.threads = 2;
    Embeddings source = embeddings(source_words, stack(source_rows));
    Embeddings target = embeddings(target_words, stack(target_rows));
    Mapping mapping = pipeline::normalise_pair(config, source, target);
    const SeedTerms terms{source_terms, target_terms, config.composition, config.composition};
    PairList start;
    if (dictionary) start = *dictionary;
    InducedSeed induced = induced_seed(config, source, target, mapping, &terms, dictionary ? &start : nullptr);
    REQUIRE(induced.transforms);
    if (dictionary && rounds > 0) {
      // The rounds add to a dictionary's pairs, never drop them.
      CHECK(induced.from_terms);
      const std::set<std::pair<std::string, std::string>> seed(induced.seed.pairs.begin(), induced.seed.pairs.end());
      for (const auto& pair : dictionary->pairs) CHECK(seed.count(pair) == 1);
      CHECK(seed.size() > dictionary->pairs.size());
    }
    set_transforms(*induced.transforms, mapping);
    const ComposedTerms X = [&] {
      ComposedTerms c = compose_terms(source_terms, TermComposer(source, mapping.source, config.composition), 1);
      transform_rows(c.vectors, mapping.source_transform, 1);
      return c;
    }();
    const ComposedTerms Z = [&] {
      ComposedTerms c = compose_terms(target_terms, TermComposer(target, mapping.target, config.composition), 1);
      transform_rows(c.vectors, mapping.target_transform, 1);
      return c;
    }();
    REQUIRE(X.term_ids.size() == source_terms.size());
    const Matrix similarity = X.vectors * Z.vectors.transpose();
    std::size_t hits = 0;
    for (Eigen::Index i = 0; i < similarity.rows(); ++i) {
      Eigen::Index j = 0;
      similarity.row(i).maxCoeff(&j);
      hits += target_terms[Z.term_ids[static_cast<std::size_t>(j)]] ==
              gold.at(source_terms[X.term_ids[static_cast<std::size_t>(i)]]);
    }
    return static_cast<double>(hits) / static_cast<double>(similarity.rows());
  };
  const double start = precision(0), read_off = precision(5);
  WARN("term P@1 under the induced seed's map: start alone " << start << ", with 5 rounds read off the terms "
                                                             << read_off);
  CHECK(start < 0.7);  // the case: the start alone misses many translations (measured 0.43)
  CHECK(read_off > 0.95);

  // A small dictionary as the start (no seed lexicon, --dictionary): 25 right pairs and 35 wrong ones (more than
  // min_seed_pairs).
  PairList dictionary;
  dictionary.path = "dictionary";
  for (int i = 0; i < 60; ++i) {
    dictionary.pairs.emplace_back("w" + std::to_string(i), "слово" + std::to_string(i < 25 ? i : i + 100));
    dictionary.lines.push_back(dictionary.pairs.size());
  }
  const double dictionary_alone = precision(0, &dictionary), dictionary_read_off = precision(5, &dictionary);
  WARN("term P@1 from a small dictionary: alone " << dictionary_alone << ", with 5 rounds " << dictionary_read_off);
  CHECK(dictionary_alone < 0.7);  // measured 0.43
  CHECK(dictionary_read_off > 0.95);
}

TEST_CASE("An induced start of fewer pairs than dimensions is fitted unwhitened, its rounds whitened", "[seed]") {
  // 55 words written alike (at least min_seed_pairs, fewer than d = 64): their covariance cannot be whitened.
  // Before, the run stopped with the whitening's usage error; now the start's plain map reads the rounds' seed.
  const Eigen::Index d = 64;
  const Matrix R = random_rotation(d, 21);
  const Matrix x = testing::random_unit_rows(355, static_cast<int>(d), 22);
  const Matrix noise = testing::random_unit_rows(355, static_cast<int>(d), 23);
  const Matrix z = x * R + 0.1f * noise;
  std::vector<std::string> source_words, target_words, source_terms, target_terms;
  for (int i = 0; i < 355; ++i) {
    const std::string name = i < 55 ? "n" + std::to_string(i) : "w" + std::to_string(i);
    source_words.push_back(name);
    target_words.push_back(i < 55 ? name : "слово" + std::to_string(i));
    if (i >= 55) {
      source_terms.push_back(source_words.back());
      target_terms.push_back(target_words.back());
    }
  }
  AlignConfig config;
  config.input.seed = kAutoSeed;
  config.mapping.seed_term_rounds = 3;
  config.mapping.refine_iterations = 0;
  config.scoring.threads = 2;
  Embeddings source = embeddings(source_words, x);
  Embeddings target = embeddings(target_words, z);
  Mapping mapping = pipeline::normalise_pair(config, source, target);
  const SeedTerms terms{source_terms, target_terms, config.composition, config.composition};
  InducedSeed induced;
  REQUIRE_NOTHROW(induced = induced_seed(config, source, target, mapping, &terms));
  REQUIRE(induced.transforms);
  CHECK(induced.from_terms);
  CHECK(induced.usable > static_cast<std::size_t>(d));  // the rounds' pairs, whitened as the run asks
  CHECK(induced.options.whiten);
  set_transforms(*induced.transforms, mapping);
  // The map retrieves the translations: each source word's nearest target word.
  Matrix mapped_source = source.vectors * mapping.source_transform;
  Matrix mapped_target = target.vectors * mapping.target_transform;
  mapped_source.rowwise().normalize();
  mapped_target.rowwise().normalize();
  const Matrix similarity = mapped_source * mapped_target.transpose();
  std::size_t hits = 0;
  for (Eigen::Index i = 0; i < similarity.rows(); ++i) {
    Eigen::Index j = 0;
    similarity.row(i).maxCoeff(&j);
    hits += j == i;
  }
  CHECK(hits > 340);  // of 355
}

TEST_CASE("A ranked round's seed is the word pairs of the ranking's best pairs, as they are, fitted once",
          "[seed]") {
  // 300 translated words (z = x R + noise, the targets spelt otherwise): the ranking of the last run holds their
  // one-word pairs, two-word terms whose words come in the other order, and a wrong pair.
  const Eigen::Index d = 32;
  const int words = 300;
  const Matrix R = random_rotation(d, 31);
  const Matrix x = testing::random_unit_rows(words, static_cast<int>(d), 32);
  const Matrix z = x * R + 0.1f * testing::random_unit_rows(words, static_cast<int>(d), 33);
  std::vector<std::string> source_words, target_words;
  for (int i = 0; i < words; ++i) {
    source_words.push_back("w" + std::to_string(i));
    target_words.push_back("слово" + std::to_string(i));
  }
  AlignConfig config;
  config.input.seed = kAutoSeed;
  config.mapping.refine_iterations = 0;
  config.scoring.threads = 2;
  Embeddings source = embeddings(source_words, x);
  Embeddings target = embeddings(target_words, z);
  const Mapping normalisers = pipeline::normalise_pair(config, source, target);
  // The last run's mapping: the true rotation, as a good run's would be.
  auto last = std::make_shared<Mapping>(normalisers);
  last->source_transform = R;
  last->target_transform = Matrix::Identity(d, d);
  RankedSeed ranked;
  ranked.mapping = last;
  ranked.round = 1;
  for (int i = 0; i < 200; ++i) ranked.term_pairs.emplace_back(source_words[i], target_words[i]);
  ranked.term_pairs.emplace_back("w200 w201", "слово201 слово200");
  ranked.term_pairs.emplace_back("w202", "слово7");  // wrong, but the ranking's: kept
  ranked.term_pairs.emplace_back("w203 unknown", "слово203");
  const InducedSeed seed = ranked_seed(config, source, target, normalisers, ranked);
  std::vector<std::pair<std::string, std::string>> expected(ranked.term_pairs.begin(),
                                                            ranked.term_pairs.begin() + 200);
  expected.insert(expected.end(),
                  {{"w200", "слово200"}, {"w201", "слово201"}, {"w202", "слово7"}, {"w203", "слово203"}});
  CHECK(seed.seed.pairs == expected);
  CHECK(seed.seed.path == "ranked round 1");
  CHECK(seed.usable == expected.size());
  CHECK(seed.from_terms);
  REQUIRE(seed.transforms);
  // Its fit maps the words not in it (w204 and after) to their translations.
  Mapping mapping = normalisers;
  set_transforms(*seed.transforms, mapping);
  Matrix mapped_source = source.vectors * mapping.source_transform;
  Matrix mapped_target = target.vectors * mapping.target_transform;
  mapped_source.rowwise().normalize();
  mapped_target.rowwise().normalize();
  const Matrix similarity = mapped_source.bottomRows(words - 204) * mapped_target.transpose();
  std::size_t hits = 0;
  for (Eigen::Index i = 0; i < similarity.rows(); ++i) {
    Eigen::Index j = 0;
    similarity.row(i).maxCoeff(&j);
    hits += j == i + 204;
  }
  CHECK(hits > 90);  // of 96
  // Fewer usable pairs than min_seed_pairs: no fit (the run keeps the last round's mapping).
  ranked.term_pairs.resize(config.mapping.min_seed_pairs - 1);
  const InducedSeed small = ranked_seed(config, source, target, normalisers, ranked);
  CHECK(small.usable == config.mapping.min_seed_pairs - 1);
  CHECK_FALSE(small.transforms);
}
