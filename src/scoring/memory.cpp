// The scoring's memory: its estimate, and the guard that shrinks the tiles to fit the limit.
#include <algorithm>
#include <string>

#include "scoring/scoring.h"
#include "scoring/topk.h"
#include "termalign/error.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "util/parallel.h"
#include "util/resources.h"

namespace termalign {

namespace {

// The smallest tiles the guard goes down to: the GEMM kernel pads tiles to 48 rows anyway.
constexpr std::size_t kSmallestTile = 48;
constexpr std::size_t kFloat = sizeof(float);
constexpr std::size_t kCandidate = sizeof(Candidate);

std::size_t round_up(std::size_t n, std::size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Threads that can own a workspace: no more than there are row blocks.
std::size_t working_threads(std::size_t n1, const TileOptions& tiles) {
  const std::size_t rows = std::max<std::size_t>(std::min(tiles.rows, n1), 1);
  const std::size_t row_blocks = std::max<std::size_t>((n1 + rows - 1) / rows, 1);
  return std::min(static_cast<std::size_t>(resolve_threads(tiles.threads)), row_blocks);
}

}  // namespace

ScoringMemory estimate_scoring_memory(const ScoringShape& shape, const AlignConfig& config,
                                      const TileOptions& tiles) {
  const std::size_t n1 = shape.source_terms, n2 = shape.target_terms, d = shape.dim;
  const std::size_t threads = working_threads(n1, tiles);
  ScoringMemory memory;
  memory.term_matrices = (n1 + n2) * d * kFloat;
  if (config.scoring.neighbourhood == Neighbourhood::vocabulary) {
    memory.term_matrices += 2 * config.scoring.neighbourhood_words * d * kFloat;
  }
  const std::size_t row_capacity = round_up(std::min(tiles.rows, std::max<std::size_t>(n1, 1)), kSmallestTile);
  const std::size_t col_capacity = round_up(std::min(tiles.cols, std::max<std::size_t>(n2, 1)), kSmallestTile);
  memory.tile_buffers = threads * (row_capacity * col_capacity + (row_capacity + col_capacity) * d) * kFloat;

  // Neighbourhood pass: k values per row, per column in each thread and in the merge.
  const std::size_t k = static_cast<std::size_t>(std::max(config.scoring.k, 0));
  const std::size_t neighbourhoods = (n1 * std::min(k, n2) + (threads + 1) * n2 * std::min(k, n1)) * kFloat;
  // Selection pass: m candidates per row, mutual_m per column in each thread and in the merge, or the cap.
  const std::size_t cap =
      config.ranking.cap > 0 ? std::min(config.ranking.cap, submission_cap(n1, n2)) : submission_cap(n1, n2);
  const std::size_t per_source = std::min(config.ranking.top_m, n2),
                    per_target = std::min(config.ranking.mutual_m, n1);
  const std::size_t overall = per_source == 0 && per_target == 0 ? cap : 0;
  const std::size_t selection = (n1 * per_source + (threads + 1) * (n2 * per_target + overall)) * kCandidate;
  // The fused pass of csls_select (terms neighbourhoods, top_m without mutual_m): a pool per row (a buffer of
  // twice its size, detail::RowPools) and k values per column in each thread and in the merge.
  std::size_t fused = 0;
  if (config.scoring.neighbourhood == Neighbourhood::terms && per_source > 0 && per_target == 0) {
    const std::size_t requested =
        config.scoring.candidate_pool > 0 ? config.scoring.candidate_pool : 4 * per_source;
    const std::size_t pool = std::min(n2, std::max(requested, per_source));
    fused = n1 * (detail::RowPools::bytes_per_slot(pool) + std::min(k, n2) * kFloat) +
            (threads + 1) * n2 * std::min(k, n1) * kFloat;
    // The targets' lists (one set shared by the threads): twice the sources each keeps, as csls_select's.
    fused += n2 * std::min(2 * shape.target_lists, n1) * kCandidate;
  }
  memory.top_lists = std::max({neighbourhoods, selection, fused});
  memory.candidates = (per_source > 0 ? n1 * per_source : per_target > 0 ? n2 * per_target : overall) * kCandidate;
  return memory;
}

void guard_scoring_memory(const Matrix& X, const Matrix& Z, const AlignConfig& config, TileOptions& tiles,
                          std::size_t target_lists, std::size_t held_bytes) {
  auto limit = memory_limit();
  if (limit && fixed_memory_limit()) limit = *limit > held_bytes ? *limit - held_bytes : 0;
  const ScoringShape shape{static_cast<std::size_t>(X.rows()), static_cast<std::size_t>(Z.rows()),
                           static_cast<std::size_t>(X.cols()), target_lists};
  ScoringMemory needed = estimate_scoring_memory(shape, config, tiles);
  logger().debug("scoring needs about {} (limit {})", format_bytes(needed.total()),
                 limit ? format_bytes(*limit) : std::string("none"));
  if (!limit || needed.total() <= *limit) return;
  const TileOptions requested = tiles;
  while (needed.total() > *limit && (tiles.rows > kSmallestTile || tiles.cols > kSmallestTile)) {
    // Halve the larger side first: the tile buffer is rows x cols.
    std::size_t& side = tiles.cols >= tiles.rows ? tiles.cols : tiles.rows;
    side = std::max(side / 2, kSmallestTile);
    needed = estimate_scoring_memory(shape, config, tiles);
  }
  if (needed.total() <= *limit) {
    logger().warn("scoring with {} x {} tiles needs more than the {} allowed; using {} x {} tiles ({})",
                  requested.rows, requested.cols, format_bytes(*limit), tiles.rows, tiles.cols,
                  format_bytes(needed.total()));
    return;
  }
  throw Error(ErrorKind::resources,
              "Scoring " + std::to_string(shape.source_terms) + " x " + std::to_string(shape.target_terms) +
                  " terms needs about " + format_bytes(needed.total()) + " (term vectors " +
                  format_bytes(needed.term_matrices) + ", tiles " + format_bytes(needed.tile_buffers) +
                  ", top-k lists " + format_bytes(needed.top_lists) + ", candidates " +
                  format_bytes(needed.candidates) + ") even with the smallest tiles, but only " +
                  format_bytes(*limit) +
                  " may be used (TERMALIGN_MAX_MEMORY_MB, or the available memory): raise "
                  "TERMALIGN_MAX_MEMORY_MB or free memory, use fewer --threads, or lower --k, --top-m or "
                  "--mutual-m.");
}

}  // namespace termalign
