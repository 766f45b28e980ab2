// The passes over the tiles of X Z^T (X: n1 x d, Z: n2 x d, row-major, unit rows), each one code path for fp32
// and bf16 tiles (lists.h says how they differ): over this process's share [row_begin, row_end) of X's rows, both
// sides non-empty, results in `threads` threads identical to one thread's, each process's part unmerged.
#pragma once

#include <Eigen/Core>
#include <cstddef>

#include "scoring/scoring.h"
#include "scoring/screening.h"
#include "scoring/topk.h"
#include "termalign/embeddings.h"

namespace termalign::detail {

// The neighbourhoods: row_top (a slot per row of the share) keeps each row's largest similarities; returns each
// row of Z's column_k largest (none when column_k is 0). `what` names the pass in the progress log.
TopValues neighbourhood_pass(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                             const TileOptions& tiles, int threads, const char* what, TopValues& row_top,
                             std::size_t column_k);

// The fused pass of csls_select: each row keeps its largest similarities (row_top) and its best targets by the
// key 2 x.z_j - floors(j) (pool: score = the key, cosine = the similarity); each column keeps its largest
// similarities (`columns`, capacity as given). With `reverse` of a non-zero capacity (a slot per column), each
// column also keeps its sources of highest key 2 x_i.z - source_floors(i) (score: the key, cosine: the
// similarity).
void pool_pass(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
               const Eigen::VectorXf& floors, const Eigen::VectorXf& source_floors, const TileOptions& tiles,
               int threads, TopValues& row_top, RowPools& pool, TopValues& columns, TopCandidates& reverse);

// The CSLS selection: row_top (a slot per row of the share; capacity 0: none) keeps each row's best candidates by
// CSLS, `targets` (per thread, capacity 0: none) each target's, `overall` (per thread, one slot, capacity 0: none)
// the best of all. bf16 tiles serve the per-row lists alone: with the others the pass takes fp32 tiles.
void selection_pass(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                    const NeighbourhoodMeans& means, const TileOptions& tiles, int threads, TopCandidates& row_top,
                    PerSlot<TopCandidates>& targets, PerSlot<TopCandidates>& overall, bool with_targets,
                    bool with_overall);

}  // namespace termalign::detail
