// A shuffle that is the same on every machine and standard library.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace termalign::detail {

// Fisher-Yates over `items`, its random numbers from splitmix64 seeded with `seed`. std::shuffle and the standard
// distributions are implementation-defined, so folds and held-out splits drawn with them would differ between
// standard libraries; these do not.
template <typename T>
void seeded_shuffle(std::vector<T>& items, std::uint64_t seed) {
  std::uint64_t state = seed;
  const auto next = [&state] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[next() % i]);
}

}  // namespace termalign::detail
