#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "captured_log.h"
#include "util/spilled_matrix.h"

using termalign::Matrix;
using termalign::detail::SpilledMatrix;

namespace {

Matrix random_matrix(Eigen::Index rows, Eigen::Index cols) {
  std::mt19937 generator(5);
  std::normal_distribution<float> normal;
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(generator);
  return m;
}

}  // namespace

TEST_CASE("a spilled matrix is freed, leaves no file and comes back bit for bit", "[spill]") {
  const std::filesystem::path folder = std::filesystem::path(TERMALIGN_BINARY_DIR) / "test_spill_outputs";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const Matrix original = random_matrix(1001, 37);
  Matrix matrix = original;
  SpilledMatrix spill;
  REQUIRE(spill.spill(matrix, folder.string(), "test rows"));
  CHECK(spill.spilled());
  CHECK(matrix.size() == 0);
  CHECK(std::filesystem::is_empty(folder));  // unlinked at once
  spill.restore(matrix);
  CHECK_FALSE(spill.spilled());
  REQUIRE(matrix.rows() == original.rows());
  REQUIRE(matrix.cols() == original.cols());
  CHECK(std::memcmp(matrix.data(), original.data(), sizeof(float) * static_cast<std::size_t>(matrix.size())) == 0);
  spill.restore(matrix);  // nothing spilled: unchanged
  CHECK(matrix.rows() == original.rows());
}

TEST_CASE("a matrix that cannot be spilled stays in memory, with a warning naming the folder", "[spill]") {
  const std::string missing = std::string(TERMALIGN_BINARY_DIR) + "/no-such-folder/below";
  Matrix matrix = random_matrix(10, 4);
  const Matrix original = matrix;
  SpilledMatrix spill;
  const CapturedLog log;
  CHECK_FALSE(spill.spill(matrix, missing, "test rows"));
  CHECK_FALSE(spill.spilled());
  CHECK(matrix == original);
  CHECK(log.warnings_with("test rows stay in memory: no temporary file in " + missing) == 1);
}
