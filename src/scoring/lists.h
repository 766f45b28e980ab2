// How a pass keeps its lists, the one thing its fp32 and bf16 runs do differently. A pass (passes.cpp) screens
// each tile once, in one code path, against the thresholds its lists give and offers them what reaches them; the
// policy decides what that means. Fp32Lists: the tiles hold the fp32 values, so an offer goes to the exact list
// (the sink) at once. Bf16Lists: the tiles hold bf16 products, so an offer goes to a window of what might be among
// the list's best (rescoring.h), and the pairs the windows list are rescored in fp32 and offered to the same sinks
// with the keys computed as Fp32Lists computes them: the sinks end as in the fp32 run, bit for bit.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "scoring/rescoring.h"
#include "scoring/screening.h"
#include "scoring/tiles.h"
#include "scoring/topk.h"
#include "scoring/windows.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign::detail {

// A list's key of the pair (row i of X, row j of Z) as a float expression of their similarity v: factor v -
// row_offsets[i] - column_offsets[j], a null offset standing for none. The screening's keys (doubled_minus,
// csls_score) are the same expressions, so a rescored key has the bits of the fp32 run's.
struct KeyOf {
  float factor = 1;
  const float* row_offsets = nullptr;
  const float* column_offsets = nullptr;
  float operator()(float similarity, std::size_t row, std::size_t column) const {
    float key = factor * similarity;
    if (row_offsets != nullptr) key -= row_offsets[row];
    if (column_offsets != nullptr) key -= column_offsets[column];
    return key;
  }
  bool is_similarity() const { return factor == 1 && row_offsets == nullptr && column_offsets == nullptr; }
};

// A list per row of this process's share of X's rows: its exact list's bounds (by row slot, the row less
// row_begin) and capacity, and its key.
struct RowList {
  const float* bounds = nullptr;
  std::size_t capacity = 0;
  KeyOf key;
};

// The lists per column of Z: `values` keeps each column's `value_k` largest similarities (0: none), per thread
// then merged; `reverse` (capacity 0: none) each column's sources of highest key `reverse_key`, one list for all
// threads (Candidate: score the key, cosine the similarity).
struct ColumnLists {
  std::size_t value_k = 0;
  TopCandidates* reverse = nullptr;
  KeyOf reverse_key;
  bool with_reverse() const { return reverse != nullptr && reverse->capacity() > 0; }
};

// In both policies: Rows<N, Sink>::tile(...) gives a view with thresholds(w) (by row of the tile) and offer(w, i,
// key, similarity, column) for the N row lists, the sink being sink(w, row_slot, key, similarity, column);
// Columns::tile(...) a view whose column(j, similarities) has values_threshold(), reverse_threshold(),
// offer_value(row, similarity), offer_reverse(row, key, similarity) and done(), then the view's done(); finish()
// gives the columns' values, this process's part.

struct Fp32Lists {
  static constexpr Precision kPrecision = Precision::fp32;
  Fp32Lists(const Matrix&, const Matrix&, int threads) : threads(threads) {}
  int threads;

  template <std::size_t N, typename Sink>
  class Rows {
   public:
    Rows(Fp32Lists&, const std::array<RowList, N>& lists, const Matrix&, std::size_t row_begin, std::size_t,
         const Matrix&, Sink& sink)
        : lists_(lists), row_begin_(row_begin), sink_(sink) {}
    struct View {
      const Rows& rows;
      std::size_t first_slot;
      const float* thresholds(std::size_t w) const { return rows.lists_[w].bounds + first_slot; }
      void offer(std::size_t w, Eigen::Index i, float key, float similarity, std::size_t column) const {
        rows.sink_(w, first_slot + static_cast<std::size_t>(i), key, similarity,
                   static_cast<std::uint32_t>(column));
      }
    };
    View tile(std::size_t, std::size_t first_row, std::size_t, const Tile&) {
      return View{*this, first_row - row_begin_};
    }
    BlockDone block_done() { return nullptr; }

   private:
    std::array<RowList, N> lists_;
    std::size_t row_begin_;
    Sink& sink_;
  };

