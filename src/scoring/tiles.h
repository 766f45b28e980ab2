// The tiles of X Z^T: row blocks shared out among threads, one product per tile into a reused buffer, a visitor
// per tile. The passes (passes.h) screen what the visitor sees.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "scoring/scoring.h"
#include "termalign/embeddings.h"

namespace termalign::detail {

// Rows per tile along one side: the requested size, rounded down to the kernel multiple when that much is
// requested (so only the last tile is padded), or the whole side when it fits in one tile.
std::size_t tile_extent(std::size_t requested, std::size_t n);

// A tile's similarities, stored by target: tile(j, i) = x_(first_row + i) . z_(first_col + j), so that each
// target's similarities to the tile's sources are contiguous (cols x rows, rows `stride` floats apart).
using Tile = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
// visit(slot, first_row, first_col, tile): `slot` < the thread count is owned by the calling thread for the call.
using TileVisitor = std::function<void(std::size_t, std::size_t, std::size_t, const Tile&)>;
// block_done(slot, first_row, rows): after the last tile of a row block, on the thread that visited them.
using BlockDone = std::function<void(std::size_t, std::size_t, std::size_t)>;

// Walks the tiles of X[row_begin, row_end) Z^T (X: n1 x d, Z: n2 x d, both ranges non-empty): the row blocks are
// shared out among `threads` threads and each thread computes its block's tiles in column order, one
// single-threaded GEMM per tile (similarity_product) into its own buffer (allocated once per thread). first_row is
// a row of X. No similarity value depends on the tiling, the thread count or the row range. A long walk logs its
// progress in rows of X (Progress), named `what` ("CSLS one pass") and the sizes.
// With tiles.precision bf16, the tiles hold bf16 products instead (Bf16Product, rows rounded to bf16 as they are
// used, no padding): approximations within bf16_error_bound of the fp32 values, which do not depend on the tiling
// either. block_done, when given, is called after each row block.
void for_each_tile(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                   const TileOptions& tiles, int threads, const char* what, const TileVisitor& visit,
                   const BlockDone& block_done = nullptr);

void check_tiles(const TileOptions& tiles);  // usage errors for sizes or thread counts out of range
void check_indexable(const Matrix& M);       // rows fit the 32-bit indices of the kept lists
bool bf16_tiles(const TileOptions& tiles);   // whether the tiles are bf16 products

// Locks of the column tiles, for lists shared by the threads (for_each_tile staggers their sweeps).
class ColumnTileLocks {
 public:
  ColumnTileLocks(std::size_t n2, const TileOptions& tiles, bool wanted)
      : tile_cols_(std::max<std::size_t>(tile_extent(tiles.cols, n2), 1)),
        locks_(wanted ? (n2 + tile_cols_ - 1) / tile_cols_ : 0) {}
  std::unique_lock<std::mutex> lock(std::size_t first_col) {
    if (locks_.empty()) return {};
    return std::unique_lock<std::mutex>(locks_[first_col / tile_cols_]);
  }

 private:
  std::size_t tile_cols_;
  std::vector<std::mutex> locks_;
};

}  // namespace termalign::detail
