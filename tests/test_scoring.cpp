// The blocked CSLS kernel against a brute-force reference on tiny data whose tiles cross many borders.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "captured_log.h"
#include "scoring/blas_core.h"
#include "scoring/scoring.h"
#include "scoring/screening.h"
#include "scoring_helpers.h"
#include "termalign/error.h"
#include "termalign/logging.h"

using termalign::Candidate;
using termalign::Matrix;
using termalign::NeighbourhoodMeans;
using termalign::SelectionOptions;
using termalign::TileOptions;
using termalign::testing::all_similarities;
using termalign::testing::random_unit_rows;
using termalign::testing::reference_means;
using termalign::testing::require_identical;

namespace {

// Every pair scored, each row's and column's list sorted in full, then the selection as documented.
std::vector<Candidate> reference_selection(const Matrix& X, const Matrix& Z, const NeighbourhoodMeans& means,
                                           const SelectionOptions& selection) {
  const auto s = all_similarities(X, Z);
  const auto n1 = static_cast<std::size_t>(X.rows()), n2 = static_cast<std::size_t>(Z.rows());
  std::vector<std::vector<Candidate>> by_source(n1), by_target(n2);
  for (std::size_t i = 0; i < n1; ++i)
    for (std::size_t j = 0; j < n2; ++j) {
      const Candidate c{2.0f * s[i][j] - means.source[i] - means.target[j], s[i][j], static_cast<std::uint32_t>(i),
                        static_cast<std::uint32_t>(j)};
      by_source[i].push_back(c);
      by_target[j].push_back(c);
    }
  const auto within = [](std::vector<Candidate>& list, std::size_t m, const Candidate& c) {
    std::sort(list.begin(), list.end(), termalign::ranks_before);
    for (std::size_t r = 0; r < std::min(m, list.size()); ++r)
      if (list[r].source == c.source && list[r].target == c.target) return true;
    return false;
  };
  std::vector<Candidate> kept;
  for (std::size_t i = 0; i < n1; ++i)
    for (const Candidate& c : by_source[i]) {
      if (selection.top_m > 0 && !within(by_source[i], selection.top_m, c)) continue;
      if (selection.mutual_m > 0 && !within(by_target[c.target], selection.mutual_m, c)) continue;
      kept.push_back(c);
    }
  std::sort(kept.begin(), kept.end(), termalign::ranks_before);
  if (selection.limit > 0 && kept.size() > selection.limit) kept.resize(selection.limit);
  return kept;
}

void require_close(const Eigen::VectorXf& actual, const Eigen::VectorXf& expected) {
  REQUIRE(actual.size() == expected.size());
  for (Eigen::Index i = 0; i < actual.size(); ++i) {
    INFO("entry " << i);
    REQUIRE(actual[i] == Approx(expected[i]).margin(1e-5));
  }
}

void require_same_pairs(const std::vector<Candidate>& actual, const std::vector<Candidate>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t r = 0; r < actual.size(); ++r) {
    INFO("rank " << r << ": got " << actual[r].source << "-" << actual[r].target << " (" << actual[r].score
                 << "), expected " << expected[r].source << "-" << expected[r].target << " (" << expected[r].score
                 << ")");
    REQUIRE(actual[r].source == expected[r].source);
    REQUIRE(actual[r].target == expected[r].target);
    REQUIRE(actual[r].score == Approx(expected[r].score).margin(1e-5));
    REQUIRE(actual[r].cosine == Approx(expected[r].cosine).margin(1e-5));
  }
}

// For long lists, where rounding differences between the reference's dot products and the GEMM's may swap two
// pairs whose scores are a few ulps apart: the same pairs, and the same score at every rank.
void require_same_pairs_up_to_near_ties(const std::vector<Candidate>& actual,
                                        const std::vector<Candidate>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t r = 0; r < actual.size(); ++r)
    REQUIRE(actual[r].score == Approx(expected[r].score).margin(1e-5));
  const auto pairs = [](const std::vector<Candidate>& list) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> result;
    for (const Candidate& c : list) result.emplace_back(c.source, c.target);
    std::sort(result.begin(), result.end());
    return result;
  };
  REQUIRE(pairs(actual) == pairs(expected));
}

// Tile shapes from 3 to 7, rows and columns different, plus one tile holding everything.
const std::vector<TileOptions> kTilings = {{3, 5, 1}, {7, 4, 2}, {4, 7, 2}, {5, 3, 1}, {6, 6, 2}, {1000, 1000, 1}};

}  // namespace