  class Columns {
   public:
    Columns(Fp32Lists& lists, const Matrix&, const Matrix& Z, const TileOptions& tiles, const ColumnLists& wanted)
        : wanted_(wanted),
          n2_(static_cast<std::size_t>(Z.rows())),
          values_(static_cast<std::size_t>(lists.threads),
                  [this] { return TopValues(n2_, wanted_.value_k, -std::numeric_limits<float>::infinity()); }),
          shared_bounds_(wanted.value_k > 0 ? n2_ : 0),
          // The targets' lists are one set for all threads, each column tile's locked by the thread visiting it.
          locks_(n2_, tiles, wanted.with_reverse()) {
      TERMALIGN_CHECK(!wanted.with_reverse() || wanted.reverse->slots() == n2_, "a target list per column");
    }

    class Column {
     public:
      Column(Columns& lists, TopValues& values, std::size_t column)
          : lists_(lists), values_(values), column_(column) {
        if (lists.wanted_.value_k > 0) shared_bound_ = lists.shared_bounds_.bound(column);
      }
      // The column's bound rises with each value it keeps; offer() checks each against the current one.
      float values_threshold() const { return std::max(values_.bounds()[column_], shared_bound_); }
      float reverse_threshold() const { return lists_.wanted_.reverse->bounds()[column_]; }
      void offer_value(std::size_t, float similarity) { values_.offer(column_, similarity); }
      void offer_reverse(std::size_t row, float key, float similarity) {
        lists_.wanted_.reverse->offer(column_, Candidate{key, similarity, static_cast<std::uint32_t>(row),
                                                         static_cast<std::uint32_t>(column_)});
      }
      void done() {
        if (lists_.wanted_.value_k > 0) lists_.shared_bounds_.raise(column_, values_.bounds()[column_]);
      }

     private:
      Columns& lists_;
      TopValues& values_;
      std::size_t column_;
      float shared_bound_ = -std::numeric_limits<float>::infinity();
    };

    class View {
     public:
      View(Columns& lists, std::size_t slot, std::size_t first_col)
          : lists_(lists), values_(lists.values_[slot]), lock_(lists.locks_.lock(first_col)) {}
      Column column(std::size_t column, const float*) { return Column(lists_, values_, column); }
      void done() {}

     private:
      Columns& lists_;
      TopValues& values_;
      std::unique_lock<std::mutex> lock_;
    };
    View tile(std::size_t slot, std::size_t, std::size_t first_col, const Tile&) {
      return View(*this, slot, first_col);
    }
    TopValues finish() { return values_.merged(); }

   private:
    ColumnLists wanted_;
    std::size_t n2_;
    PerSlot<TopValues> values_;
    SharedBounds shared_bounds_;
    ColumnTileLocks locks_;
  };
};

struct Bf16Lists {
  static constexpr Precision kPrecision = Precision::bf16;
  Bf16Lists(const Matrix& X, const Matrix& Z, int threads)
      : threads(threads),
        widths(bf16_widths(X, Z, threads)),
        exact(static_cast<std::size_t>(threads), [] { return ExactValues(); }) {}
  int threads;
  Bf16Widths widths;
  PerSlot<ExactValues> exact;  // per thread

  float width(const KeyOf& key) const { return key.is_similarity() ? widths.values : widths.keys; }

  template <std::size_t N, typename Sink>
  class Rows {
   public:
    Rows(Bf16Lists& lists, const std::array<RowList, N>& specs, const Matrix& X, std::size_t row_begin,
         std::size_t block_rows, const Matrix& Z, Sink& sink)
        : lists_(lists),
          specs_(specs),
          X_(X),
          Z_(Z),
          row_begin_(row_begin),
          sink_(sink),
          windows_(static_cast<std::size_t>(lists.threads), [this, block_rows] {
            std::vector<Windows> windows;
            for (const RowList& list : specs_)
              windows.emplace_back(block_rows, list.capacity, lists_.width(list.key), kRowSpare(list.capacity));
            return windows;
          }) {}
    struct View {
      Windows* windows;
      const float* thresholds(std::size_t w) const { return windows[w].thresholds(); }
      void offer(std::size_t w, Eigen::Index i, float key, float, std::size_t column) const {
        windows[w].offer(static_cast<std::size_t>(i), key, static_cast<std::uint32_t>(column));
      }
    };
    // Fresh windows start from the tile at hand.
    View tile(std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
      std::vector<Windows>& windows = windows_[slot];
      if (windows[0].thresholds()[0] == -std::numeric_limits<float>::infinity()) {
        for (std::size_t w = 0; w < N; ++w) {
          const KeyOf& key = specs_[w].key;
          raise_rows_from_tile(tile, key.factor, key.column_offsets ? key.column_offsets + first_col : nullptr,
                               key.row_offsets ? key.row_offsets + first_row : nullptr, windows[w]);
        }
      }
      return View{windows.data()};
    }
    // A block's windows are rescored once it is done.
    BlockDone block_done() {
      return [this](std::size_t slot, std::size_t first_row, std::size_t rows) {
        std::vector<Windows*> windows;
        for (Windows& w : windows_[slot]) windows.push_back(&w);
        rescore_rows(X_, first_row, rows, Z_, windows, lists_.exact[slot],
                     [&](std::size_t w, std::size_t r, std::uint32_t column, float similarity) {
                       sink_(w, first_row - row_begin_ + r, specs_[w].key(similarity, first_row + r, column),
                             similarity, column);
                     });
      };
    }

