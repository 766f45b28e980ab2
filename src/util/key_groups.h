// Indices grouped by a small integer key with a stable counting sort (linear, no comparison sort).
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "termalign/error.h"

namespace termalign::detail {

// The indices 0 .. n - 1 grouped by key(i) in [0, keys): key k's indices are order[offset[k]] ..
// order[offset[k + 1] - 1], ascending.
struct KeyGroups {
  std::vector<std::size_t> offset;  // keys + 1 entries
  std::vector<std::uint32_t> order;

  std::size_t begin(std::size_t key) const { return offset[key]; }
  std::size_t end(std::size_t key) const { return offset[key + 1]; }
};

template <typename Key>
KeyGroups group_by_key(std::size_t n, std::size_t keys, Key key) {
  TERMALIGN_CHECK(n <= UINT32_MAX, "32-bit indices");
  KeyGroups groups{std::vector<std::size_t>(keys + 1, 0), std::vector<std::uint32_t>(n)};
  for (std::size_t i = 0; i < n; ++i) ++groups.offset[static_cast<std::size_t>(key(i)) + 1];
  std::partial_sum(groups.offset.begin(), groups.offset.end(), groups.offset.begin());
  std::vector<std::size_t> next(groups.offset.begin(), groups.offset.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    groups.order[next[static_cast<std::size_t>(key(i))]++] = static_cast<std::uint32_t>(i);
  return groups;
}

}  // namespace termalign::detail
