// The tile kernel: the fp32 product behind every similarity (similarity_product in scoring/scoring.h) and the
// zero-row padding that makes a similarity's bits independent of its place in a tile.
#pragma once

#include <cstddef>

namespace termalign::detail {

// Eigen rounds a dot product differently depending on the micro-kernel that computes it, which it picks by the
// element's place in the product (its widest kernel covers 3 packets of rows and 4 columns; leftovers use others,
// some with two accumulators) and switches to a coefficient loop for tiny products. Every GEMM here is padded
// with zero rows to multiples of this on both sides, so every similarity goes through the widest kernel and its
// value depends neither on the tiling nor on where the row lands in it: duplicate rows tie exactly. 48 is a
// multiple of the widest kernel's rows for floats with SSE, AVX and AVX-512 (12, 24, 48) and of its columns (4).
constexpr std::size_t kKernelMultiple = 48;

inline std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace termalign::detail