   private:
    Bf16Lists& lists_;
    std::array<RowList, N> specs_;
    const Matrix& X_;
    const Matrix& Z_;
    std::size_t row_begin_;
    Sink& sink_;
    PerSlot<std::vector<Windows>> windows_;
  };

  // The columns' values in windows shared by the threads, each thread's offers made under the column tile's lock
  // (PendingOffers). The reverse lists' keys crowd near each list's worst (a window would hold two or three times
  // its capacity), so the exact lists are kept all along and each column stages a few items at a time, rescored
  // when its stage is full: an item is staged when its key may reach the exact list's worst (within half the
  // keys' width: 2 E and half the margin).
  class Columns {
   public:
    Columns(Bf16Lists& lists, const Matrix& X, const Matrix& Z, const TileOptions& tiles,
            const ColumnLists& wanted)
        : lists_(lists),
          X_(X),
          Z_(Z),
          wanted_(wanted),
          n2_(static_cast<std::size_t>(Z.rows())),
          windows_(wanted.value_k > 0 ? n2_ : 0, wanted.value_k, lists.widths.values,
                   column_spare(wanted.value_k, n2_)),
          staged_(wanted.with_reverse() ? n2_ : 0, kStaged),
          reverse_thresholds_(wanted.with_reverse() ? n2_ : 0, -std::numeric_limits<float>::infinity()),
          locks_(n2_, tiles, wanted.value_k > 0 || wanted.with_reverse()),
          pending_(static_cast<std::size_t>(lists.threads), [] { return PendingOffers(); }),
          scratch_(static_cast<std::size_t>(lists.threads), [] { return Scratch(); }) {}

    class Column {
     public:
      Column(Columns& lists, PendingOffers& pending, std::size_t column, std::size_t first_row,
             const float* similarities, std::size_t rows)
          : column_(column) {
        constexpr float kFresh = -std::numeric_limits<float>::infinity();
        const Bf16Widths& widths = lists.lists_.widths;
        if (lists.wanted_.value_k > 0) {
          values_threshold_ = lists.windows_.threshold(column);
          if (values_threshold_ == kFresh) {
            const float bound = column_bound_from_tile(similarities, rows, 1.0f, nullptr, lists.wanted_.value_k);
            values_threshold_ = bound - widths.values;
            pending.raise(column, bound, 0);
          }
        }
        if (lists.wanted_.with_reverse()) {
          reverse_threshold_ = load_relaxed(lists.reverse_thresholds_[column]);
          if (reverse_threshold_ == kFresh) {
            const KeyOf& key = lists.wanted_.reverse_key;
            const float bound = column_bound_from_tile(similarities, rows, key.factor, key.row_offsets + first_row,
                                                       lists.wanted_.reverse->capacity());
            reverse_threshold_ = bound - widths.keys;
            pending.raise(column, bound, 1);
          }
        }
        pending_ = &pending;
      }
      float values_threshold() const { return values_threshold_; }
      float reverse_threshold() const { return reverse_threshold_; }
      void offer_value(std::size_t row, float similarity) { pending_->add(column_, row, similarity, 0); }
      void offer_reverse(std::size_t row, float key, float) { pending_->add(column_, row, key, 1); }
      void done() {}

     private:
      std::size_t column_;
      PendingOffers* pending_ = nullptr;
      float values_threshold_ = 0, reverse_threshold_ = 0;
    };

