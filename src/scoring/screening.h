// What the passes do with each tile: compute keys of the similarities and find, a chunk at a time, the few that
// reach a list's bound (most do not), with masks instead of a branch per value.
#pragma once

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "scoring/tiles.h"

namespace termalign::detail {

// The float expressions of the keys, shared by the fp32 passes, the bf16 passes' screening and their exact
// rescoring, so that a rescored key has the fp32 pass's bits: 2 x.z - c (the pools' and the targets' lists), and
// CSLS, 2 x.z - r_T(x) - r_S(z).
inline float doubled_minus(float similarity, float offset) { return 2.0f * similarity - offset; }
inline float csls_score(float similarity, float source_mean, float target_mean) {
  return 2.0f * similarity - source_mean - target_mean;
}

// Tile rows are screened in chunks of kChunk values: one mask per chunk and structure (which values reach its
// bounds), then offers only for the set bits, so a chunk with nothing to offer costs a few vector instructions and
// one with entrants no hard-to-predict branch per value.
constexpr Eigen::Index kChunk = 16;

// Bit t is set when values[t] >= bounds[t] (t < n <= kChunk).
inline std::uint32_t reaching(const float* values, Eigen::Index n, const float* bounds) {
#if defined(__AVX512F__)
  if (n == kChunk) return _mm512_cmp_ps_mask(_mm512_loadu_ps(values), _mm512_loadu_ps(bounds), _CMP_GE_OQ);
#elif defined(__AVX__)
  if (n == kChunk) {
    const auto low = _mm256_cmp_ps(_mm256_loadu_ps(values), _mm256_loadu_ps(bounds), _CMP_GE_OQ);
    const auto high = _mm256_cmp_ps(_mm256_loadu_ps(values + 8), _mm256_loadu_ps(bounds + 8), _CMP_GE_OQ);
    return static_cast<std::uint32_t>(_mm256_movemask_ps(low)) |
           static_cast<std::uint32_t>(_mm256_movemask_ps(high)) << 8;
  }
#elif defined(__SSE2__)
  if (n == kChunk) {
    std::uint32_t mask = 0;
    for (int q = 0; q < kChunk / 4; ++q)
      mask |= static_cast<std::uint32_t>(
                  _mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(values + 4 * q), _mm_loadu_ps(bounds + 4 * q))))
              << (4 * q);
    return mask;
  }
#endif
  std::uint32_t mask = 0;
  for (Eigen::Index t = 0; t < n; ++t) mask |= static_cast<std::uint32_t>(values[t] >= bounds[t]) << t;
  return mask;
}

// Bit t is set when values[t] >= bound (t < n <= kChunk).
inline std::uint32_t reaching(const float* values, Eigen::Index n, float bound) {
#if defined(__AVX512F__)
  if (n == kChunk) return _mm512_cmp_ps_mask(_mm512_loadu_ps(values), _mm512_set1_ps(bound), _CMP_GE_OQ);
#elif defined(__AVX__)
  if (n == kChunk) {
    const auto limit = _mm256_set1_ps(bound);
    const auto low = _mm256_cmp_ps(_mm256_loadu_ps(values), limit, _CMP_GE_OQ);
    const auto high = _mm256_cmp_ps(_mm256_loadu_ps(values + 8), limit, _CMP_GE_OQ);
    return static_cast<std::uint32_t>(_mm256_movemask_ps(low)) |
           static_cast<std::uint32_t>(_mm256_movemask_ps(high)) << 8;
  }
#elif defined(__SSE2__)
  if (n == kChunk) {
    const __m128 limit = _mm_set1_ps(bound);
    std::uint32_t mask = 0;
    for (int q = 0; q < kChunk / 4; ++q)
      mask |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(values + 4 * q), limit)))
              << (4 * q);
    return mask;
  }
#endif
  std::uint32_t mask = 0;
  for (Eigen::Index t = 0; t < n; ++t) mask |= static_cast<std::uint32_t>(values[t] >= bound) << t;
  return mask;
}
static_assert(kChunk <= 32, "a chunk's mask is 32 bits");

// Calls visit(t) for each set bit t of `mask`, lowest first.
template <typename Visit>
inline void for_each_bit(std::uint32_t mask, Visit&& visit) {
  for (; mask != 0; mask &= mask - 1) visit(static_cast<Eigen::Index>(__builtin_ctz(mask)));
}

// Per-thread structures created by the thread that first uses its slot.
template <typename T>
class PerSlot {
 public:
  PerSlot(std::size_t slots, std::function<T()> make) : items_(slots), make_(std::move(make)) {}
  T& operator[](std::size_t slot) {
    if (!items_[slot]) items_[slot] = std::make_unique<T>(make_());
    return *items_[slot];
  }
  // The slots' structures merged into one (a fresh one when no slot was used).
  T merged() {
    T result = make_();
    for (const auto& item : items_)
      if (item) result.merge(*item);
    return result;
  }

 private:
  std::vector<std::unique_ptr<T>> items_;
  std::function<T()> make_;
};

// The CSLS scores of a tile, column by column (a row of Z), in chunks of kChunk rows of X:
// body(column, values, chunk, count, scores), values the chunk's similarities and scores their CSLS scores, the
// means r_T of the tile's rows from row_means and r_S of the columns from target_means. The selection passes, fp32
// and bf16, screen these.
template <typename Body>
void for_each_csls_chunk(const Tile& tile, std::size_t first_col, const float* row_means,
                         const float* target_means, Body&& body) {
  float scores[kChunk];
  for (Eigen::Index j = 0; j < tile.rows(); ++j) {
    const std::size_t column = first_col + static_cast<std::size_t>(j);
    const float* similarities = tile.row(j).data();
    const float target_mean = target_means[column];
    for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
      const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
      for (Eigen::Index t = 0; t < count; ++t)
        scores[t] = csls_score(similarities[chunk + t], row_means[chunk + t], target_mean);
      body(column, similarities + chunk, chunk, count, scores);
    }
  }
}

}  // namespace termalign::detail
