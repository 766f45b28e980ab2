// The candidate windows of the bf16 scoring (scoring/passes.cpp): which items a top-`keep` list might hold once
// its keys are known exactly, given keys known only to within +-width/2.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace termalign::detail {

// Relaxed atomic access to a float that threads share (GCC's and Clang's builtins): a threshold one thread raises
// while others read it, where a late value is still a valid one.
inline float load_relaxed(const float& place) {
  float value;
  __atomic_load(&place, &value, __ATOMIC_RELAXED);
  return value;
}
inline void store_relaxed(float& place, float value) { __atomic_store(&place, &value, __ATOMIC_RELAXED); }

// For each slot, the items offered with an approximate key (each within width/2 of its exact key) that might be
// among the slot's `keep` best by exact key. If L is the keep-th largest approximate key offered to a slot, the
// keep-th largest exact key is at least L - width/2, so an item of approximate key below L - width is outside the
// exact top `keep` (and below ties with it, which the exact lists break by index). A slot appends what reaches its
// threshold to a buffer of keep + spare entries and, when it is full, keeps what reaches keep-th best - width
// (kth_largest) and raises the threshold to that. A slot whose buffer stays nearly full (many near-ties) moves
// to a list of its own that grows. Threads may offer to different slots at once. thresholds() are for a hot
// loop's screening: an item below them is not wanted.
class Windows {
 public:
  struct Entry {
    float key;
    std::uint32_t index;
  };
  // A slot's entries, after finished().
  struct Span {
    const Entry* begin_;
    const Entry* end_;
    const Entry* begin() const { return begin_; }
    const Entry* end() const { return end_; }
  };

  Windows(std::size_t slots, std::size_t keep, float width, std::size_t spare)
      : keep_(keep),
        width_(width),
        capacity_(keep + std::max<std::size_t>(spare, 4)),
        chunks_((slots + kChunkSlots - 1) / kChunkSlots),
        counts_(slots, 0),
        thresholds_(slots, start()),
        moved_(slots) {
    // Uninitialised: a page is resident once written.
    for (auto& chunk : chunks_) chunk.reset(new Entry[kChunkSlots * capacity_]);
  }

  std::size_t slots() const { return counts_.size(); }
  std::size_t keep() const { return keep_; }
  const float* thresholds() const { return thresholds_.data(); }

  void offer(std::size_t slot, float key, std::uint32_t index) {
    if (!(key >= thresholds_[slot])) return;
    std::uint32_t& count = counts_[slot];
    if (__builtin_expect(count >= capacity_, 0)) return offer_to_full(slot, Entry{key, index});
    at(slot)[count++] = Entry{key, index};
  }
  // Raises the slot's threshold to bound - width when that is higher: `bound` must be at most the keep-th largest
  // approximate key the slot will be offered (for example the smallest of the maxima of `keep` disjoint groups of
  // its items).
  void raise(std::size_t slot, float bound) {
    const float threshold = bound - width_;
    if (keep_ > 0 && threshold > thresholds_[slot]) store_relaxed(thresholds_[slot], threshold);
  }
  // A slot's threshold for a thread that does not own the slot (relaxed: a late value is lower, still valid).
  float threshold(std::size_t slot) const { return load_relaxed(thresholds_[slot]); }

  // The slot's entries after a last compaction: every item that might be among its exact top `keep`.
  Span finished(std::size_t slot) {
    if (counts_[slot] == kMoved) {
      std::vector<Entry>& list = *moved_[slot];
      list.resize(compact(list.data(), static_cast<std::uint32_t>(list.size()), slot));
      return Span{list.data(), list.data() + list.size()};
    }
    Entry* entries = at(slot);
    counts_[slot] = compact(entries, counts_[slot], slot);
    return Span{entries, entries + counts_[slot]};
  }
  // Frees the memory of the slots [first, first + kChunkSlots) (first a multiple of it), which must be done with.
  static constexpr std::size_t kChunkSlots = 4096;
  void release_chunk(std::size_t first) {
    for (std::size_t slot = first; slot < std::min(first + kChunkSlots, slots()); ++slot) clear(slot);
    chunks_[first / kChunkSlots].reset();
  }
  // How many slots moved to lists of their own (for the log).
  std::size_t moved() const {
    return static_cast<std::size_t>(
        std::count_if(moved_.begin(), moved_.end(), [](const auto& list) { return list != nullptr; }));
  }
  // Empties the slot for reuse.
  void clear(std::size_t slot) {
    if (counts_[slot] == kMoved) moved_[slot].reset();
    counts_[slot] = 0;
    thresholds_[slot] = start();
  }

 private:
  static constexpr std::uint32_t kMoved = std::numeric_limits<std::uint32_t>::max();

  Entry* at(std::size_t slot) { return chunks_[slot / kChunkSlots].get() + slot % kChunkSlots * capacity_; }

