#include "scoring/passes.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "scoring/lists.h"
#include "scoring/tiles.h"

namespace termalign::detail {
namespace {

// The tiles the policy's lists take: fp32 lists take fp32 tiles, whatever the options ask.
template <typename Lists>
TileOptions tiles_for(const TileOptions& tiles) {
  TileOptions own = tiles;
  own.precision = Lists::kPrecision;
  return own;
}

// neighbourhood_pass (passes.h) with the policy's lists.
template <typename Lists>
TopValues neighbourhoods(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                         const TileOptions& options, int threads, const char* what, TopValues& row_top,
                         std::size_t column_k) {
  const TileOptions tiles = tiles_for<Lists>(options);
  const bool with_columns = column_k > 0;
  Lists lists(X, Z, threads);
  const auto sink = [&](std::size_t, std::size_t row_slot, float, float similarity, std::uint32_t) {
    row_top.offer(row_slot, similarity);
  };
  typename Lists::template Rows<1, decltype(sink)> rows(
      lists, {RowList{row_top.bounds(), row_top.capacity(), KeyOf{}}}, X, row_begin,
      tile_extent(tiles.rows, row_end - row_begin), Z, sink);
  typename Lists::Columns columns(lists, X, Z, tiles, ColumnLists{column_k, nullptr, KeyOf{}});
  const auto visit = [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
    auto to_rows = rows.tile(slot, first_row, first_col, tile);
    auto to_columns = columns.tile(slot, first_row, first_col, tile);
    for (Eigen::Index j = 0; j < tile.rows(); ++j) {
      const std::size_t column = first_col + static_cast<std::size_t>(j);
      const float* similarities = tile.row(j).data();
      auto target = to_columns.column(column, similarities);
      for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
        const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
        const float* values = similarities + chunk;
        const std::uint32_t row_mask = reaching(values, count, to_rows.thresholds(0) + chunk);
        const std::uint32_t column_mask = with_columns ? reaching(values, count, target.values_threshold()) : 0;
        if ((row_mask | column_mask) == 0) continue;
        for_each_bit(row_mask, [&](Eigen::Index t) { to_rows.offer(0, chunk + t, values[t], values[t], column); });
        for_each_bit(column_mask, [&](Eigen::Index t) {
          target.offer_value(first_row + static_cast<std::size_t>(chunk + t), values[t]);
        });
      }
      target.done();
    }
    to_columns.done();
  };
  for_each_tile(X, row_begin, row_end, Z, tiles, threads, what, visit, rows.block_done());
  return columns.finish();
}

// pool_pass (passes.h) with the policy's lists.
template <typename Lists>
void pools(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
           const Eigen::VectorXf& floors, const Eigen::VectorXf& source_floors, const TileOptions& options,
           int threads, TopValues& row_top, RowPools& pool, TopValues& columns, TopCandidates& reverse) {
  const TileOptions tiles = tiles_for<Lists>(options);
  const bool with_reverse = reverse.capacity() > 0;
  Lists lists(X, Z, threads);
  const auto sink = [&](std::size_t w, std::size_t row_slot, float key, float similarity, std::uint32_t column) {
    if (w == 0) return row_top.offer(row_slot, similarity);
    pool.offer(row_slot, key, similarity, column);
  };
  const std::array<RowList, 2> row_lists{
      RowList{row_top.bounds(), row_top.capacity(), KeyOf{}},
      RowList{pool.bounds(), pool.capacity(), KeyOf{2, nullptr, floors.data()}}};
  typename Lists::template Rows<2, decltype(sink)> rows(lists, row_lists, X, row_begin,
                                                        tile_extent(tiles.rows, row_end - row_begin), Z, sink);
  typename Lists::Columns targets(
      lists, X, Z, tiles, ColumnLists{columns.capacity(), &reverse, KeyOf{2, source_floors.data(), nullptr}});
  const auto visit = [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
    auto to_rows = rows.tile(slot, first_row, first_col, tile);
    auto to_columns = targets.tile(slot, first_row, first_col, tile);
    float keys[kChunk], reverse_keys[kChunk];
    const float* row_floors = with_reverse ? source_floors.data() + first_row : nullptr;
    for (Eigen::Index j = 0; j < tile.rows(); ++j) {
      const std::size_t column = first_col + static_cast<std::size_t>(j);
      const float* similarities = tile.row(j).data();
      const float floor = floors[static_cast<Eigen::Index>(column)];
      auto target = to_columns.column(column, similarities);
      for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
        const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
        const float* values = similarities + chunk;
        for (Eigen::Index t = 0; t < count; ++t) keys[t] = doubled_minus(values[t], floor);
        const std::uint32_t row_mask = reaching(values, count, to_rows.thresholds(0) + chunk);
        // >=: an equal key may still rank before the pool's threshold by its indices; offer() decides.
        const std::uint32_t pool_mask = reaching(keys, count, to_rows.thresholds(1) + chunk);
        const std::uint32_t column_mask = reaching(values, count, target.values_threshold());
        std::uint32_t reverse_mask = 0;
        if (with_reverse) {
          for (Eigen::Index t = 0; t < count; ++t)
            reverse_keys[t] = doubled_minus(values[t], row_floors[chunk + t]);
          reverse_mask = reaching(reverse_keys, count, target.reverse_threshold());
        }
        if ((row_mask | pool_mask | column_mask | reverse_mask) == 0) continue;
        const auto source = [&](Eigen::Index t) { return first_row + static_cast<std::size_t>(chunk + t); };
        for_each_bit(reverse_mask,
                     [&](Eigen::Index t) { target.offer_reverse(source(t), reverse_keys[t], values[t]); });
        for_each_bit(row_mask, [&](Eigen::Index t) { to_rows.offer(0, chunk + t, values[t], values[t], column); });
        for_each_bit(column_mask, [&](Eigen::Index t) { target.offer_value(source(t), values[t]); });
        for_each_bit(pool_mask, [&](Eigen::Index t) { to_rows.offer(1, chunk + t, keys[t], values[t], column); });
      }
      target.done();
    }
    to_columns.done();
  };
  for_each_tile(X, row_begin, row_end, Z, tiles, threads, "CSLS one pass", visit, rows.block_done());
  columns = targets.finish();
}

