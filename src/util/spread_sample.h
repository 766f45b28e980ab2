// Samples of a list that no period of the list lines up with.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>

namespace termalign::detail {

// A stride for sampling `count` distinct items of a list of `n` as (i * stride) % n, i < count: 1 when the whole
// list is read, else a number coprime with n near n / golden ratio, so that a list whose items alternate kinds (or
// repeat any short period) is sampled in proportion, not along one kind as every (n / count)-th item would be.
inline std::size_t spread_stride(std::size_t n, std::size_t count) {
  if (count >= n) return 1;
  std::size_t stride = std::max<std::size_t>(1, static_cast<std::size_t>(0.6180339887 * static_cast<double>(n)));
  while (std::gcd(stride, n) != 1) ++stride;
  return stride;
}

}  // namespace termalign::detail