  float start() const {
    return keep_ == 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  }

  // The k-th largest key of entries[0, count) (k <= count). Short lists by counting, for each key, the keys above
  // it (16 at a time): the k-th largest is the smallest key with fewer than k above it. Else std::nth_element on
  // a copy of the keys.
  static float kth_largest(const Entry* entries, std::uint32_t count, std::size_t k) {
#if defined(__AVX512F__)
    constexpr std::uint32_t kCounted = 128;
    if (count <= kCounted) {
      alignas(64) float keys[kCounted];
      const std::uint32_t vectors = (count + 15) / 16;
      for (std::uint32_t i = 0; i < vectors * 16; ++i)
        keys[i] = i < count ? entries[i].key : -std::numeric_limits<float>::infinity();
      float kth = std::numeric_limits<float>::infinity();
      for (std::uint32_t i = 0; i < count; ++i) {
        const __m512 key = _mm512_set1_ps(keys[i]);
        std::uint32_t above = 0;
        for (std::uint32_t v = 0; v < vectors; ++v)
          above += static_cast<std::uint32_t>(
              __builtin_popcount(_mm512_cmp_ps_mask(_mm512_load_ps(keys + 16 * v), key, _CMP_GT_OQ)));
        if (above < k) kth = std::min(kth, keys[i]);
      }
      return kth;
    }
#endif
    std::vector<float> keys(count);
    for (std::uint32_t i = 0; i < count; ++i) keys[i] = entries[i].key;
    std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(k - 1), keys.end(),
                     [](float a, float b) { return a > b; });
    return keys[k - 1];
  }

  // Keeps the entries within `width` of the keep-th best, raising the slot's threshold; returns their count.
  std::uint32_t compact(Entry* entries, std::uint32_t count, std::size_t slot) {
    if (keep_ == 0 || count < keep_) return count;
    const float threshold = std::max(thresholds_[slot], kth_largest(entries, count, keep_) - width_);
    store_relaxed(thresholds_[slot], threshold);
    return static_cast<std::uint32_t>(
        std::remove_if(entries, entries + count, [threshold](const Entry& e) { return e.key < threshold; }) -
        entries);
  }

  __attribute__((noinline)) void offer_to_full(std::size_t slot, const Entry& entry) {
    std::uint32_t& count = counts_[slot];
    if (count == kMoved) return offer_moved(slot, entry);
    count = compact(at(slot), count, slot);
    // Less than an eighth (at least 4) free: the slot moves to a list of its own, which doubles as needed.
    if (capacity_ - count < std::max<std::size_t>(4, capacity_ / 8)) return move(slot, entry);
    at(slot)[count++] = entry;
  }

  void move(std::size_t slot, const Entry& entry) {
    const Entry* entries = at(slot);
    moved_[slot] = std::make_unique<std::vector<Entry>>(entries, entries + counts_[slot]);
    moved_[slot]->reserve(2 * capacity_);
    moved_[slot]->push_back(entry);
    counts_[slot] = kMoved;
  }

  void offer_moved(std::size_t slot, const Entry& entry) {
    std::vector<Entry>& list = *moved_[slot];
    if (list.size() == list.capacity()) {
      list.resize(compact(list.data(), static_cast<std::uint32_t>(list.size()), slot));
      if (2 * list.size() > list.capacity()) list.reserve(2 * list.capacity());
    }
    if (entry.key >= thresholds_[slot]) list.push_back(entry);
  }

  std::size_t keep_;
  float width_;
  std::size_t capacity_;
  // capacity_ entries per slot, in chunks of kChunkSlots slots (written before read).
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::vector<std::uint32_t> counts_;
  std::vector<float> thresholds_;
  std::vector<std::unique_ptr<std::vector<Entry>>> moved_;  // the lists of the slots that moved
};

// A few entries per slot waiting to be rescored: add() says when a slot is full; the caller then rescores its
// entries and clears it. For lists whose exact form is kept all along (the exact list's bound then screens the
// approximate keys), where a window would hold many near-ties.
class Staging {
 public:
  Staging(std::size_t slots, std::size_t size)
      : size_(size), entries_(new Windows::Entry[slots * size]), counts_(slots, 0) {}

  bool add(std::size_t slot, float key, std::uint32_t index) {
    entries_[slot * size_ + counts_[slot]] = Windows::Entry{key, index};
    return ++counts_[slot] == size_;
  }
  Windows::Span entries(std::size_t slot) const {
    const Windows::Entry* first = entries_.get() + slot * size_;
    return Windows::Span{first, first + counts_[slot]};
  }
  void clear(std::size_t slot) { counts_[slot] = 0; }

 private:
  std::size_t size_;
  std::unique_ptr<Windows::Entry[]> entries_;  // written before read
  std::vector<std::uint32_t> counts_;
};

}  // namespace termalign::detail