TEST_CASE("the screening masks set the bits of the values that reach their bounds, NaN never", "[scoring]") {
  using termalign::detail::kChunk;
  using termalign::detail::reaching;
  std::mt19937 generator(7);
  std::uniform_int_distribution<int> level(-3, 3);  // few levels: many values equal to their bound
  float values[kChunk], bounds[kChunk];
  for (int trial = 0; trial < 200; ++trial) {
    for (Eigen::Index t = 0; t < kChunk; ++t) {
      values[t] = static_cast<float>(level(generator)) / 2.0f;
      bounds[t] = static_cast<float>(level(generator)) / 2.0f;
    }
    values[trial % kChunk] = std::nanf("");
    const float bound = bounds[0];
    for (Eigen::Index n = 0; n <= kChunk; ++n) {  // a full chunk (the vector paths) and every shorter tail
      std::uint32_t each = 0, shared = 0;
      for (Eigen::Index t = 0; t < n; ++t) {
        each |= static_cast<std::uint32_t>(values[t] >= bounds[t]) << t;
        shared |= static_cast<std::uint32_t>(values[t] >= bound) << t;
      }
      REQUIRE(reaching(values, n, bounds) == each);
      REQUIRE(reaching(values, n, bound) == shared);
    }
  }
}

TEST_CASE("neighbourhood means match brute force across tile borders", "[scoring]") {
  const Matrix X = random_unit_rows(23, 5, 1), Z = random_unit_rows(31, 5, 2);
  for (int k : {1, 3, 23, 31, 100}) {
    const NeighbourhoodMeans expected = reference_means(X, Z, k);
    for (const TileOptions& tiles : kTilings) {
      INFO("k " << k << ", tiles " << tiles.rows << " x " << tiles.cols << ", threads " << tiles.threads);
      const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, k, tiles);
      require_close(means.source, expected.source);
      require_close(means.target, expected.target);
      require_close(termalign::knn_mean_similarity(X, Z, k, tiles), expected.source);
      require_close(termalign::knn_mean_similarity(Z, X, k, tiles), expected.target);
    }
  }
}

TEST_CASE("k at least the list size averages the whole row", "[scoring]") {
  const Matrix X = random_unit_rows(4, 3, 3), Z = random_unit_rows(6, 3, 4);
  const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 50, {3, 4, 2});
  const Matrix s = X * Z.transpose();
  for (int i = 0; i < 4; ++i) REQUIRE(means.source[i] == Approx(s.row(i).mean()).margin(1e-6));
  for (int j = 0; j < 6; ++j) REQUIRE(means.target[j] == Approx(s.col(j).mean()).margin(1e-6));
}

TEST_CASE("a one-term list on either side", "[scoring]") {
  const Matrix one = random_unit_rows(1, 5, 5), many = random_unit_rows(31, 5, 6);
  for (const TileOptions& tiles : kTilings) {
    for (int k : {1, 4}) {
      const NeighbourhoodMeans expected = reference_means(one, many, k);
      const NeighbourhoodMeans means = termalign::neighbourhood_means(one, many, k, tiles);
      require_close(means.source, expected.source);
      require_close(means.target, expected.target);
      const NeighbourhoodMeans flipped = termalign::neighbourhood_means(many, one, k, tiles);
      require_close(flipped.source, expected.target);
      require_close(flipped.target, expected.source);
    }
    const SelectionOptions selection{3, 0, 0};
    require_same_pairs(
        termalign::select_csls_candidates(one, many, reference_means(one, many, 2), selection, tiles),
        reference_selection(one, many, reference_means(one, many, 2), selection));
    require_same_pairs(
        termalign::select_csls_candidates(many, one, reference_means(many, one, 2), selection, tiles),
        reference_selection(many, one, reference_means(many, one, 2), selection));
  }
}

