#include "scoring/tiles.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "scoring/bf16_product.h"
#include "scoring/kernel.h"
#include "scoring/topk.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/huge_pages.h"
#include "util/parallel.h"

namespace termalign::detail {
namespace {

// Where the row blocks of X start (then n). Blocks of the requested rows (a multiple of the kernel multiple, or
// the whole side when it fits in one) while plenty of rows are left; on several threads, then, ever smaller blocks
// as the rows run out (guided scheduling): a quarter per thread of what is left, rounded down to the kernel
// multiple, at least kSmallestBlock rows. A thread that finds no block left waits for the others' last blocks,
// which are small, not full tiles. Small requests are
// kept as they are.
std::vector<std::size_t> row_block_starts(std::size_t requested, std::size_t n, int threads) {
  constexpr std::size_t kSmallestBlock = 2 * kKernelMultiple;  // smaller blocks repack Z for little work
  const std::size_t largest = tile_extent(requested, n);
  const bool guided = threads > 1 && largest >= kKernelMultiple;
  std::vector<std::size_t> starts;
  for (std::size_t first = 0; first < n;) {
    starts.push_back(first);
    std::size_t rows = largest;
    if (guided) {
      const std::size_t share = (n - first) / (2 * static_cast<std::size_t>(threads));
      rows = std::min(std::max(share - share % kKernelMultiple, kSmallestBlock), largest);
    }
    first += std::min(std::max<std::size_t>(rows, 1), n - first);
  }
  starts.push_back(n);
  return starts;
}

// `rows` rows of M from `first`, padded with zero rows to the kernel multiple: M's own storage when no padding is
// needed, else a copy into `scratch` (sized once for the largest tile).
const float* padded_rows(const Matrix& M, std::size_t first, std::size_t rows, std::size_t capacity,
                         Eigen::VectorXf& scratch) {
  const std::size_t dim = static_cast<std::size_t>(M.cols());
  const float* source = M.data() + first * dim;
  if (rows % kKernelMultiple == 0) return source;
  if (scratch.size() == 0) scratch.resize(static_cast<Eigen::Index>(capacity * dim));
  std::copy(source, source + rows * dim, scratch.data());
  std::fill(scratch.data() + rows * dim, scratch.data() + round_up(rows, kKernelMultiple) * dim, 0.0f);
  return scratch.data();
}

}  // namespace

std::size_t tile_extent(std::size_t requested, std::size_t n) {
  if (requested >= n) return n;
  return requested >= kKernelMultiple ? requested - requested % kKernelMultiple : requested;
}

void for_each_tile(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                   const TileOptions& tiles, int threads, const char* what, const TileVisitor& visit,
                   const BlockDone& block_done) {
  TERMALIGN_CHECK(X.cols() == Z.cols(), "both sides must have the same dimension");
  TERMALIGN_CHECK(row_begin <= row_end && row_end <= static_cast<std::size_t>(X.rows()), "rows within X");
  const std::size_t n1 = row_end - row_begin, n2 = static_cast<std::size_t>(Z.rows());
  const Eigen::Index dim = X.cols();
  const std::vector<std::size_t> starts = row_block_starts(tiles.rows, n1, threads);
  const std::size_t tile_cols = tile_extent(tiles.cols, n2);
  const std::size_t row_capacity = round_up(tile_extent(tiles.rows, n1), kKernelMultiple);
  const std::size_t col_capacity = round_up(tile_cols, kKernelMultiple);
  struct Workspace {
    detail::HugePageVector<float> similarities;  // the tile, in huge pages
    Eigen::VectorXf source_rows, target_rows;
    std::size_t padded_first_col = SIZE_MAX;             // the Z tile held padded in target_rows, if any
    std::vector<detail::Bf16> source_bf16, target_bf16;  // bf16 tiles: the block's rows and the tile's, rounded
    std::unique_ptr<detail::Bf16Product> bf16_product;
  };
  const bool bf16 = resolve_precision(tiles.precision) == Precision::bf16;
  // Z rounded once for all row blocks when that takes at most kRoundedOnce bytes; else each thread rounds each
  // tile as it comes (little against the products).
  constexpr std::size_t kRoundedOnce = std::size_t{64} << 20;
  std::vector<detail::Bf16> rounded_Z;
  if (bf16 && n2 * static_cast<std::size_t>(dim) * sizeof(detail::Bf16) <= kRoundedOnce) {
    rounded_Z.resize(n2 * static_cast<std::size_t>(dim));
    constexpr std::size_t kRows = 1024;
    parallel_for((n2 + kRows - 1) / kRows, threads, [&](std::size_t part) {
      const std::size_t first = part * kRows * static_cast<std::size_t>(dim);
      const std::size_t count = std::min(n2 - part * kRows, kRows) * static_cast<std::size_t>(dim);
      detail::to_bf16(Z.data() + first, count, rounded_Z.data() + first);
    });
  }
  std::vector<Workspace> workspaces(static_cast<std::size_t>(threads));
  SerialEigenProducts serial_products;
  Progress progress(std::string(what) + ", rows of " + std::to_string(n1) + " x " + std::to_string(n2) + " terms",
                    n1);
  parallel_for(starts.size() - 1, threads, [&](std::size_t block) {
    const std::size_t slot = static_cast<std::size_t>(current_thread()) % workspaces.size();
    Workspace& workspace = workspaces[slot];
    if (workspace.similarities.size() == 0) workspace.similarities.resize(row_capacity * col_capacity);
    const std::size_t first_row = row_begin + starts[block], rows = starts[block + 1] - starts[block];
    const auto lhs_rows = static_cast<Eigen::Index>(bf16 ? rows : round_up(rows, kKernelMultiple));
    const float* lhs = nullptr;
    if (bf16) {
      if (!workspace.bf16_product) {
        workspace.bf16_product = std::make_unique<detail::Bf16Product>();
        workspace.source_bf16.resize(row_capacity * static_cast<std::size_t>(dim));
        if (rounded_Z.empty()) workspace.target_bf16.resize(col_capacity * static_cast<std::size_t>(dim));
      }
      detail::to_bf16(X.data() + first_row * static_cast<std::size_t>(dim), rows * static_cast<std::size_t>(dim),
                      workspace.source_bf16.data());
    } else {
      lhs = padded_rows(X, first_row, rows, row_capacity, workspace.source_rows);
    }
    // Concurrent blocks start their sweeps at different column tiles, so that a visitor that locks a column tile
    // (pool_pass's targets' lists) seldom waits for another thread. The results do not depend on the order.
    const std::size_t col_tiles = (n2 + tile_cols - 1) / tile_cols;
    const std::size_t first_tile = col_tiles * (block % workspaces.size()) / workspaces.size();
    for (std::size_t visited = 0; visited < col_tiles; ++visited) {
      const std::size_t first_col = (first_tile + visited) % col_tiles * tile_cols;
      const std::size_t cols = std::min(tile_cols, n2 - first_col);
      if (bf16) {
        const detail::Bf16* rhs = rounded_Z.data() + first_col * static_cast<std::size_t>(dim);
        if (rounded_Z.empty()) {
          detail::to_bf16(Z.data() + first_col * static_cast<std::size_t>(dim),
                          cols * static_cast<std::size_t>(dim), workspace.target_bf16.data());
          rhs = workspace.target_bf16.data();
        }
        (*workspace.bf16_product)(workspace.source_bf16.data(), lhs_rows, rhs, static_cast<Eigen::Index>(cols),
                                  dim, workspace.similarities.data());
        visit(slot, first_row, first_col,
              Tile(workspace.similarities.data(), static_cast<Eigen::Index>(cols), static_cast<Eigen::Index>(rows),
                   Eigen::OuterStride<>(lhs_rows)));
        continue;
      }
      const auto rhs_rows = static_cast<Eigen::Index>(round_up(cols, kKernelMultiple));
      // Only a short last tile (or a whole side that is not a multiple) is padded, once per thread while it stays.
      const float* target_rows = Z.data() + first_col * static_cast<std::size_t>(dim);
      if (cols % kKernelMultiple != 0) {
        if (workspace.padded_first_col != first_col)
          padded_rows(Z, first_col, cols, col_capacity, workspace.target_rows);
        workspace.padded_first_col = first_col;
        target_rows = workspace.target_rows.data();
      }
      similarity_product(lhs, lhs_rows, target_rows, rhs_rows, dim, workspace.similarities.data());
      visit(slot, first_row, first_col,
            Tile(workspace.similarities.data(), static_cast<Eigen::Index>(cols), static_cast<Eigen::Index>(rows),
                 Eigen::OuterStride<>(lhs_rows)));
    }
    if (block_done) block_done(slot, first_row, rows);
    progress.advance(rows);
  });
  progress.finish();
}

void check_tiles(const TileOptions& tiles) {
  if (tiles.rows == 0 || tiles.cols == 0)
    throw_usage_error("Tile sizes must be at least 1 (got " + std::to_string(tiles.rows) + " x " +
                      std::to_string(tiles.cols) + ").");
  if (tiles.threads < 0)
    throw_usage_error("threads must be 0 (all cores) or a positive number (got " + std::to_string(tiles.threads) +
                      ").");
}

void check_indexable(const Matrix& M) {
  TERMALIGN_CHECK(static_cast<std::uint64_t>(M.rows()) < detail::kNoIndex, "too many rows for 32-bit indices");
}

bool bf16_tiles(const TileOptions& tiles) { return resolve_precision(tiles.precision) == Precision::bf16; }

}  // namespace termalign::detail
