#include "scoring/rescoring.h"

#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>

#include "scoring/bf16_product.h"
#include "scoring/kernel.h"
#include "scoring/scoring.h"
#include "termalign/logging.h"

namespace termalign::detail {
namespace {

// Whether ordered_dots gives the values of the fp32 tiles bit for bit with the tile kernel in use (both sum a
// similarity as one chain of fused multiply-adds in the order of the dimensions, OpenBLAS's AVX-512 kernels and
// Eigen's with FMA alike): checked once per kernel on random rows of several dimensions against
// similarity_product. Where it does not, the exact values come from padded products (ExactValues).
bool ordered_dots_match_tiles() {
  static std::mutex mutex;
  static std::map<std::string, bool> checked;  // by similarity_kernel()
  const std::string kernel = similarity_kernel();
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = checked.find(kernel);
  if (found != checked.end()) return found->second;
  std::mt19937 generator(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  bool match = true;
  for (const Eigen::Index dim : {1, 5, 16, 17, 64, 100, 300, 301}) {
    Matrix lhs(48, dim), rhs(96, dim);
    for (Eigen::Index r = 0; r < lhs.rows(); ++r)
      for (Eigen::Index c = 0; c < dim; ++c) lhs(r, c) = normal(generator);
    for (Eigen::Index r = 0; r < rhs.rows(); ++r)
      for (Eigen::Index c = 0; c < dim; ++c) rhs(r, c) = normal(generator);
    std::vector<float> product(48 * 96), dots(96);
    similarity_product(lhs.data(), 48, rhs.data(), 96, dim, product.data());
    std::vector<const float*> others(96);
    for (Eigen::Index r = 0; r < 96; ++r) others[static_cast<std::size_t>(r)] = rhs.row(r).data();
    for (Eigen::Index i = 0; i < 48 && match; ++i) {
      ordered_dots(lhs.row(i).data(), others.data(), others.size(), dim, dots.data());
      for (std::size_t j = 0; j < 96; ++j)
        match = match && dots[j] == product[j * 48 + static_cast<std::size_t>(i)];
    }
  }
  logger().debug("exact values of the bf16 passes: {} ({})",
                 match ? "ordered dot products" : "padded tile products", kernel);
  checked.emplace(kernel, match);
  return match;
}

// The rows of M listed in `rows`, then zero rows up to `padded`.
void gather(const Matrix& M, const std::vector<std::uint32_t>& rows, std::size_t padded,
            std::vector<float, Eigen::aligned_allocator<float>>& out) {
  const std::size_t dim = static_cast<std::size_t>(M.cols());
  out.assign(padded * dim, 0.0f);
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy(M.data() + rows[r] * dim, M.data() + (rows[r] + 1) * dim, out.data() + r * dim);
}

}  // namespace

Bf16Widths bf16_widths(const Matrix& X, const Matrix& Z, int threads) {
  const RoundingNorms x = rounding_norms(X, threads), z = rounding_norms(Z, threads);
  const float bound = bf16_error_bound(x, z, X.cols());
  const float margin = 1e-5f * static_cast<float>(std::max(1.0, x.row * z.row));
  logger().debug("bf16 tiles of {} x {} rows: similarities within {:.3g} of fp32", X.rows(), Z.rows(), bound);
  return Bf16Widths{2 * bound + margin, 4 * bound + margin};
}

ExactValues::ExactValues() : ordered_(ordered_dots_match_tiles()) {}

void ExactValues::compute(const Matrix& side, std::size_t fixed, const Matrix& other_side,
                          const std::vector<std::uint32_t>& others, bool fixed_is_source,
                          std::vector<float>& values) {
  values.resize(others.size());
  if (others.empty()) return;
  const std::size_t dim = static_cast<std::size_t>(side.cols());
  if (ordered_) {
    pointers_.resize(others.size());
    for (std::size_t t = 0; t < others.size(); ++t) pointers_[t] = other_side.data() + others[t] * dim;
    ordered_dots(side.data() + fixed * dim, pointers_.data(), others.size(), side.cols(), values.data());
    return;
  }
  const std::vector<std::uint32_t> one{static_cast<std::uint32_t>(fixed)};
  const std::vector<std::uint32_t>& lhs_rows = fixed_is_source ? one : others;
  const std::vector<std::uint32_t>& rhs_rows = fixed_is_source ? others : one;
  const Matrix& X = fixed_is_source ? side : other_side;
  const Matrix& Z = fixed_is_source ? other_side : side;
  const std::size_t lhs_padded = round_up(lhs_rows.size(), kKernelMultiple);
  const std::size_t rhs_padded = round_up(rhs_rows.size(), kKernelMultiple);
  gather(X, lhs_rows, lhs_padded, lhs_);
  gather(Z, rhs_rows, rhs_padded, rhs_);
  if (out_.size() < lhs_padded * rhs_padded) out_.resize(lhs_padded * rhs_padded);
  similarity_product(lhs_.data(), static_cast<Eigen::Index>(lhs_padded), rhs_.data(),
                     static_cast<Eigen::Index>(rhs_padded), side.cols(), out_.data());
  for (std::size_t t = 0; t < others.size(); ++t) values[t] = fixed_is_source ? out_[t * lhs_padded] : out_[t];
}

void sort_unique(std::vector<std::uint32_t>& indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
}

std::size_t column_spare(std::size_t keep, std::size_t columns) {
  constexpr std::size_t kBudget = std::size_t{64} << 20;  // bytes of windows beyond which spares shrink
  const std::size_t affordable = kBudget / (std::max<std::size_t>(columns, 1) * sizeof(Windows::Entry));
  const std::size_t least = keep / 2 + 8, most = 2 * keep + 32;
  return std::min(most, std::max(least, affordable > keep ? affordable - keep : 0));
}

void raise_rows_from_tile(const Tile& tile, float factor, const float* offsets, const float* row_offsets,
                          Windows& windows) {
  const std::size_t keep = windows.keep();
  const auto cols = static_cast<std::size_t>(tile.rows()), rows = static_cast<std::size_t>(tile.cols());
  if (keep == 0 || cols < keep) return;
  thread_local std::vector<float> maxima, smallest;  // per row of the block
  smallest.assign(rows, std::numeric_limits<float>::infinity());
  maxima.resize(rows);
  for (std::size_t group = 0; group < keep; ++group) {
    std::fill(maxima.begin(), maxima.end(), -std::numeric_limits<float>::infinity());
    for (std::size_t j = cols * group / keep; j < cols * (group + 1) / keep; ++j) {
      const float* values = tile.row(static_cast<Eigen::Index>(j)).data();
      const float offset = offsets == nullptr ? 0.0f : offsets[j];
      float* m = maxima.data();
      for (std::size_t i = 0; i < rows; ++i) m[i] = std::max(m[i], factor * values[i] - offset);
    }
    for (std::size_t i = 0; i < rows; ++i) smallest[i] = std::min(smallest[i], maxima[i]);
  }
  for (std::size_t i = 0; i < rows; ++i)
    windows.raise(i, smallest[i] - (row_offsets == nullptr ? 0.0f : row_offsets[i]));
}

float column_bound_from_tile(const float* values, std::size_t rows, float factor, const float* offsets,
                             std::size_t keep) {
  if (keep == 0 || rows < keep) return -std::numeric_limits<float>::infinity();
  float smallest = std::numeric_limits<float>::infinity();
  for (std::size_t group = 0; group < keep; ++group) {
    float largest = -std::numeric_limits<float>::infinity();
    for (std::size_t i = rows * group / keep; i < rows * (group + 1) / keep; ++i)
      largest = std::max(largest, factor * values[i] - (offsets == nullptr ? 0.0f : offsets[i]));
    smallest = std::min(smallest, largest);
  }
  return smallest;
}

}  // namespace termalign::detail
