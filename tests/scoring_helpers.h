// Helpers of the scoring tests: random unit rows, and bit-for-bit comparisons of results.
#pragma once

#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "termalign/embeddings.h"
#include "termalign/scoring.h"

namespace termalign::testing {

// `rows` rows of `dim` standard normal values, each scaled to unit length (seeded).
inline Matrix random_unit_rows(int rows, int dim, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix M(rows, dim);
  for (int i = 0; i < rows; ++i) {
    for (int c = 0; c < dim; ++c) M(i, c) = normal(generator);
    M.row(i).normalize();
  }
  return M;
}

inline void require_identical(const std::vector<Candidate>& a, const std::vector<Candidate>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(a[r].source == b[r].source);
    REQUIRE(a[r].target == b[r].target);
    REQUIRE(a[r].score == b[r].score);
    REQUIRE(a[r].cosine == b[r].cosine);
  }
}

inline void require_identical(const Eigen::VectorXf& a, const Eigen::VectorXf& b) {
  REQUIRE(a.size() == b.size());
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    INFO("entry " << i);
    REQUIRE(a[i] == b[i]);
  }
}

}  // namespace termalign::testing
