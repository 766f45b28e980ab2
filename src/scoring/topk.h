// Bounded heaps that keep the best `capacity` items of each slot (a row or a column of a similarity matrix).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "scoring/scoring.h"
#include "termalign/error.h"
#include "util/huge_pages.h"
#include "util/parallel.h"

namespace termalign::detail {

// The float a hot loop compares against a slot's worst kept item before offering a new one (floats have
// TopValues).
inline float score_of(const Candidate& candidate) { return candidate.score; }

// ranks_before as a function object (the heaps' and the sorts' order).
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
  HugePageVector<T>& items() { return items_; }
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
  HugePageVector<T> items_;
  std::vector<float> bounds_;
  Before before_;
};

// The `capacity` largest floats of each slot, each slot kept sorted ascending (its bound, the smallest kept value,
// first) and stored flat. For the small capacities of CSLS neighbourhoods an offer is a branch-free pass over the
// slot (drop the smallest, slide v into place) instead of a heap's sift-down, whose branches a random stream
// mispredicts.
// Keeps the same values as a heap of the slot's `capacity` largest would, for any offering order.
class TopValues {
 public:
  TopValues(std::size_t slots, std::size_t capacity, float sentinel)
      : capacity_(capacity),
        items_(slots * capacity, sentinel),
        bounds_(slots, capacity == 0 ? std::numeric_limits<float>::infinity() : sentinel) {}

  std::size_t slots() const { return bounds_.size(); }
  std::size_t capacity() const { return capacity_; }
  // Each slot's smallest kept value (+inf when capacity is 0): a value at or below it cannot enter.
  const float* bounds() const { return bounds_.data(); }
  // The slot's kept values, ascending.
  const float* begin(std::size_t slot) const { return items_.data() + slot * capacity_; }
  const float* end(std::size_t slot) const { return begin(slot) + capacity_; }

  // Keeps `value` in place of the slot's smallest when it is larger. With a[] ascending and v > a[0], the new
  // a'[t] = min(max(a[t], v), a[t + 1]) (a[capacity] = +inf) drops a[0] and inserts v in order.
  void offer(std::size_t slot, float value) {
    if (capacity_ == 0 || !(value > bounds_[slot])) return;
    float* a = items_.data() + slot * capacity_;
    for (std::size_t t = 0; t + 1 < capacity_; ++t) a[t] = std::min(std::max(a[t], value), a[t + 1]);
    a[capacity_ - 1] = std::max(a[capacity_ - 1], value);
    bounds_[slot] = a[0];
  }

  // All slots' values, slot after slot (`capacity` each), for a ProcessGroup to merge.
  HugePageVector<float>& items() { return items_; }
  // Restores the order and bounds after items() was changed (each slot in any order).
  void rebuild() {
    for (std::size_t slot = 0; slot < slots() && capacity_ > 0; ++slot) {
      float* a = items_.data() + slot * capacity_;
      std::sort(a, a + capacity_);
      bounds_[slot] = a[0];
    }
  }

  // Offers every value `other` keeps in each slot: afterwards this keeps the largest of both.
  void merge(const TopValues& other) {
    for (std::size_t slot = 0; slot < slots(); ++slot)
      for (const float* value = other.begin(slot); value != other.end(slot); ++value) offer(slot, *value);
  }

 private:
  std::size_t capacity_;
  HugePageVector<float> items_;
  std::vector<float> bounds_;
};

using TopCandidates = BoundedHeaps<Candidate, RanksBefore>;

// Bounds that the threads' own TopValues for the same slots share: each thread raises a slot's shared bound to its
// own list's bound, and every thread may skip values below the shared bound. A list's bound is its smallest kept
// value, so once one thread's list for a slot is full, the slot's `capacity` largest values over all threads are
// all at or above that bound, and a value below it cannot be among them: the merged lists keep the same values as
// without sharing, while each thread's lists fill at the pace of all rows seen, not only its own. Relaxed atomics:
// a shared bound that another thread reads late is smaller, so still a valid bound.
class SharedBounds {
 public:
  explicit SharedBounds(std::size_t slots) : bounds_(new std::atomic<float>[slots]) {
    for (std::size_t slot = 0; slot < slots; ++slot)
      bounds_[slot].store(-std::numeric_limits<float>::infinity(), std::memory_order_relaxed);
  }

  float bound(std::size_t slot) const { return bounds_[slot].load(std::memory_order_relaxed); }
  // Raises the slot's shared bound to `bound`, the bound of one thread's list for it, when that is higher.
  void raise(std::size_t slot, float bound) {
    if (bound > this->bound(slot)) bounds_[slot].store(bound, std::memory_order_relaxed);
  }

 private:
  std::unique_ptr<std::atomic<float>[]> bounds_;
};

