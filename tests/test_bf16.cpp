// The bf16 scoring (TileOptions::precision): its rounding and error bound, its exact rescoring, and every pass
// against the fp32 pass bit for bit and against brute force, on small lists with engineered near-ties across many
// tile borders; `auto` falls back to fp32 where the CPU has no bf16.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scoring/bf16_product.h"
#include "scoring/scoring.h"
#include "scoring_helpers.h"
#include "skip.h"
#include "termalign/config.h"
#include "termalign/error.h"

using termalign::Candidate;
using termalign::Matrix;
using termalign::NeighbourhoodMeans;
using termalign::Precision;
using termalign::SelectionOptions;
using termalign::TileOptions;
using termalign::testing::random_unit_rows;
using termalign::testing::reference_means;
using termalign::testing::require_identical;
namespace detail = termalign::detail;

namespace {

// Near-ties bf16 cannot tell apart: rows that are copies of others (exact ties) or copies moved by less than a
// bf16 step (1e-4 relative), so that their similarities differ in the last few fp32 bits only; placed far from
// their originals, across tile borders.
void add_near_ties(Matrix& M, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const Eigen::Index n = M.rows();
  for (Eigen::Index r = 0; r + 1 < n / 3; r += 3) {
    const Eigen::Index copy = n - 1 - r;
    M.row(copy) = M.row(r);
    if (r % 2 == 0) {
      for (Eigen::Index c = 0; c < M.cols(); ++c) M(copy, c) += 1e-4f * normal(generator) * std::abs(M(copy, c));
      M.row(copy).normalize();
    }
  }
}

TileOptions with_precision(TileOptions tiles, Precision precision) {
  tiles.precision = precision;
  return tiles;
}

// Whether oneDNN multiplies bf16 on this CPU at all (natively or emulated); where it cannot, the bf16 passes are
// not tested (and `auto` never asks for them).
bool bf16_products_available() {
  try {
    detail::Bf16Product product;
    const std::vector<detail::Bf16> a(16, detail::to_bf16(1.0f));
    std::vector<float> out(4);
    product(a.data(), 2, a.data(), 2, 8, out.data());
    return out[0] == 8.0f;
  } catch (const std::exception&) {
    return false;
  }
}

// Sets an environment variable for the scope (tests run one at a time).
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnvironment() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace

TEST_CASE("bf16 rounding: nearest even, NaN kept, the vector path equal to the scalar one", "[bf16]") {
  REQUIRE(detail::from_bf16(detail::to_bf16(1.0f)) == 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even one, 1; 1 + 3 2^-8 to 1 + 2^-6.
  REQUIRE(detail::from_bf16(detail::to_bf16(1.0f + std::ldexp(1.0f, -8))) == 1.0f);
  REQUIRE(detail::from_bf16(detail::to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))) == 1.0f + std::ldexp(1.0f, -6));
  REQUIRE(std::isnan(detail::from_bf16(detail::to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  std::mt19937 generator(3);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<float> values(1000);
  for (float& value : values) {
    const std::uint32_t b = bits(generator);
    std::memcpy(&value, &b, sizeof value);  // any bit pattern: NaNs, infinities, subnormals
  }
  values[5] = std::numeric_limits<float>::denorm_min();
  std::vector<detail::Bf16> vector_path(values.size());
  detail::to_bf16(values.data(), values.size(), vector_path.data());
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO("value " << i);
    REQUIRE(vector_path[i] == detail::to_bf16(values[i]));
  }
}

TEST_CASE("bf16 products stay within the proven bound of the fp32 similarities", "[bf16]") {
  if (!bf16_products_available()) {
    termalign_tests::skip_test("oneDNN has no bf16 matmul on this CPU (termalign --version names the precision)");
    return;
  }
  for (const int dim : {7, 64, 300}) {
    Matrix X = random_unit_rows(37, dim, 5), Z = random_unit_rows(53, dim, 6);
    X.row(3) *= 3.0f;  // a row that is not of unit length
    const float bound = detail::bf16_error_bound(detail::rounding_norms(X, 1), detail::rounding_norms(Z, 1), dim);
    std::vector<detail::Bf16> x(X.size()), z(Z.size());
    detail::to_bf16(X.data(), x.size(), x.data());
    detail::to_bf16(Z.data(), z.size(), z.data());
    std::vector<float> approximate(X.rows() * Z.rows()), exact(X.rows() * Z.rows());
    detail::Bf16Product product;
    product(x.data(), X.rows(), z.data(), Z.rows(), dim, approximate.data());
    double largest = 0;
    for (Eigen::Index j = 0; j < Z.rows(); ++j)
      for (Eigen::Index i = 0; i < X.rows(); ++i) {
        const double fp32 = X.row(i).cast<double>().dot(Z.row(j).cast<double>());
        largest = std::max(largest, std::abs(approximate[j * X.rows() + i] - fp32));
      }
    INFO("d = " << dim << ": largest error " << largest << ", bound " << bound);
    REQUIRE(largest <= bound);
    REQUIRE(largest > 0);    // bf16 did round
    REQUIRE(bound < 0.05f);  // and the bound is of bf16's size (3 times a unit row's)
  }
}

TEST_CASE("ordered dot products: one chain of fused multiply-adds in the order of the dimensions", "[bf16]") {
  // 37 rows: two blocks of 16 and a rest; dimensions below, at and across multiples of 16.
  for (const int dim : {1, 15, 16, 17, 300}) {
    const Matrix X = random_unit_rows(1, dim, 7), Z = random_unit_rows(37, dim, 8);
    std::vector<const float*> rows;
    for (Eigen::Index j = 0; j < Z.rows(); ++j) rows.push_back(Z.row(j).data());
    std::vector<float> dots(rows.size());
    detail::ordered_dots(X.data(), rows.data(), rows.size(), dim, dots.data());
    for (std::size_t j = 0; j < rows.size(); ++j) {
      float chain = 0;
      for (int k = 0; k < dim; ++k) chain = std::fma(X(0, k), rows[j][k], chain);
      INFO("d = " << dim << ", row " << j);
      REQUIRE(dots[j] == chain);
    }
  }
}

TEST_CASE("bf16 passes equal the fp32 passes bit for bit, near-ties across tile borders", "[bf16]") {
  if (!bf16_products_available()) {
    termalign_tests::skip_test("oneDNN has no bf16 matmul on this CPU (termalign --version names the precision)");
    return;
  }
  // d = 300 (bf16's error at its real size) and tiles of 7 to 64 rows over 150 x 170 rows.
  Matrix X = random_unit_rows(150, 300, 51), Z = random_unit_rows(170, 300, 52);
  add_near_ties(X, 53);
  add_near_ties(Z, 54);
  const std::vector<TileOptions> tilings = {{7, 11, 1}, {16, 32, 2}, {48, 64, 2}, {64, 17, 1}, {1000, 1000, 2}};
  for (const int k : {1, 3, 10}) {
    const NeighbourhoodMeans reference = reference_means(X, Z, k);
    const TileOptions first = with_precision(tilings[0], Precision::fp32);
    const NeighbourhoodMeans fp32 = termalign::neighbourhood_means(X, Z, k, first);
    for (Eigen::Index i = 0; i < X.rows(); ++i)
      REQUIRE(fp32.source[i] == Approx(reference.source[i]).margin(1e-5));
    for (Eigen::Index j = 0; j < Z.rows(); ++j)
      REQUIRE(fp32.target[j] == Approx(reference.target[j]).margin(1e-5));
    const SelectionOptions top{5, 0, 0}, mutual{4, 3, 0}, limited{3, 0, 200};
    const auto fp32_top = termalign::select_csls_candidates(X, Z, fp32, top, first);
    const auto fp32_mutual = termalign::select_csls_candidates(X, Z, fp32, mutual, first);
    const auto fp32_limited = termalign::select_csls_candidates(X, Z, fp32, limited, first);
    const auto fp32_fused = termalign::csls_select(X, Z, k, top, first, 7, termalign::single_process(), 4);
    for (const TileOptions& tiling : tilings) {
      CAPTURE(k, tiling.rows, tiling.cols, tiling.threads);
      const TileOptions bf16 = with_precision(tiling, Precision::bf16);
      const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, k, bf16);
      require_identical(means.source, fp32.source);
      require_identical(means.target, fp32.target);
      require_identical(termalign::knn_mean_similarity(Z, X, k, bf16),
                        termalign::knn_mean_similarity(Z, X, k, first));
      require_identical(termalign::select_csls_candidates(X, Z, means, top, bf16), fp32_top);
      require_identical(termalign::select_csls_candidates(X, Z, means, mutual, bf16), fp32_mutual);
      require_identical(termalign::select_csls_candidates(X, Z, means, limited, bf16), fp32_limited);
      for (const std::size_t pool : {std::size_t{7}, std::size_t{0}}) {
        const auto fused = termalign::csls_select(X, Z, k, top, bf16, pool, termalign::single_process(), 4);
        const auto expected = pool == 7
                                  ? fp32_fused
                                  : termalign::csls_select(X, Z, k, top, first, 0, termalign::single_process(), 4);
        require_identical(fused.means.source, expected.means.source);
        require_identical(fused.means.target, expected.means.target);
        require_identical(fused.candidates, expected.candidates);
        require_identical(fused.reverse, expected.reverse);
        REQUIRE(fused.rescored_rows == expected.rescored_rows);
      }
    }
  }
}

TEST_CASE("bf16 passes on rows far from unit length and on many equal rows", "[bf16]") {
  if (!bf16_products_available()) {
    termalign_tests::skip_test("oneDNN has no bf16 matmul on this CPU (termalign --version names the precision)");
    return;
  }
  // Scaled rows widen the bound; 40 equal target rows make every window hold far more items than it keeps.
  Matrix X = random_unit_rows(60, 33, 61), Z = random_unit_rows(90, 33, 62);
  X.row(5) *= 40.0f;
  for (Eigen::Index j = 30; j < 70; ++j) Z.row(j) = Z.row(2);
  const SelectionOptions top{6, 0, 0};
  for (const TileOptions& tiling : std::vector<TileOptions>{{5, 9, 2}, {48, 48, 1}}) {
    CAPTURE(tiling.rows, tiling.cols, tiling.threads);
    const TileOptions fp32 = with_precision(tiling, Precision::fp32),
                      bf16 = with_precision(tiling, Precision::bf16);
    const auto expected = termalign::csls_select(X, Z, 10, top, fp32, 0, termalign::single_process(), 5);
    const auto actual = termalign::csls_select(X, Z, 10, top, bf16, 0, termalign::single_process(), 5);
    require_identical(actual.means.source, expected.means.source);
    require_identical(actual.means.target, expected.means.target);
    require_identical(actual.candidates, expected.candidates);
    require_identical(actual.reverse, expected.reverse);
  }
}

TEST_CASE("auto precision: bf16 where the CPU has it, fp32 otherwise", "[bf16]") {
  {
    ScopedEnvironment no("TERMALIGN_CPU_BF16", "0");
    REQUIRE_FALSE(termalign::cpu_has_bf16());
    REQUIRE(termalign::resolve_precision(Precision::automatic) == Precision::fp32);
    REQUIRE(termalign::describe_precision(Precision::automatic).rfind("fp32 (auto", 0) == 0);
    REQUIRE(termalign::resolve_precision(Precision::bf16) == Precision::bf16);  // asked for: kept
    // The fp32 path on a CPU without bf16: the passes run, as fp32.
    const Matrix X = random_unit_rows(20, 8, 71), Z = random_unit_rows(30, 8, 72);
    TileOptions tiles{4, 6, 2};
    tiles.precision = Precision::automatic;
    const NeighbourhoodMeans automatic = termalign::neighbourhood_means(X, Z, 3, tiles);
    require_identical(automatic.source, termalign::neighbourhood_means(X, Z, 3, {4, 6, 2}).source);
  }
  {
    ScopedEnvironment yes("TERMALIGN_CPU_BF16", "1");
    const std::string described = termalign::describe_precision(Precision::automatic);
    if (described.find("no AVX-512 code") != std::string::npos) {  // a portable build: auto keeps fp32
      REQUIRE(termalign::resolve_precision(Precision::automatic) == Precision::fp32);
    } else {
      REQUIRE(termalign::resolve_precision(Precision::automatic) == Precision::bf16);
      REQUIRE(described.rfind("bf16", 0) == 0);
    }
  }
  {
    ScopedEnvironment bad("TERMALIGN_CPU_BF16", "maybe");
    REQUIRE_THROWS_AS(termalign::cpu_has_bf16(), termalign::Error);
  }
  REQUIRE(termalign::resolve_precision(Precision::fp32) == Precision::fp32);
  REQUIRE(termalign::parse_precision("auto") == Precision::automatic);
  REQUIRE(termalign::parse_precision("bf16") == Precision::bf16);
  REQUIRE(std::string(termalign::to_string(Precision::fp32)) == "fp32");
  REQUIRE_THROWS_AS(termalign::parse_precision("fp16"), termalign::Error);
}