TEST_CASE("CSLS selection matches brute force", "[scoring]") {
  const Matrix X = random_unit_rows(23, 5, 7), Z = random_unit_rows(31, 5, 8);
  const NeighbourhoodMeans means = reference_means(X, Z, 3);
  const std::vector<SelectionOptions> selections = {{3, 0, 0},    // top_m only
                                                    {1, 0, 0},    // best target per source
                                                    {4, 2, 0},    // mutual
                                                    {40, 0, 0},   // m beyond the target list: every pair
                                                    {0, 0, 17},   // no per-source limit: the 17 best pairs overall
                                                    {0, 3, 0},    // per-target lists only
                                                    {3, 0, 10},   // the limit cuts the list
                                                    {5, 5, 12}};  // mutual and cut
  for (const SelectionOptions& selection : selections) {
    const std::vector<Candidate> expected = reference_selection(X, Z, means, selection);
    REQUIRE(!expected.empty());
    for (const TileOptions& tiles : kTilings) {
      INFO("selection " << selection.top_m << "/" << selection.mutual_m << "/" << selection.limit << ", tiles "
                        << tiles.rows << " x " << tiles.cols << ", threads " << tiles.threads);
      require_same_pairs(termalign::select_csls_candidates(X, Z, means, selection, tiles), expected);
    }
  }
}

TEST_CASE("the count of kept pairs follows the options", "[scoring]") {
  // Hand-computed sizes, independent of the reference: 23 sources x m, the cap, the whole grid.
  const Matrix X = random_unit_rows(23, 5, 9), Z = random_unit_rows(31, 5, 10);
  const NeighbourhoodMeans means = reference_means(X, Z, 3);
  const TileOptions tiles{4, 6, 2};
  REQUIRE(termalign::select_csls_candidates(X, Z, means, {3, 0, 0}, tiles).size() == 69);
  REQUIRE(termalign::select_csls_candidates(X, Z, means, {3, 0, 50}, tiles).size() == 50);
  REQUIRE(termalign::select_csls_candidates(X, Z, means, {0, 0, 1000}, tiles).size() == 23 * 31);
  REQUIRE(termalign::select_csls_candidates(X, Z, means, {0, 2, 0}, tiles).size() == 62);
  const auto best = termalign::select_csls_candidates(X, Z, means, {1, 1, 0}, tiles);
  REQUIRE(best.size() <= 23);
  for (std::size_t r = 1; r < best.size(); ++r) REQUIRE(termalign::ranks_before(best[r - 1], best[r]));
}

TEST_CASE("exact ties from duplicate rows are broken by index", "[scoring]") {
  Matrix X = random_unit_rows(23, 5, 11), Z = random_unit_rows(31, 5, 12);
  X.row(9) = X.row(2);
  X.row(17) = X.row(2);
  Z.row(20) = Z.row(4);
  Z.row(30) = Z.row(4);
  Z.row(11) = Z.row(0);
  // Not k = 1: then every mutual nearest pair scores 2c - c - c = 0 up to rounding, ties the data does not hold.
  for (int k : {2, 3}) {
    const NeighbourhoodMeans expected_means = reference_means(X, Z, k);
    REQUIRE(expected_means.source[9] == expected_means.source[2]);
    REQUIRE(expected_means.target[30] == expected_means.target[4]);
    for (const SelectionOptions& selection : std::vector<SelectionOptions>{{2, 0, 0}, {1, 2, 0}, {0, 0, 25}}) {
      const std::vector<Candidate> expected = reference_selection(X, Z, expected_means, selection);
      for (const TileOptions& tiles : kTilings) {
        INFO("k " << k << ", selection " << selection.top_m << "/" << selection.mutual_m << "/" << selection.limit
                  << ", tiles " << tiles.rows << " x " << tiles.cols);
        const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, k, tiles);
        require_close(means.source, expected_means.source);
        require_close(means.target, expected_means.target);
        const std::vector<Candidate> kept =
            termalign::select_csls_candidates(X, Z, expected_means, selection, tiles);
        require_same_pairs(kept, expected);
      }
    }
  }
  // Sources 2, 9 and 17 are one vector: each keeps the same best target with the same score.
  const NeighbourhoodMeans means = reference_means(X, Z, 3);
  const auto kept = termalign::select_csls_candidates(X, Z, means, {1, 0, 0}, {3, 5, 2});
  std::vector<std::uint32_t> sources;
  for (const Candidate& c : kept)
    if (c.source == 2 || c.source == 9 || c.source == 17) sources.push_back(c.source);
  REQUIRE(sources == std::vector<std::uint32_t>{2, 9, 17});  // equal scores: ascending source index
}