    class View {
     public:
      View(Columns& lists, std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile)
          : lists_(lists),
            slot_(slot),
            first_row_(first_row),
            first_col_(first_col),
            rows_(static_cast<std::size_t>(tile.cols())),
            pending_(lists.pending_[slot]) {}
      Column column(std::size_t column, const float* similarities) {
        return Column(lists_, pending_, column, first_row_, similarities, rows_);
      }
      void done() { lists_.flush(slot_, first_col_, pending_); }

     private:
      Columns& lists_;
      std::size_t slot_, first_row_, first_col_, rows_;
      PendingOffers& pending_;
    };
    View tile(std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
      return View(*this, slot, first_row, first_col, tile);
    }

    TopValues finish() {
      logger().debug("bf16 pass: {} of {} columns' windows outgrew their buffers", windows_.moved(), n2_);
      const int threads = lists_.threads;
      if (wanted_.with_reverse()) {
        SerialEigenProducts serial_products;
        constexpr std::size_t kColumns = 1024;  // per parallel item
        parallel_for((n2_ + kColumns - 1) / kColumns, threads, [&](std::size_t part) {
          const std::size_t slot = static_cast<std::size_t>(current_thread()) % static_cast<std::size_t>(threads);
          for (std::size_t column = part * kColumns; column < std::min(n2_, (part + 1) * kColumns); ++column)
            rescore_staged(column, slot);
        });
      }
      TopValues values(wanted_.value_k > 0 ? n2_ : 0, wanted_.value_k, -std::numeric_limits<float>::infinity());
      if (wanted_.value_k > 0)
        rescore_columns(X_, Z_, {&windows_}, threads,
                        [&](std::size_t, std::size_t column, std::uint32_t, float similarity) {
                          values.offer(column, similarity);
                        });
      return values;
    }

   private:
    static constexpr std::size_t kStaged = 16;  // a full block of ordered_dots
    struct Scratch {
      std::vector<std::uint32_t> rows;
      std::vector<float> similarities;
    };

    void flush(std::size_t slot, std::size_t first_col, PendingOffers& pending) {
      if (pending.empty()) return;
      const std::unique_lock<std::mutex> lock = locks_.lock(first_col);
      pending.flush(
          [&](const PendingOffers::Offer& o) {
            if (o.window == 0) return windows_.raise(o.column, o.key);
            // The group maxima bound the keep-th approximate key: the exact one is at least that - 2 E.
            const float threshold = std::max(reverse_thresholds_[o.column], o.key - lists_.widths.keys);
            store_relaxed(reverse_thresholds_[o.column], threshold);
          },
          [&](const PendingOffers::Offer& o) {
            if (o.window == 0) return windows_.offer(o.column, o.key, o.row);
            if (o.key >= reverse_thresholds_[o.column] && staged_.add(o.column, o.key, o.row))
              rescore_staged(o.column, slot);
          });
    }

    // Rescores the column's staged sources into the reverse list and raises its threshold (under the column's
    // lock, or after the pass).
    void rescore_staged(std::size_t column, std::size_t slot) {
      Scratch& scratch = scratch_[slot];
      scratch.rows.clear();
      for (const auto& entry : staged_.entries(column)) scratch.rows.push_back(entry.index);
      lists_.exact[slot].compute(Z_, column, X_, scratch.rows, false, scratch.similarities);
      TopCandidates& reverse = *wanted_.reverse;
      for (std::size_t t = 0; t < scratch.rows.size(); ++t) {
        const float similarity = scratch.similarities[t];
        reverse.offer(column, Candidate{wanted_.reverse_key(similarity, scratch.rows[t], column), similarity,
                                        scratch.rows[t], static_cast<std::uint32_t>(column)});
      }
      staged_.clear(column);
      const float threshold =
          std::max(reverse_thresholds_[column], reverse.bounds()[column] - lists_.widths.keys / 2);
      store_relaxed(reverse_thresholds_[column], threshold);
    }

    Bf16Lists& lists_;
    const Matrix& X_;
    const Matrix& Z_;
    ColumnLists wanted_;
    std::size_t n2_;
    Windows windows_;
    Staging staged_;
    std::vector<float> reverse_thresholds_;
    ColumnTileLocks locks_;
    PerSlot<PendingOffers> pending_;
    PerSlot<Scratch> scratch_;
  };
};

}  // namespace termalign::detail
