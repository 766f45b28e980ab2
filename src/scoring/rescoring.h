// The bf16 side of the passes: how wide their windows are, the exact fp32 values of the pairs the windows list,
// and the starting thresholds of fresh windows.
//
// A bf16 pass visits the same tiles with approximations of the similarities (for_each_tile with bf16 tiles), each
// within the proven bound E of its fp32 value, so a key 2 x.z - c is within 2 E. Each top list of the fp32 pass
// becomes a Windows list (of the same capacity, width 2 E for similarities, 4 E for keys): what might be among the
// list's best by fp32 value. The listed pairs are then rescored in fp32 (ExactValues: the fp32 tiles' values, bit
// for bit) and offered to the fp32 pass's own structures, which so receive every item that they would keep in the
// fp32 pass: they end the same, whatever else they were offered. A row's lists are rescored when its block is
// done; a column's after the pass.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "scoring/screening.h"
#include "scoring/tiles.h"
#include "scoring/windows.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "util/parallel.h"

namespace termalign::detail {

// The widths of the windows of a bf16 pass over X Z^T: for similarities, twice the bound; for keys 2 x.z - c, four
// times; each plus a margin for the float rounding of the keys (a few ulps of the keys' magnitude).
struct Bf16Widths {
  float values = 0, keys = 0;
};
Bf16Widths bf16_widths(const Matrix& X, const Matrix& Z, int threads);

// Exact values of chosen pairs, bit for bit those of the fp32 tiles: the similarities of one row of X or Z
// (`fixed`) with chosen rows of the other side, by ordered_dots where it matches the tiles, else by one
// similarity_product of the gathered rows, each side padded with zero rows to the kernel multiple as for_each_tile
// pads them (the value then depends neither on the tiling nor on the row's place).
class ExactValues {
 public:
  ExactValues();

  // values[t] = the similarity of row `fixed` of `side` with row others[t] of `other_side`; `side` is X (the
  // tiles' left-hand side) when fixed_is_source, else Z.
  void compute(const Matrix& side, std::size_t fixed, const Matrix& other_side,
               const std::vector<std::uint32_t>& others, bool fixed_is_source, std::vector<float>& values);

