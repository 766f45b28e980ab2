// Counts by 64-bit key in one flat table (open addressing, linear probing): about 21 bytes an entry, against
// about 45 for std::unordered_map's nodes and buckets, and no allocation per key. The corpus pass counts tens of
// millions of (term, context word) pairs with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace termalign::detail {

class CountMap {
 public:
  // A key that is never counted: the table's mark of an empty slot.
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};

  // Adds 1 to `key`'s count (key != kNoKey).
  void increment(std::uint64_t key) {
    if (4 * (size_ + 1) > 3 * keys_.size()) grow();
    std::size_t slot = home(key);
    while (keys_[slot] != key && keys_[slot] != kNoKey) slot = (slot + 1) & mask_;
    if (keys_[slot] == kNoKey) {
      keys_[slot] = key;
      ++size_;
    }
    ++counts_[slot];
  }

  std::size_t size() const { return size_; }

  // Calls visit(key, count) for every key counted, in the table's order (which depends on the keys' history).
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (std::size_t slot = 0; slot < keys_.size(); ++slot)
      if (keys_[slot] != kNoKey) visit(keys_[slot], counts_[slot]);
  }

 private:
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);  // Fibonacci hashing
  }

  void grow() {
    std::vector<std::uint64_t> keys(keys_.empty() ? 1024 : 2 * keys_.size(), kNoKey);
    std::vector<std::uint32_t> counts(keys.size(), 0);
    std::swap(keys, keys_);
    std::swap(counts, counts_);
    mask_ = keys_.size() - 1;
    shift_ = 64 - __builtin_ctzll(keys_.size());
    for (std::size_t old = 0; old < keys.size(); ++old) {
      if (keys[old] == kNoKey) continue;
      std::size_t slot = home(keys[old]);
      while (keys_[slot] != kNoKey) slot = (slot + 1) & mask_;
      keys_[slot] = keys[old];
      counts_[slot] = counts[old];
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> counts_;
  std::size_t size_ = 0, mask_ = 0;
  int shift_ = 64;
};

}  // namespace termalign::detail