// The CSLS pools of csls_select: for each source row (slot), its best `capacity` targets by a float key (key
// descending, then target ascending: ranks_before's order within one row). A slot appends what ranks before its
// threshold to a buffer of 2 x capacity and, when the buffer is full, keeps its best `capacity` (std::nth_element)
// and raises the threshold to the worst of them: an offer is a comparison and a copy, not a sift-down through
// log2(capacity) levels of hard-to-predict branches (faiss's ReservoirTopN keeps large top-k lists this way). Each
// entry's order is one 64-bit integer (the key's bits made monotonic, then the complement of the target), so the
// compactions compare integers. Call finish() after the last offer.
class RowPools {
 public:
  // `buffer` entries per slot (at least capacity + 1; 0: 2 x capacity): smaller for slots offered few entries.
  RowPools(std::size_t slots, std::size_t capacity, std::size_t buffer = 0)
      : capacity_(capacity),
        buffer_(buffer == 0 ? 2 * capacity : std::max(buffer, capacity + 1)),
        entries_(slots * buffer_),
        counts_(slots, 0),
        thresholds_(slots, 0),
        bounds_(slots, capacity == 0 ? std::numeric_limits<float>::infinity()
                                     : -std::numeric_limits<float>::infinity()) {}

  // Memory per slot: a buffer of 2 x capacity entries.
  static constexpr std::size_t kEntryBytes = 16;
  static std::size_t bytes_per_slot(std::size_t capacity) { return 2 * capacity * kEntryBytes; }

  std::size_t slots() const { return bounds_.size(); }
  std::size_t capacity() const { return capacity_; }
  // Each slot's threshold key (-inf at first, +inf when capacity is 0): a key below it cannot enter.
  const float* bounds() const { return bounds_.data(); }

  void offer(std::size_t slot, float key, float similarity, std::uint32_t target) {
    const std::uint64_t rank = rank_of(key, target);
    if (capacity_ == 0 || rank <= thresholds_[slot]) return;
    entries_[slot * buffer_ + counts_[slot]] = Entry{rank, similarity};
    if (++counts_[slot] == buffer_) shrink(slot);
  }

  // Each slot keeps its best `capacity` entries, its worst last, the slots shared out among `threads` threads.
  // Every slot must have been offered at least `capacity` targets.
  void finish(int threads = 1) {
    if (capacity_ == 0) return;
    parallel_for(slots(), threads, [this](std::size_t slot) {
      TERMALIGN_CHECK(counts_[slot] >= capacity_, "every pool is offered at least its capacity");
      shrink(slot);
    });
  }
  // After finish(): the slot's kept targets as candidates of source row `source` (score = the key, cosine = the
  // similarity), and its worst key.
  std::vector<Candidate> candidates(std::size_t slot, std::uint32_t source) const {
    std::vector<Candidate> kept(capacity_);
    const Entry* entries = entries_.data() + slot * buffer_;
    for (std::size_t i = 0; i < capacity_; ++i)
      kept[i] = Candidate{key_of(entries[i].rank), entries[i].similarity, source, target_of(entries[i].rank)};
    return kept;
  }
  float worst_key(std::size_t slot) const { return key_of(thresholds_[slot]); }

 private:
  struct Entry {
    std::uint64_t rank;
    float similarity;
  };
  static_assert(sizeof(Entry) == kEntryBytes, "bytes_per_slot counts 16-byte entries");

  // Larger rank = ranks before: the key's bits, flipped so that integer order is float order, above the
  // complement of the target. -0 is taken as +0, which it equals.
  static std::uint64_t rank_of(float key, std::uint32_t target) {
    if (key == 0.0f) key = 0.0f;
    std::uint32_t bits;
    std::memcpy(&bits, &key, sizeof bits);
    bits = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
    return static_cast<std::uint64_t>(bits) << 32 | (0xFFFFFFFFu - target);
  }
  static float key_of(std::uint64_t rank) {
    std::uint32_t bits = static_cast<std::uint32_t>(rank >> 32);
    bits = (bits & 0x80000000u) != 0 ? bits & 0x7FFFFFFFu : ~bits;
    float key;
    std::memcpy(&key, &bits, sizeof key);
    return key;
  }
  static std::uint32_t target_of(std::uint64_t rank) { return 0xFFFFFFFFu - static_cast<std::uint32_t>(rank); }

  void shrink(std::size_t slot) {
    Entry* entries = entries_.data() + slot * buffer_;
    std::nth_element(entries, entries + capacity_ - 1, entries + counts_[slot],
                     [](const Entry& a, const Entry& b) { return a.rank > b.rank; });
    counts_[slot] = capacity_;
    thresholds_[slot] = entries[capacity_ - 1].rank;
    bounds_[slot] = key_of(thresholds_[slot]);
  }

  std::size_t capacity_, buffer_;
  HugePageVector<Entry> entries_;
  std::vector<std::size_t> counts_;
  std::vector<std::uint64_t> thresholds_;
  std::vector<float> bounds_;
};

inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

// Ranks after every real candidate; never returned.
inline Candidate sentinel_candidate() {
  return Candidate{-std::numeric_limits<float>::infinity(), 0.0f, kNoIndex, kNoIndex};
}

}  // namespace termalign::detail
