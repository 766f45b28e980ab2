#include <Eigen/QR>
#include <catch2/catch.hpp>
#include <cstdio>
#include <random>

#include "termalign/error.h"
#include "termalign/mapping.h"

using namespace termalign;

namespace {
Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& generator) {
  std::normal_distribution<float> normal;
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = normal(generator);
  return m;
}

Matrix random_orthogonal(Eigen::Index d, std::mt19937& generator) {
  const Eigen::MatrixXd gaussian = random_matrix(d, d, generator).cast<double>();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian);
  return Matrix(Eigen::MatrixXd(qr.householderQ()).cast<float>());
}
}  // namespace

TEST_CASE("Procrustes recovers a known rotation", "[mapping]") {
  std::mt19937 generator(42);
  for (Eigen::Index d : {3, 8, 50}) {
    const Matrix X = random_matrix(4 * d + 7, d, generator);
    const Matrix R = random_orthogonal(d, generator);
    const Matrix Z = X * R;
    const Matrix W = procrustes(X, Z);
    CAPTURE(d);
    CHECK((W - R).norm() < 1e-4);
    CHECK((W.transpose() * W - Matrix::Identity(d, d)).norm() < 1e-4);
  }
}

TEST_CASE("Procrustes is orthogonal on noisy, unrelated data", "[mapping]") {
  std::mt19937 generator(7);
  const Matrix X = random_matrix(40, 6, generator), Z = random_matrix(40, 6, generator);
  const Matrix W = procrustes(X, Z);
  CHECK((W.transpose() * W - Matrix::Identity(6, 6)).norm() < 1e-4);
  // Among orthogonal maps, W minimises ||XW - Z||: a random rotation does no better.
  const Matrix R = random_orthogonal(6, generator);
  CHECK((X * W - Z).norm() <= (X * R - Z).norm() + 1e-4);
}

TEST_CASE("Normalisations and their reuse on new vectors", "[mapping]") {
  Matrix vectors(3, 2);
  vectors << 3, 4, 0, 2, 1, 0;
  SECTION("unit") {
    Normalizer normalizer{Normalization::unit, {}};
    Matrix copy = vectors;
    normalizer.fit_apply(copy);
    CHECK(copy(0, 0) == Approx(0.6f));
    CHECK(copy(0, 1) == Approx(0.8f));
    CHECK(copy.row(1).norm() == Approx(1.0f));
  }
  SECTION("center") {
    Normalizer normalizer{Normalization::center, {}};
    Matrix copy = vectors;
    normalizer.fit_apply(copy);
    CHECK(copy.colwise().sum().norm() < 1e-5);
    RowVector fresh(2);
    fresh << 4, 4;
    normalizer.apply(fresh);
    CHECK(fresh(0) == Approx(4 - 4.0f / 3));
    CHECK(fresh(1) == Approx(4 - 2.0f));
  }
  SECTION("unit-center-unit: rows unit, and apply() on a row equals what fit_apply did to it") {
    Normalizer normalizer{Normalization::unit_center_unit, {}};
    Matrix copy = vectors;
    normalizer.fit_apply(copy);
    for (Eigen::Index i = 0; i < copy.rows(); ++i) CHECK(copy.row(i).norm() == Approx(1.0f));
    RowVector first = vectors.row(0);
    normalizer.apply(first);
    CHECK((first - copy.row(0)).norm() < 1e-6);
    Matrix again = vectors;
    normalizer.apply_rows(again);
    CHECK((again - copy).norm() < 1e-6);
  }
}

TEST_CASE("A mapping saved and loaded back is the same", "[mapping]") {
  std::mt19937 generator(3);
  Mapping mapping;
  mapping.source_transform = random_orthogonal(5, generator);
  mapping.target_transform = random_matrix(5, 3, generator);
  mapping.source_transform = mapping.source_transform.leftCols(3).eval();
  mapping.source.kind = mapping.target.kind = Normalization::unit_center_unit;
  mapping.source.mean = random_matrix(1, 5, generator);
  mapping.target.mean = random_matrix(1, 5, generator);
  const std::string path = TERMALIGN_BINARY_DIR "/test_mapping_roundtrip.txt";
  save_mapping(path, mapping);
  const Mapping loaded = load_mapping(path);
  CHECK(loaded.source.kind == Normalization::unit_center_unit);
  CHECK(loaded.source_transform == mapping.source_transform);
  CHECK(loaded.target_transform == mapping.target_transform);
  CHECK(loaded.source.mean == mapping.source.mean);
  CHECK(loaded.target.mean == mapping.target.mean);
  std::remove(path.c_str());
}

TEST_CASE("A malformed mapping file is an input error with its line", "[mapping]") {
  const std::string path = TERMALIGN_BINARY_DIR "/test_mapping_bad.txt";
  std::FILE* file = std::fopen(path.c_str(), "w");
  std::fputs("termalign-mapping 1\ndim 2 2\nnormalization unit\n0 0\n0 0\n1 0\n0 x\n", file);
  std::fclose(file);
  CHECK_THROWS_WITH(load_mapping(path), Catch::Contains("test_mapping_bad.txt:7"));
  std::remove(path.c_str());
}