// selection_pass (passes.h) with the policy's lists.
template <typename Lists>
void selection(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
               const NeighbourhoodMeans& means, const TileOptions& options, int threads, TopCandidates& row_top,
               PerSlot<TopCandidates>& target_top, PerSlot<TopCandidates>& overall_top, bool with_targets,
               bool with_overall) {
  const TileOptions tiles = tiles_for<Lists>(options);
  const float* source_means = means.source.data();
  const float* target_means = means.target.data();
  Lists lists(X, Z, threads);
  const auto sink = [&](std::size_t, std::size_t row_slot, float score, float similarity, std::uint32_t column) {
    row_top.offer(row_slot,
                  Candidate{score, similarity, static_cast<std::uint32_t>(row_begin + row_slot), column});
  };
  typename Lists::template Rows<1, decltype(sink)> rows(
      lists, {RowList{row_top.bounds(), row_top.capacity(), KeyOf{2, source_means, target_means}}}, X, row_begin,
      tile_extent(tiles.rows, row_end - row_begin), Z, sink);
  const auto visit = [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
    auto to_rows = rows.tile(slot, first_row, first_col, tile);
    TopCandidates* targets = with_targets ? &target_top[slot] : nullptr;
    TopCandidates* best = with_overall ? &overall_top[slot] : nullptr;
    for_each_csls_chunk(
        tile, first_col, source_means + first_row, target_means,
        [&](std::size_t column, const float* values, Eigen::Index chunk, Eigen::Index count, const float* scores) {
          // >=: an equal score may still rank before a bound by its indices; offer() decides.
          const std::uint32_t row_mask = reaching(scores, count, to_rows.thresholds(0) + chunk);
          const std::uint32_t target_mask = targets ? reaching(scores, count, targets->bounds()[column]) : 0;
          const std::uint32_t best_mask = best ? reaching(scores, count, best->bounds()[0]) : 0;
          if ((row_mask | target_mask | best_mask) == 0) return;
          const auto candidate = [&](Eigen::Index t) {
            return Candidate{scores[t], values[t],
                             static_cast<std::uint32_t>(first_row + static_cast<std::size_t>(chunk + t)),
                             static_cast<std::uint32_t>(column)};
          };
          for_each_bit(row_mask,
                       [&](Eigen::Index t) { to_rows.offer(0, chunk + t, scores[t], values[t], column); });
          // The target's and the overall bound rise as they keep candidates; offer() checks each against the
          // current worst.
          for_each_bit(target_mask, [&](Eigen::Index t) { targets->offer(column, candidate(t)); });
          for_each_bit(best_mask, [&](Eigen::Index t) { best->offer(0, candidate(t)); });
        });
  };
  for_each_tile(X, row_begin, row_end, Z, tiles, threads, "CSLS selection", visit, rows.block_done());
}

}  // namespace

TopValues neighbourhood_pass(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                             const TileOptions& tiles, int threads, const char* what, TopValues& row_top,
                             std::size_t column_k) {
  if (bf16_tiles(tiles))
    return neighbourhoods<Bf16Lists>(X, row_begin, row_end, Z, tiles, threads, what, row_top, column_k);
  return neighbourhoods<Fp32Lists>(X, row_begin, row_end, Z, tiles, threads, what, row_top, column_k);
}

void pool_pass(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
               const Eigen::VectorXf& floors, const Eigen::VectorXf& source_floors, const TileOptions& tiles,
               int threads, TopValues& row_top, RowPools& pool, TopValues& columns, TopCandidates& reverse) {
  if (bf16_tiles(tiles))
    return pools<Bf16Lists>(X, row_begin, row_end, Z, floors, source_floors, tiles, threads, row_top, pool,
                            columns, reverse);
  pools<Fp32Lists>(X, row_begin, row_end, Z, floors, source_floors, tiles, threads, row_top, pool, columns,
                   reverse);
}

void selection_pass(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                    const NeighbourhoodMeans& means, const TileOptions& tiles, int threads, TopCandidates& row_top,
                    PerSlot<TopCandidates>& targets, PerSlot<TopCandidates>& overall, bool with_targets,
                    bool with_overall) {
  if (bf16_tiles(tiles) && !with_targets && !with_overall)
    return selection<Bf16Lists>(X, row_begin, row_end, Z, means, tiles, threads, row_top, targets, overall, false,
                                false);
  selection<Fp32Lists>(X, row_begin, row_end, Z, means, tiles, threads, row_top, targets, overall, with_targets,
                       with_overall);
}

}  // namespace termalign::detail
