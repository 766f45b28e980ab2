// Helpers of the scoring tests: random unit rows, brute-force neighbourhood means, and bit-for-bit comparisons of
// results.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "scoring/scoring.h"
#include "termalign/embeddings.h"

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

// Plain dot products, one by one: the references share no code with the kernels.
inline std::vector<std::vector<float>> all_similarities(const Matrix& X, const Matrix& Z) {
  std::vector<std::vector<float>> s(X.rows(), std::vector<float>(Z.rows()));
  for (int i = 0; i < X.rows(); ++i)
    for (int j = 0; j < Z.rows(); ++j) {
      float dot = 0;
      for (int c = 0; c < X.cols(); ++c) dot += X(i, c) * Z(j, c);
      s[i][j] = dot;
    }
  return s;
}

inline float mean_of_largest(std::vector<float> values, int k) {
  if (values.empty()) return 0.0f;
  std::sort(values.begin(), values.end(), [](float a, float b) { return a > b; });
  const std::size_t count = std::min<std::size_t>(k, values.size());
  double sum = 0;
  for (std::size_t i = 0; i < count; ++i) sum += values[i];
  return static_cast<float>(sum / count);
}

inline NeighbourhoodMeans reference_means(const Matrix& X, const Matrix& Z, int k) {
  const auto s = all_similarities(X, Z);
  NeighbourhoodMeans means;
  means.source.resize(X.rows());
  means.target.resize(Z.rows());
  for (int i = 0; i < X.rows(); ++i) means.source[i] = mean_of_largest(s[i], k);
  for (int j = 0; j < Z.rows(); ++j) {
    std::vector<float> column;
    for (int i = 0; i < X.rows(); ++i) column.push_back(s[i][j]);
    means.target[j] = mean_of_largest(column, k);
  }
  return means;
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