TEST_CASE("results are bit-identical for any thread count and tiling", "[scoring]") {
  Matrix X = random_unit_rows(23, 5, 13), Z = random_unit_rows(31, 5, 14);
  Z.row(7) = Z.row(3);
  const SelectionOptions selection{4, 3, 40}, overall{0, 0, 30};
  const TileOptions first_tiling{3, 5, 1};
  const NeighbourhoodMeans first = termalign::neighbourhood_means(X, Z, 3, first_tiling);
  const auto first_kept = termalign::select_csls_candidates(X, Z, first, selection, first_tiling);
  const auto first_overall = termalign::select_csls_candidates(X, Z, first, overall, first_tiling);
  for (const TileOptions& tiles : kTilings) {
    for (int threads : {1, 2}) {
      INFO("tiles " << tiles.rows << " x " << tiles.cols << ", threads " << threads);
      const TileOptions run{tiles.rows, tiles.cols, threads};
      const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 3, run);
      require_identical(means.source, first.source);
      require_identical(means.target, first.target);
      require_identical(termalign::knn_mean_similarity(X, Z, 3, run), first.source);
      require_identical(termalign::select_csls_candidates(X, Z, means, selection, run), first_kept);
      require_identical(termalign::select_csls_candidates(X, Z, means, overall, run), first_overall);
    }
  }
}

TEST_CASE("Guided row blocks: shrinking blocks on several threads give one thread's bits", "[scoring]") {
  // 1,500 rows in tiles of 480 on 2 and 3 threads: full blocks, then blocks of 336, 288, 192, 144 and 96 rows
  // (a quarter per thread of what is left), and a short last one.
  const Matrix X = random_unit_rows(1500, 24, 31), Z = random_unit_rows(700, 24, 32);
  const SelectionOptions selection{5, 0, 0};
  const TileOptions serial{480, 200, 1};
  const NeighbourhoodMeans expected = termalign::neighbourhood_means(X, Z, 7, serial);
  require_close(expected.source, reference_means(X, Z, 7).source);
  const auto expected_kept = termalign::select_csls_candidates(X, Z, expected, selection, serial);
  for (const int threads : {2, 3}) {
    INFO(threads << " threads");
    const TileOptions guided{480, 200, threads};
    const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 7, guided);
    require_identical(means.source, expected.source);
    require_identical(means.target, expected.target);
    require_identical(termalign::select_csls_candidates(X, Z, means, selection, guided), expected_kept);
    const termalign::CslsSelection one_pass = termalign::csls_select(X, Z, 7, selection, guided);
    require_identical(one_pass.means.source, expected.source);
    require_identical(one_pass.candidates, expected_kept);
  }
}

TEST_CASE("GEMM-sized tiles: brute force, exact ties, bit-identical across tilings", "[scoring]") {
  // d = 64 and tiles of tens of rows: Eigen's blocked GEMM path, with partial tiles on both sides.
  Matrix X = random_unit_rows(300, 64, 15), Z = random_unit_rows(257, 64, 16);
  X.row(299) = X.row(0);
  Z.row(256) = Z.row(1);
  Z.row(100) = Z.row(1);
  const NeighbourhoodMeans expected = reference_means(X, Z, 10);
  const SelectionOptions selection{10, 0, 0};
  const std::vector<Candidate> expected_kept = reference_selection(X, Z, expected, selection);
  const TileOptions first_tiling{50, 96, 1};
  const NeighbourhoodMeans first = termalign::neighbourhood_means(X, Z, 10, first_tiling);
  const auto first_kept = termalign::select_csls_candidates(X, Z, first, selection, first_tiling);
  require_close(first.source, expected.source);
  require_close(first.target, expected.target);
  require_same_pairs_up_to_near_ties(first_kept, reference_selection(X, Z, first, selection));
  require_same_pairs_up_to_near_ties(termalign::select_csls_candidates(X, Z, expected, selection, first_tiling),
                                     expected_kept);
  // Duplicate rows give exactly equal similarities, wherever they fall in a tile.
  REQUIRE(first.source[299] == first.source[0]);
  REQUIRE(first.target[256] == first.target[1]);
  REQUIRE(first.target[100] == first.target[1]);
  for (const TileOptions& tiles :
       std::vector<TileOptions>{{50, 96, 2}, {100, 37, 2}, {7, 300, 1}, {1000, 1000, 2}}) {
    INFO("tiles " << tiles.rows << " x " << tiles.cols << ", threads " << tiles.threads);
    const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 10, tiles);
    require_identical(means.source, first.source);
    require_identical(means.target, first.target);
    require_identical(termalign::select_csls_candidates(X, Z, means, selection, tiles), first_kept);
  }
}