 private:
  bool ordered_;
  std::vector<const float*> pointers_;
  std::vector<float, Eigen::aligned_allocator<float>> lhs_, rhs_, out_;
};

// Sorted, without repeats.
void sort_unique(std::vector<std::uint32_t>& indices);

// Rescoring of one slot (a row of X or of Z) whose windows list rows of the other side: offer(w, index, value)
// for each listed item with its exact value (w: which window), each item rescored once.
template <typename Offer>
void rescore_slot(const Matrix& side, std::size_t slot, std::size_t fixed, const Matrix& other_side,
                  bool fixed_is_source, const std::vector<Windows*>& windows, ExactValues& exact,
                  std::vector<std::uint32_t>& others, std::vector<float>& values, Offer&& offer) {
  others.clear();
  Windows::Span lists[2];
  TERMALIGN_CHECK(windows.size() <= 2, "at most two windows per slot");
  for (std::size_t w = 0; w < windows.size(); ++w) {
    lists[w] = windows[w]->finished(slot);
    for (const auto& entry : lists[w]) others.push_back(entry.index);
  }
  sort_unique(others);
  exact.compute(side, fixed, other_side, others, fixed_is_source, values);
  for (std::size_t w = 0; w < windows.size(); ++w)
    for (const auto& entry : lists[w]) {
      const auto at = std::lower_bound(others.begin(), others.end(), entry.index) - others.begin();
      offer(w, entry.index, values[static_cast<std::size_t>(at)]);
    }
}

// The rows [first_row, first_row + rows) of X, whose windows (slots 0 .. rows - 1 of each of `windows`, listing
// columns of Z) are complete: offer(w, r, column, value) for each listed pair with its exact value (w: which
// window, r: the row's slot). The slots are then cleared for the next block.
template <typename Offer>
void rescore_rows(const Matrix& X, std::size_t first_row, std::size_t rows, const Matrix& Z,
                  const std::vector<Windows*>& windows, ExactValues& exact, Offer&& offer) {
  std::vector<std::uint32_t> others;
  std::vector<float> values;
  for (std::size_t r = 0; r < rows; ++r) {
    rescore_slot(X, r, first_row + r, Z, true, windows, exact, others, values,
                 [&](std::size_t w, std::uint32_t column, float value) { offer(w, r, column, value); });
    for (Windows* w : windows) w->clear(r);
  }
}

// Every column of Z, whose windows (a slot per column, listing rows of X) are complete: offer(w, column, row,
// value) for each listed pair with its exact value, the columns shared out among `threads` threads; the windows'
// memory is freed chunk by chunk (Windows::release_chunk) as the exact lists fill.
template <typename Offer>
void rescore_columns(const Matrix& X, const Matrix& Z, const std::vector<Windows*>& windows, int threads,
                     Offer&& offer) {
  constexpr std::size_t kColumns = 256;  // per parallel item
  const std::size_t n2 = static_cast<std::size_t>(Z.rows());
  PerSlot<ExactValues> exact(static_cast<std::size_t>(threads), [] { return ExactValues(); });
  SerialEigenProducts serial_products;
  constexpr std::size_t kChunk = Windows::kChunkSlots;
  static_assert(kChunk % kColumns == 0, "whole groups per chunk");
  for (std::size_t first = 0; first < n2; first += kChunk) {
    const std::size_t end = std::min(n2, first + kChunk);
    parallel_for((end - first + kColumns - 1) / kColumns, threads, [&](std::size_t group) {
      ExactValues& values_of =
          exact[static_cast<std::size_t>(current_thread()) % static_cast<std::size_t>(threads)];
      std::vector<std::uint32_t> others;
      std::vector<float> values;
      for (std::size_t column = first + group * kColumns; column < std::min(end, first + (group + 1) * kColumns);
           ++column)
        rescore_slot(Z, column, column, X, false, windows, values_of, others, values,
                     [&](std::size_t w, std::uint32_t row, float value) { offer(w, column, row, value); });
    });
    for (Windows* w : windows) w->release_chunk(first);  // memory the exact lists may take
  }
}

// Spare entries of a window: rows are few at a time (a block per thread); columns all at once, so a column's
// window keeps fewer spare entries when they are many (more compactions, less memory): as many as 64 MiB of
// windows allow, between keep / 2 + 8 and 2 keep + 32.
constexpr std::size_t kRowSpare(std::size_t keep) { return 3 * keep + 32; }
std::size_t column_spare(std::size_t keep, std::size_t columns);

// Starting thresholds for fresh windows, from the tile at hand: the maxima of `keep` disjoint groups of a slot's
// items are `keep` different items, so the smallest of them is at most the slot's keep-th largest key
// (Windows::raise). One vectorised pass over the tile for the rows of a block (each row's keys in the tile: factor
// x.z_j - offsets[j] - row_offsets[i], either may be null for 0), instead of the appends and compactions that
// would raise the thresholds from -inf.
void raise_rows_from_tile(const Tile& tile, float factor, const float* offsets, const float* row_offsets,
                          Windows& windows);

// The same bound for a column whose window is fresh, from its keys in the tile, factor x_i.z - offsets[i] (offsets
// indexed by the tile's rows, may be null): applied with the column's offers, under the tile's lock.
float column_bound_from_tile(const float* values, std::size_t rows, float factor, const float* offsets,
                             std::size_t keep);

// A thread's offers to the shared column windows from one tile, screened against the columns' thresholds as the
// thread last saw them (lower than or equal to the current ones, so nothing wanted is missed), then made under the
// column tile's lock in one go: the lock is held for the offers only, not for the tile's screening.
class PendingOffers {
 public:
  PendingOffers() { offers_.reserve(4096); }
  struct Offer {
    std::uint32_t column, row;
    float key;
    std::uint32_t window;  // which of the columns' windows
  };
  void add(std::size_t column, std::size_t row, float key, std::uint32_t window) {
    offers_.push_back(Offer{static_cast<std::uint32_t>(column), static_cast<std::uint32_t>(row), key, window});
  }
  // A bound for Windows::raise, applied before the offers.
  void raise(std::size_t column, float bound, std::uint32_t window) {
    raises_.push_back(Offer{static_cast<std::uint32_t>(column), 0, bound, window});
  }
  bool empty() const { return offers_.empty() && raises_.empty(); }
  template <typename Raise, typename Make>
  void flush(Raise&& raise, Make&& make) {
    for (const Offer& bound : raises_) raise(bound);
    for (const Offer& offer : offers_) make(offer);
    raises_.clear();
    offers_.clear();
  }

 private:
  std::vector<Offer> offers_, raises_;
};

}  // namespace termalign::detail
