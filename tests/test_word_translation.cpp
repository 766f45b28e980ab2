#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "mapping/composition.h"
#include "mapping/mapping.h"
#include "evidence/word_translation.h"

using namespace termalign;

namespace {

// Embeddings of `words`, one row each of `vectors`.
Embeddings embeddings_of(const std::vector<std::string>& words, Matrix vectors) {
  Embeddings embeddings;
  embeddings.words = words;
  embeddings.vectors = std::move(vectors);
  for (std::size_t i = 0; i < words.size(); ++i) embeddings.rows[words[i]] = i;
  return embeddings;
}

// Unit rows whose products are exact in float, so that ties are real ties: ±1 on one axis, or ±0.5 on each of 4.
RowVector exact_unit_row(std::mt19937& generator) {
  RowVector row = RowVector::Zero(4);
  if (generator() % 3 == 0) {
    row(static_cast<Eigen::Index>(generator() % 4)) = generator() % 2 ? 1.0f : -1.0f;
  } else {
    for (Eigen::Index c = 0; c < 4; ++c) row(c) = generator() % 2 ? 0.5f : -0.5f;
  }
  return row;
}

// `rows` such rows, every `unusable_every`-th (from the first) a zero row marked unusable (0: none).
WordVectors exact_word_vectors(std::mt19937& generator, std::size_t rows, std::size_t unusable_every) {
  WordVectors result;
  result.vectors = Matrix::Zero(static_cast<Eigen::Index>(rows), 4);
  result.usable.assign(rows, 1);
  for (std::size_t r = 0; r < rows; ++r) {
    if (unusable_every > 0 && r % unusable_every == 0) {
      result.usable[r] = 0;
      continue;
    }
    result.vectors.row(static_cast<Eigen::Index>(r)) = exact_unit_row(generator);
  }
  return result;
}

// nearest_rows by brute force: every usable row of `to` scored one by one, best first, ties by index.
std::vector<std::vector<std::uint32_t>> brute_force_nearest(const WordVectors& from, const WordVectors& to,
                                                            std::size_t k) {
  std::vector<std::vector<std::uint32_t>> nearest(from.usable.size());
  for (std::size_t r = 0; r < from.usable.size(); ++r) {
    if (!from.usable[r]) continue;
    std::vector<std::pair<float, std::uint32_t>> scored;
    for (std::size_t c = 0; c < to.usable.size(); ++c) {
      if (!to.usable[c]) continue;
      const float score =
          from.vectors.row(static_cast<Eigen::Index>(r)).dot(to.vectors.row(static_cast<Eigen::Index>(c)));
      scored.emplace_back(-score, static_cast<std::uint32_t>(c));
    }
    std::sort(scored.begin(), scored.end());
    for (std::size_t i = 0; i < std::min(k, scored.size()); ++i) nearest[r].push_back(scored[i].second);
  }
  return nearest;
}

}  // namespace

TEST_CASE("mapped word vectors: each word composed, mapped and renormalised; unusable words get zero rows",
          "[word_translation]") {
  // More words than a block of rows (2048), so that the last block is a partial one.
  constexpr std::size_t kVocabulary = 2100;
  std::mt19937 generator(11);
  std::normal_distribution<float> normal;
  std::vector<std::string> vocabulary;
  Matrix vectors(static_cast<Eigen::Index>(kVocabulary) + 1, 4);
  for (std::size_t i = 0; i < kVocabulary; ++i) {
    vocabulary.push_back("w" + std::to_string(i));
    for (Eigen::Index c = 0; c < 4; ++c) vectors(static_cast<Eigen::Index>(i), c) = normal(generator);
    vectors.row(static_cast<Eigen::Index>(i)).normalize();  // as a composer expects them: normalised
  }
  // A word the map sends to zero: its vector lies on the axis of the transform's zero row.
  vocabulary.push_back("vanishing");
  vectors.row(static_cast<Eigen::Index>(kVocabulary)) << 0, 0, 0, 1;
  const Embeddings embeddings = embeddings_of(vocabulary, vectors);
  const Normalizer none{Normalization::none, {}};
  const TermComposer composer(embeddings, none, CompositionOptions{});
  Matrix transform(4, 3);  // d = 4 to d' = 3
  for (Eigen::Index r = 0; r < 3; ++r)
    for (Eigen::Index c = 0; c < 3; ++c) transform(r, c) = normal(generator);
  transform.row(3).setZero();

  std::vector<std::string> words = vocabulary;
  std::shuffle(words.begin(), words.end(), generator);
  // Composed as the composer composes a one-word term: lower-case fallback, hyphenated pieces; and unknown.
  const std::vector<std::string> special = {"W17", "w3-w4", "unknown", "", "w2099"};
  words.insert(words.begin() + 2045, special.begin(), special.end());  // across the first block's border

  const WordVectors mapped = mapped_word_vectors(words, composer, transform, 1);
  REQUIRE(mapped.vectors.rows() == static_cast<Eigen::Index>(words.size()));
  REQUIRE(mapped.vectors.cols() == 3);
  REQUIRE(mapped.usable.size() == words.size());
  std::size_t usable = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    CAPTURE(i, words[i]);
    const RowVector row = mapped.vectors.row(static_cast<Eigen::Index>(i));
    RowVector composed;
    const bool known = composer.compose(words[i], composed);
    const RowVector expected = known ? RowVector(composed * transform) : RowVector::Zero(3);
    if (expected.norm() == 0) {
      CHECK(mapped.usable[i] == 0);
      CHECK((row.array() == 0.0f).all());
      continue;
    }
    REQUIRE(mapped.usable[i] == 1);
    ++usable;
    CHECK(row.norm() == Approx(1.0).epsilon(1e-5));
    CHECK((row - expected.normalized()).cwiseAbs().maxCoeff() < 1e-5f);
  }
  CHECK(usable == words.size() - 3);  // all but `unknown`, `vanishing` and the empty word

  // The hand-made cases, against the vectors of the words they stand for.
  const auto row_of = [&](const std::string& word) {
    const auto at = std::find(words.begin(), words.end(), word);
    return RowVector(mapped.vectors.row(at - words.begin()));
  };
  CHECK((row_of("W17") - row_of("w17")).cwiseAbs().maxCoeff() < 1e-6f);
  const RowVector pieces = (vectors.row(3) + vectors.row(4)) * transform;  // the sum's direction
  CHECK((row_of("w3-w4") - pieces.normalized()).cwiseAbs().maxCoeff() < 1e-5f);

  // The rounding depends on the blocks, not on the threads.
  const WordVectors on_two = mapped_word_vectors(words, composer, transform, 2);
  CHECK(on_two.vectors == mapped.vectors);
  CHECK(on_two.usable == mapped.usable);

  const WordVectors none_given = mapped_word_vectors({}, composer, transform, 2);
  CHECK(none_given.vectors.rows() == 0);
  CHECK(none_given.vectors.cols() == 3);
  CHECK(none_given.usable.empty());
}