namespace {
// The number before '/' in a progress line "what: done/total (...)".
std::size_t rows_done(const std::string& line) {
  const std::size_t colon = line.rfind(": ", line.find('/'));
  return std::stoul(line.substr(colon + 2));
}
}  // namespace

TEST_CASE("Progress lines: done of total, percent, elapsed and time left", "[scoring]") {
  CapturedLog log;
  termalign::Progress progress("counting", 4, std::chrono::milliseconds(0));
  progress.advance();
  progress.advance(3);
  const auto lines = log.lines_with("info", "counting: ");
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Catch::StartsWith("counting: 1/4 (25%, ") && Catch::Contains(" s left)"));
  CHECK_THAT(lines[1], Catch::StartsWith("counting: 4/4 (100%, ") && !Catch::Contains("left"));
  // A long interval: nothing until it has passed.
  termalign::Progress quiet("quiet", 10, std::chrono::hours(1));
  quiet.advance(10);
  CHECK(log.lines_with("info", "quiet").empty());
}

TEST_CASE("A scoring pass logs its progress in rows when it lasts", "[scoring]") {
  const Matrix X = random_unit_rows(300, 16, 41), Z = random_unit_rows(257, 16, 42);
  const SelectionOptions selection{5, 0, 0};
  for (const int threads : {1, 2}) {
    INFO(threads << " threads");
    const TileOptions tiles{48, 96, threads};
    {
      // The default interval (5 s): this pass is too short to log.
      CapturedLog log;
      termalign::csls_select(X, Z, 3, selection, tiles);
      CHECK(log.lines_with("info", "CSLS one pass").empty());
    }
    const ProgressInterval every_step(std::chrono::milliseconds(0));
    CapturedLog log;
    termalign::csls_select(X, Z, 3, selection, tiles);
    // A line for each of the 7 row blocks of 48 rows (the last of 12), done rising to all 300 rows.
    const auto lines = log.lines_with("info", "CSLS one pass, rows of 300 x 257 terms: ");
    REQUIRE(lines.size() == 7);
    for (std::size_t i = 1; i < lines.size(); ++i) CHECK(rows_done(lines[i]) > rows_done(lines[i - 1]));
    CHECK_THAT(lines.back(), Catch::StartsWith("CSLS one pass, rows of 300 x 257 terms: 300/300 (100%"));
    // The sampled floors pass before it (every 8th row: 38 rows) is named too.
    CHECK_THAT(log.lines_with("info", "nearest neighbours, rows of 257 x 38 terms: ").back(),
               Catch::Contains("257/257 (100%"));
  }
}

TEST_CASE("empty lists give empty results", "[scoring]") {
  const Matrix empty(0, 5), Z = random_unit_rows(7, 5, 17);
  const NeighbourhoodMeans means = termalign::neighbourhood_means(empty, Z, 3, {3, 4, 2});
  REQUIRE(means.source.size() == 0);
  REQUIRE(means.target.size() == 7);
  REQUIRE((means.target.array() == 0).all());  // no neighbour at all
  const NeighbourhoodMeans flipped = termalign::neighbourhood_means(Z, empty, 3, {3, 4, 2});
  REQUIRE(flipped.source.size() == 7);
  REQUIRE(flipped.target.size() == 0);
  REQUIRE(termalign::knn_mean_similarity(empty, Z, 3, {}).size() == 0);
  REQUIRE(termalign::select_csls_candidates(empty, Z, means, {3, 1, 0}, {3, 4, 2}).empty());
  REQUIRE(termalign::select_csls_candidates(Z, empty, flipped, {0, 0, 5}, {3, 4, 2}).empty());
  REQUIRE(termalign::select_csls_candidates(empty, empty, termalign::neighbourhood_means(empty, empty, 1, {}),
                                            {3, 0, 0}, {})
              .empty());
}

TEST_CASE("bad scoring options are usage errors", "[scoring]") {
  const Matrix X = random_unit_rows(4, 3, 18), Z = random_unit_rows(5, 3, 19);
  const auto is_usage = [](const termalign::Error& e) { return e.kind() == termalign::ErrorKind::usage; };
  REQUIRE_THROWS_MATCHES(termalign::neighbourhood_means(X, Z, 0, {}), termalign::Error,
                         Catch::Predicate<termalign::Error>(is_usage));
  REQUIRE_THROWS_MATCHES(termalign::neighbourhood_means(X, Z, 3, {0, 4, 1}), termalign::Error,
                         Catch::Predicate<termalign::Error>(is_usage));
  const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 3, {});
  REQUIRE_THROWS_MATCHES(termalign::select_csls_candidates(X, Z, means, {0, 0, 0}, {}), termalign::Error,
                         Catch::Predicate<termalign::Error>(is_usage));
}

