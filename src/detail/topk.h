// Bounded heaps that keep the best `capacity` items of each slot (a row or a column of a similarity matrix).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "termalign/scoring.h"

namespace termalign::detail {

// The float a hot loop compares against a slot's worst kept item before offering a new one.
inline float score_of(float value) { return value; }
inline float score_of(const Candidate& candidate) { return candidate.score; }

struct Greater {
  bool operator()(float a, float b) const { return a > b; }
};
struct RanksBefore {
  bool operator()(const Candidate& a, const Candidate& b) const { return ranks_before(a, b); }
};

// `slots` fixed-size heaps of `capacity` items, stored flat, each with its worst item at the root. Every heap
// starts full of `sentinel`, which must rank after any real item, so a hot loop needs one comparison against
// bounds()[slot] (the worst kept score) in the common case and never counts. Before is a strict order
// ("a ranks before b"); with a strict total order the kept items do not depend on the offering order.
template <typename T, typename Before>
class BoundedHeaps {
 public:
  BoundedHeaps(std::size_t slots, std::size_t capacity, const T& sentinel)
      : capacity_(capacity),
        items_(slots * capacity, sentinel),
        bounds_(slots, capacity == 0 ? std::numeric_limits<float>::infinity() : score_of(sentinel)) {}

  std::size_t slots() const { return bounds_.size(); }
  std::size_t capacity() const { return capacity_; }
  // Score of each slot's worst kept item (+inf when capacity is 0): an item scoring below it cannot enter.
  const float* bounds() const { return bounds_.data(); }
  const T& worst(std::size_t slot) const { return items_[slot * capacity_]; }
  // The slot's kept items, in heap order.
  const T* begin(std::size_t slot) const { return items_.data() + slot * capacity_; }
  const T* end(std::size_t slot) const { return begin(slot) + capacity_; }

  // Keeps `item` in place of the slot's worst item when it ranks before it.
  void offer(std::size_t slot, const T& item) {
    if (capacity_ == 0 || !before_(item, worst(slot))) return;
    T* heap = items_.data() + slot * capacity_;
    std::size_t hole = 0;
    for (;;) {  // sift down: move the worse child up while it is worse than `item`
      std::size_t child = 2 * hole + 1;
      if (child >= capacity_) break;
      if (child + 1 < capacity_ && before_(heap[child], heap[child + 1])) ++child;
      if (!before_(item, heap[child])) break;
      heap[hole] = heap[child];
      hole = child;
    }
    heap[hole] = item;
    bounds_[slot] = score_of(heap[0]);
  }

  // All slots' items, slot after slot (`capacity` each), for a ProcessGroup to merge.
  std::vector<T>& items() { return items_; }
  // Restores the heaps and bounds after items() was changed (each slot in any order).
  void rebuild() {
    for (std::size_t slot = 0; slot < slots() && capacity_ > 0; ++slot) {
      T* heap = items_.data() + slot * capacity_;
      std::make_heap(heap, heap + capacity_, before_);  // the worst at the root, as offer() keeps it
      bounds_[slot] = score_of(heap[0]);
    }
  }

  // Offers every item `other` keeps in each slot: afterwards this keeps the best of both.
  void merge(const BoundedHeaps& other) {
    for (std::size_t slot = 0; slot < slots(); ++slot)
      for (const T* item = other.begin(slot); item != other.end(slot); ++item) offer(slot, *item);
  }

 private:
  std::size_t capacity_;
  std::vector<T> items_;
  std::vector<float> bounds_;
  Before before_;
};

using TopValues = BoundedHeaps<float, Greater>;
using TopCandidates = BoundedHeaps<Candidate, RanksBefore>;

inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

// Ranks after every real candidate; never returned.
inline Candidate sentinel_candidate() {
  return Candidate{-std::numeric_limits<float>::infinity(), 0.0f, kNoIndex, kNoIndex};
}

}  // namespace termalign::detail