TEST_CASE("nearest rows equal brute force across blocks, ties by index, k beyond the rows", "[word_translation]") {
  std::mt19937 generator(5);
  // 600 rows: two full blocks of 256 and a partial one; 24 distinct vectors, so most scores tie.
  const WordVectors from = exact_word_vectors(generator, 600, 7);
  const WordVectors to = exact_word_vectors(generator, 45, 5);
  const std::size_t usable_targets = static_cast<std::size_t>(std::count(to.usable.begin(), to.usable.end(), 1));
  REQUIRE(usable_targets == 36);
  for (const std::size_t k :
       {std::size_t(1), std::size_t(4), usable_targets, to.usable.size(), std::size_t(100)}) {
    CAPTURE(k);
    const auto expected = brute_force_nearest(from, to, k);
    for (const int threads : {1, 2}) {
      CAPTURE(threads);
      const auto nearest = nearest_rows(from, to, k, threads);
      REQUIRE(nearest.size() == from.usable.size());
      for (std::size_t r = 0; r < nearest.size(); ++r) {
        CAPTURE(r);
        CHECK(nearest[r] == expected[r]);
        // An unusable row has no neighbours; a usable one has k, or every usable row when fewer.
        CHECK(nearest[r].size() == (from.usable[r] ? std::min(k, usable_targets) : 0));
      }
    }
  }
}

TEST_CASE("nearest rows: nothing for k = 0, nor against no rows or only unusable ones", "[word_translation]") {
  std::mt19937 generator(3);
  const WordVectors from = exact_word_vectors(generator, 10, 0);
  const WordVectors to = exact_word_vectors(generator, 10, 0);
  WordVectors no_rows;
  no_rows.vectors = Matrix::Zero(0, 4);
  WordVectors unusable;
  unusable.vectors = Matrix::Zero(3, 4);
  unusable.usable.assign(3, 0);
  const std::vector<std::vector<std::uint32_t>> empty(10);
  CHECK(nearest_rows(from, to, 0, 1) == empty);
  CHECK(nearest_rows(from, no_rows, 3, 1) == empty);
  CHECK(nearest_rows(from, unusable, 3, 1) == empty);
  CHECK(nearest_rows(no_rows, to, 3, 1).empty());
  // A row's own copy is its nearest.
  const auto itself = nearest_rows(from, from, 1, 1);
  for (std::size_t r = 0; r < itself.size(); ++r) {
    REQUIRE(itself[r].size() == 1);
    CHECK(from.vectors.row(static_cast<Eigen::Index>(itself[r][0])) ==
          from.vectors.row(static_cast<Eigen::Index>(r)));
    CHECK(itself[r][0] <= r);  // the first of its copies, by index
  }
}

TEST_CASE("seed translations: lower-cased and folded, each translation once, in either direction",
          "[word_translation]") {
  PairList seed;
  seed.pairs = {
      {"File", "Fichier"}, {"file", "fichier"}, {"file", "dossier"}, {"report", "Отчёт"}, {"folder", "dossier"}};
  const auto forward = seed_translations(seed, false);
  CHECK(forward.size() == 3);
  CHECK(forward.at("file") == std::vector<std::string>{"fichier", "dossier"});  // in the seed's order
  CHECK(forward.at("report") == std::vector<std::string>{"отчет"});
  CHECK(forward.at("folder") == std::vector<std::string>{"dossier"});
  CHECK(forward.count("File") == 0);

  const auto reverse = seed_translations(seed, true);
  CHECK(reverse.size() == 3);
  CHECK(reverse.at("fichier") == std::vector<std::string>{"file"});
  CHECK(reverse.at("dossier") == std::vector<std::string>{"file", "folder"});
  CHECK(reverse.at("отчет") == std::vector<std::string>{"report"});

  CHECK(seed_translations(PairList{}, false).empty());
}