TEST_CASE("The one-pass CSLS selection equals the two passes bit for bit, whatever the pool size", "[scoring]") {
  // Small pools force rows to be rescored; large ones let the bound prove most rows; both paths must agree with
  // the two passes exactly (means and candidates), ties included.
  Matrix X = random_unit_rows(41, 5, 31), Z = random_unit_rows(37, 5, 32);
  X.row(30) = X.row(4);
  Z.row(25) = Z.row(7);
  std::size_t rescored_somewhere = 0, proved_somewhere = 0;
  for (int k : {1, 3}) {
    for (const SelectionOptions& selection :
         {SelectionOptions{1, 0, 0}, SelectionOptions{3, 0, 0}, SelectionOptions{4, 0, 25}}) {
      const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, k, kTilings[0]);
      const auto expected = termalign::select_csls_candidates(X, Z, means, selection, kTilings[0]);
      for (std::size_t pool : {1, 2, 4, 9, 37, 100}) {
        for (const TileOptions& tiles : kTilings) {
          CAPTURE(k, selection.top_m, selection.limit, pool, tiles.rows, tiles.cols, tiles.threads);
          const termalign::CslsSelection fused = termalign::csls_select(X, Z, k, selection, tiles, pool);
          REQUIRE(fused.means.source == means.source);
          REQUIRE(fused.means.target == means.target);
          REQUIRE(fused.candidates.size() == expected.size());
          for (std::size_t r = 0; r < expected.size(); ++r) {
            REQUIRE(fused.candidates[r].source == expected[r].source);
            REQUIRE(fused.candidates[r].target == expected[r].target);
            REQUIRE(fused.candidates[r].score == expected[r].score);
            REQUIRE(fused.candidates[r].cosine == expected[r].cosine);
          }
          if (fused.rescored_rows > 0) ++rescored_somewhere;
          if (pool < 37 && fused.rescored_rows < 41) ++proved_somewhere;
        }
      }
    }
  }
  REQUIRE(rescored_somewhere > 0);  // the exact fallback ran
  REQUIRE(proved_somewhere > 0);    // and the bound proved rows from a partial pool
}

TEST_CASE("The one-pass CSLS selection falls back to the two passes for other selections", "[scoring]") {
  const Matrix X = random_unit_rows(23, 5, 33), Z = random_unit_rows(31, 5, 34);
  const TileOptions tiles{4, 6, 2};
  for (const SelectionOptions& selection : {SelectionOptions{0, 0, 17}, SelectionOptions{4, 2, 0}}) {
    const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 3, tiles);
    const auto expected = termalign::select_csls_candidates(X, Z, means, selection, tiles);
    const auto fused = termalign::csls_select(X, Z, 3, selection, tiles, 2);
    REQUIRE(fused.rescored_rows == 0);
    require_same_pairs(fused.candidates, expected);
  }
}

TEST_CASE("csls_select's reverse lists: brute force of their two steps, exact when all sources fit", "[scoring]") {
  // Tiles of 16 x 32 over 150 x 170 rows: many tile borders on both sides; duplicated rows give exact ties.
  Matrix X = random_unit_rows(150, 12, 41), Z = random_unit_rows(170, 12, 42);
  X.row(149) = X.row(3);
  X.row(77) = X.row(3);
  const SelectionOptions selection{5, 0, 0};
  constexpr std::size_t kReverse = 4;
  constexpr int k = 3;
  const termalign::CslsSelection serial =
      termalign::csls_select(X, Z, k, selection, {16, 32, 1}, 0, termalign::single_process(), kReverse);
  REQUIRE(serial.has_reverse);
  // Brute force of the two steps: each target keeps its 2 kReverse sources by 2 x.z - e(x), e(x) the mean of x's
  // k largest similarities among every 16th target (ties: the lower source index); then their kReverse best by
  // CSLS with the pass's means.
  const auto brute_force = [&](const Matrix& sources, const termalign::CslsSelection& pass) {
    Eigen::VectorXf estimate(sources.rows());
    for (Eigen::Index i = 0; i < sources.rows(); ++i) {
      std::vector<float> sampled;
      for (Eigen::Index j = 0; j < Z.rows(); j += 16) sampled.push_back(sources.row(i).dot(Z.row(j)));
      std::sort(sampled.rbegin(), sampled.rend());
      estimate(i) = (sampled[0] + sampled[1] + sampled[2]) / 3;
    }
    std::vector<Candidate> expected;
    for (Eigen::Index j = 0; j < Z.rows(); ++j) {
      std::vector<Candidate> kept;
      for (Eigen::Index i = 0; i < sources.rows(); ++i) {
        const float cosine = sources.row(i).dot(Z.row(j));
        kept.push_back(
            {2 * cosine - estimate(i), cosine, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)});
      }
      std::sort(kept.begin(), kept.end(),
                [](const Candidate& a, const Candidate& b) { return ranks_before(a, b); });
      kept.resize(std::min<std::size_t>(2 * kReverse, kept.size()));
      for (Candidate& c : kept) c.score = 2 * c.cosine - pass.means.source(c.source) - pass.means.target(j);
      std::sort(kept.begin(), kept.end(),
                [](const Candidate& a, const Candidate& b) { return ranks_before(a, b); });
      kept.resize(std::min(kReverse, kept.size()));
      expected.insert(expected.end(), kept.begin(), kept.end());
    }
    return expected;
  };
  const auto require_same_lists = [](const std::vector<Candidate>& actual,
                                     const std::vector<Candidate>& expected) {
    REQUIRE(actual.size() == expected.size());
    for (std::size_t r = 0; r < expected.size(); ++r) {
      INFO("entry " << r);
      CHECK(actual[r].source == expected[r].source);
      CHECK(actual[r].target == expected[r].target);
      CHECK(actual[r].cosine == Approx(expected[r].cosine).margin(1e-5));
      CHECK(actual[r].score == Approx(expected[r].score).margin(1e-5));
    }
  };
  require_same_lists(serial.reverse, brute_force(X, serial));
  // The same bits on more threads and other tiles; the forward selection is unchanged by the lists.
  const termalign::CslsSelection without = termalign::csls_select(X, Z, k, selection, {16, 32, 1});
  CHECK_FALSE(without.has_reverse);
  require_identical(without.candidates, serial.candidates);
  for (const TileOptions tiles : {TileOptions{16, 32, 2}, TileOptions{48, 16, 3}}) {
    const termalign::CslsSelection other =
        termalign::csls_select(X, Z, k, selection, tiles, 0, termalign::single_process(), kReverse);
    require_identical(other.reverse, serial.reverse);
  }
  // With no more sources than the first step keeps, the lists are each target's exact best by CSLS.
  const Matrix few = X.topRows(2 * kReverse - 1);
  const termalign::CslsSelection small =
      termalign::csls_select(few, Z, k, selection, {16, 32, 2}, 0, termalign::single_process(), kReverse);
  const NeighbourhoodMeans exact = reference_means(few, Z, k);
  std::vector<Candidate> best;
  for (Eigen::Index j = 0; j < Z.rows(); ++j) {
    std::vector<Candidate> all;
    for (Eigen::Index i = 0; i < few.rows(); ++i) {
      const float cosine = few.row(i).dot(Z.row(j));
      all.push_back({2 * cosine - exact.source(i) - exact.target(j), cosine, static_cast<std::uint32_t>(i),
                     static_cast<std::uint32_t>(j)});
    }
    std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return ranks_before(a, b); });
    best.insert(best.end(), all.begin(), all.begin() + kReverse);
  }
  require_same_lists(small.reverse, best);
}

TEST_CASE("OpenBLAS cores without AVX2 are told from the others by name", "[scoring]") {
  using termalign::detail::blas_core_without_avx2;
  // What OpenBLAS reports on a CPU it does not recognise, and older families.
  CHECK(blas_core_without_avx2("Prescott"));
  CHECK(blas_core_without_avx2("Core2"));
  CHECK(blas_core_without_avx2("Sandybridge"));
  CHECK(blas_core_without_avx2("NEHALEM"));
  // Cores with AVX2 or AVX-512 kernels.
  for (const char* core : {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen", "Excavator"})
    CHECK_FALSE(blas_core_without_avx2(core));
  CHECK_FALSE(blas_core_without_avx2(""));
}
