// The CSLS scoring's entry points (scoring/scoring.h): the passes (passes.h) over this process's share of the
// rows, their lists merged across threads and processes, the candidates ranked and cut.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scoring/passes.h"
#include "scoring/scoring.h"
#include "scoring/screening.h"
#include "scoring/tiles.h"
#include "scoring/topk.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/distributed.h"
#include "util/parallel.h"

namespace termalign {

void check_neighbourhood_k(int k) {
  if (k < 1) throw_usage_error("The CSLS neighbourhood k must be at least 1 (got " + std::to_string(k) + ").");
}

namespace {

using detail::check_indexable;
using detail::check_tiles;
using detail::csls_score;
using detail::PerSlot;
using detail::RowPools;
using detail::TopCandidates;
using detail::TopValues;

// std::sort by RanksBefore, a strict total order (so the same result), with the halves sorted on two threads and
// then merged: about half the time of one sort for many candidates.
void sort_candidates(std::vector<Candidate>& candidates, int threads) {
  constexpr std::size_t kSmall = 2048;
  if (resolve_threads(threads) == 1 || candidates.size() < kSmall) {
    std::sort(candidates.begin(), candidates.end(), detail::RanksBefore());
    return;
  }
  const auto middle = candidates.begin() + static_cast<std::ptrdiff_t>(candidates.size() / 2);
  run_both([&] { std::sort(candidates.begin(), middle, detail::RanksBefore()); },
           [&] { std::sort(middle, candidates.end(), detail::RanksBefore()); }, threads);
  std::inplace_merge(candidates.begin(), middle, candidates.end(), detail::RanksBefore());
}

// The kept candidates in rank order, cut at `limit` (0: no cut); in a group, what every process kept is gathered
// (to rank 0) and ranked and cut again.
void rank_and_cut(std::vector<Candidate>& kept, std::size_t limit, const ProcessGroup& group, int threads) {
  const auto sort_and_cut = [&] {
    sort_candidates(kept, threads);
    if (limit > 0 && kept.size() > limit) kept.resize(limit);
  };
  sort_and_cut();
  if (group.size() > 1) {
    kept = group.gather(kept);
    sort_and_cut();
  }
}

// Mean of each slot's kept values, summed in descending order so the result does not depend on which thread
// offered what. 0 when nothing is kept (the other side is empty).
Eigen::VectorXf slot_means(const TopValues& top) {
  Eigen::VectorXf means = Eigen::VectorXf::Zero(static_cast<Eigen::Index>(top.slots()));
  if (top.capacity() == 0) return means;
  for (std::size_t slot = 0; slot < top.slots(); ++slot) {
    double sum = 0;
    for (const float* value = top.end(slot); value != top.begin(slot);) sum += *--value;  // kept ascending
    means[static_cast<Eigen::Index>(slot)] = static_cast<float>(sum / static_cast<double>(top.capacity()));
  }
  return means;
}

// Merges per-slot heaps across the group: afterwards every process's heaps keep the best of all processes'.
template <typename Heaps>
void merge_across(const ProcessGroup& group, Heaps& heaps) {
  if (group.size() == 1) return;
  auto& items = heaps.items();
  std::vector<typename std::decay_t<decltype(items)>::value_type> exchanged(items.begin(), items.end());
  group.merge_best(exchanged, heaps.capacity());
  std::copy(exchanged.begin(), exchanged.end(), items.begin());
  heaps.rebuild();
}

// The per-row values of every process's share, in row order, on every process.
Eigen::VectorXf gathered(const ProcessGroup& group, const Eigen::VectorXf& own) {
  if (group.size() == 1) return own;
  const std::vector<float> all = group.all_gather(std::vector<float>(own.data(), own.data() + own.size()));
  return Eigen::Map<const Eigen::VectorXf>(all.data(), static_cast<Eigen::Index>(all.size()));
}

// One pass over the tiles of this process's share of X's rows, keeping the k largest similarities of each of its
// rows and, when `with_columns`, of each row of Z (per-thread, then per-process column structures merged). k is
// clipped to the other side's size. Every process gets the means of all rows.
NeighbourhoodMeans scan_neighbourhoods(const Matrix& X, const Matrix& Z, int k, const TileOptions& tiles,
                                       bool with_columns, const ProcessGroup& group) {
  check_neighbourhood_k(k);
  check_tiles(tiles);
  const std::size_t n1 = static_cast<std::size_t>(X.rows()), n2 = static_cast<std::size_t>(Z.rows());
  const auto [row_begin, row_end] = row_share(n1, group.rank(), group.size());
  const float lowest = -std::numeric_limits<float>::infinity();
  TopValues row_top(row_end - row_begin, std::min<std::size_t>(static_cast<std::size_t>(k), n2), lowest);
  // Without columns, capacity 0: bounds of +inf that nothing reaches.
  const std::size_t column_k = with_columns ? std::min<std::size_t>(static_cast<std::size_t>(k), n1) : 0;
  TopValues columns(n2, column_k, lowest);
  if (row_end > row_begin && n2 > 0)
    columns =
        detail::neighbourhood_pass(X, row_begin, row_end, Z, tiles, resolve_threads(tiles.threads),
                                   with_columns ? "CSLS neighbourhoods" : "nearest neighbours", row_top, column_k);
  NeighbourhoodMeans means;
  means.source = gathered(group, slot_means(row_top));
  if (with_columns) {
    merge_across(group, columns);
    means.target = slot_means(columns);
  }
  return means;
}

// Each target's kept sources (the reverse lists of pool_pass) scored by CSLS, its `m` best: grouped by target in
// ascending order, each group in ranks_before order.
std::vector<Candidate> reverse_lists(const TopCandidates& reverse, const NeighbourhoodMeans& means,
                                     std::size_t m) {
  std::vector<Candidate> lists;
  lists.reserve(reverse.slots() * m);
  std::vector<Candidate> list;
  for (std::size_t column = 0; column < reverse.slots(); ++column) {
    list.clear();
    for (const Candidate* c = reverse.begin(column); c != reverse.end(column); ++c) {
      if (c->source == detail::kNoIndex) continue;
      list.push_back(Candidate{csls_score(c->cosine, means.source[static_cast<Eigen::Index>(c->source)],
                                          means.target[static_cast<Eigen::Index>(column)]),
                               c->cosine, c->source, c->target});
    }
    std::sort(list.begin(), list.end(), detail::RanksBefore());
    lists.insert(lists.end(), list.begin(), list.begin() + static_cast<std::ptrdiff_t>(std::min(m, list.size())));
  }
  return lists;
}

}  // namespace

NeighbourhoodMeans neighbourhood_means(const Matrix& X, const Matrix& Z, int k, const TileOptions& tiles,
                                       const ProcessGroup& group) {
  return scan_neighbourhoods(X, Z, k, tiles, true, group);
}

Eigen::VectorXf knn_mean_similarity(const Matrix& Q, const Matrix& D, int k, const TileOptions& tiles,
                                    const ProcessGroup& group) {
  return scan_neighbourhoods(Q, D, k, tiles, false, group).source;
}

std::vector<Candidate> select_csls_candidates(const Matrix& X, const Matrix& Z, const NeighbourhoodMeans& means,
                                              const SelectionOptions& selection, const TileOptions& tiles,
                                              const ProcessGroup& group) {
  check_tiles(tiles);
  check_indexable(X);
  check_indexable(Z);
  const std::size_t n1 = static_cast<std::size_t>(X.rows()), n2 = static_cast<std::size_t>(Z.rows());
  TERMALIGN_CHECK(static_cast<std::size_t>(means.source.size()) == n1, "one source mean per row of X");
  TERMALIGN_CHECK(static_cast<std::size_t>(means.target.size()) == n2, "one target mean per row of Z");
  if (selection.top_m == 0 && selection.mutual_m == 0 && selection.limit == 0)
    throw_usage_error(
        "Without a per-source limit (top_m = 0) and without mutual_m, a limit on the number of pairs is needed: "
        "otherwise every pair would be kept.");
  if (n1 == 0 || n2 == 0) return {};

  const auto [row_begin, row_end] = row_share(n1, group.rank(), group.size());
  const std::size_t per_source = std::min(selection.top_m, n2);
  const std::size_t per_target = std::min(selection.mutual_m, n1);
  // Without per-source or per-target lists, each thread keeps its `limit` best pairs overall.
  const std::size_t overall = per_source == 0 && per_target == 0 ? selection.limit : 0;
  const Candidate sentinel = detail::sentinel_candidate();
  // A disabled list has capacity 0: bounds of +inf that no score reaches.
  TopCandidates row_top(row_end - row_begin, per_source, sentinel);
  const int threads = resolve_threads(tiles.threads);
  PerSlot<TopCandidates> column_top(static_cast<std::size_t>(threads),
                                    [&] { return TopCandidates(n2, per_target, sentinel); });
  PerSlot<TopCandidates> overall_top(static_cast<std::size_t>(threads),
                                     [&] { return TopCandidates(1, overall, sentinel); });

  if (row_end > row_begin)
    detail::selection_pass(X, row_begin, row_end, Z, means, tiles, threads, row_top, column_top, overall_top,
                           per_target > 0, overall > 0);

  std::vector<Candidate> kept;
  const auto keep_real = [&](const TopCandidates& top, std::size_t slot, const TopCandidates* within) {
    for (const Candidate* c = top.begin(slot); c != top.end(slot); ++c) {
      if (c->source == detail::kNoIndex) continue;
      // Within the target's list: the candidate does not rank after its worst kept source.
      if (within != nullptr && ranks_before(within->worst(c->target), *c)) continue;
      kept.push_back(*c);
    }
  };
  // The target lists are complete once merged across the group; each process then keeps its own rows' pairs (or,
  // with target lists only, its share of the targets), and rank 0 gathers them.
  if (per_source > 0) {
    TopCandidates target_lists = column_top.merged();
    merge_across(group, target_lists);
    for (std::size_t slot = 0; slot < row_top.slots(); ++slot)
      keep_real(row_top, slot, per_target > 0 ? &target_lists : nullptr);
  } else if (per_target > 0) {
    TopCandidates target_lists = column_top.merged();
    merge_across(group, target_lists);
    const auto [column_begin, column_end] = row_share(n2, group.rank(), group.size());
    for (std::size_t column = column_begin; column < column_end; ++column)
      keep_real(target_lists, column, nullptr);
  } else {
    keep_real(overall_top.merged(), 0, nullptr);
  }
  rank_and_cut(kept, selection.limit, group, threads);
  logger().debug("CSLS selection: {} x {} terms, {} candidate pairs kept", n1, n2, kept.size());
  return kept;
}

CslsSelection csls_select(const Matrix& X, const Matrix& Z, int k, const SelectionOptions& selection,
                          const TileOptions& tiles, std::size_t pool, const ProcessGroup& group,
                          std::size_t reverse_m) {
  CslsSelection result;
  const std::size_t n1 = static_cast<std::size_t>(X.rows()), n2 = static_cast<std::size_t>(Z.rows());
  if (selection.top_m == 0 || selection.mutual_m > 0 || n1 == 0 || n2 == 0) {
    result.means = neighbourhood_means(X, Z, k, tiles, group);
    result.candidates = select_csls_candidates(X, Z, result.means, selection, tiles, group);
    return result;
  }
  check_neighbourhood_k(k);
  check_tiles(tiles);
  check_indexable(X);
  check_indexable(Z);
  // Named variables, not a structured binding: lambdas below capture them (C++17 cannot capture bindings).
  const std::pair<std::size_t, std::size_t> share = row_share(n1, group.rank(), group.size());
  const std::size_t row_begin = share.first, row_end = share.second;
  const std::size_t row_k = std::min<std::size_t>(static_cast<std::size_t>(k), n2);
  const std::size_t column_k = std::min<std::size_t>(static_cast<std::size_t>(k), n1);
  const std::size_t per_source = std::min(selection.top_m, n2);
  const std::size_t pool_size = std::min(n2, std::max(pool > 0 ? pool : 4 * selection.top_m, per_source));

  // Floors of r_S from every kSampleStride-th row of X: the k largest of a subset are each at most the k largest
  // of all rows, so floor_j <= r_S(j) and the key 2 x.z_j - floor_j >= CSLS(x, z_j) + r_T(x).
  constexpr std::size_t kSampleStride = 8;
  const auto every = [](const Matrix& M, std::size_t stride) {
    Matrix sample((M.rows() + static_cast<Eigen::Index>(stride) - 1) / static_cast<Eigen::Index>(stride),
                  M.cols());
    for (Eigen::Index r = 0; r < sample.rows(); ++r) sample.row(r) = M.row(r * static_cast<Eigen::Index>(stride));
    return sample;
  };
  const std::size_t stride = (n1 + kSampleStride - 1) / kSampleStride >= column_k ? kSampleStride : 1;
  const Eigen::VectorXf floors = scan_neighbourhoods(Z, every(X, stride), k, tiles, false, group).source;
  // The targets' lists: each target keeps its 2 reverse_m sources by the key 2 x_i.z - an estimate of r_T(x_i)
  // from every kReverseStride-th target, at most kReverseSample of them (CSLS up to the target's constant), then
  // the reverse_m best by CSLS. An estimate, not a bound: a larger sample moves a target's list only where the
  // estimates' errors reorder its sources around the 2 reverse_m-th; past 16 x 4096 targets the sample stays at
  // 4096, which keeps the pass over n1 x sample short and barely moves the lists.
  constexpr std::size_t kReverseStride = 16, kReverseSample = 4096;
  const std::size_t reverse_capacity = std::min(2 * reverse_m, n1);
  Eigen::VectorXf source_floors;
  if (reverse_capacity > 0) {
    const std::size_t wide_stride = std::max(kReverseStride, (n2 + kReverseSample - 1) / kReverseSample);
    const std::size_t sample_stride = (n2 + wide_stride - 1) / wide_stride >= row_k ? wide_stride : 1;
    source_floors = scan_neighbourhoods(X, every(Z, sample_stride), k, tiles, false, group).source;
  }

  const float lowest = -std::numeric_limits<float>::infinity();
  TopValues row_top(row_end - row_begin, row_k, lowest);
  // The bf16 pass offers each row's pool only the items of its window (a few more than the pool keeps), rescored:
  // a smaller buffer.
  const bool bf16 = detail::bf16_tiles(tiles);
  RowPools pools(row_end - row_begin, pool_size, bf16 ? pool_size + 8 : 0);
  TopValues columns(n2, column_k, lowest);
  TopCandidates reverse(reverse_capacity > 0 ? n2 : 0, reverse_capacity, detail::sentinel_candidate());
  const int threads = resolve_threads(tiles.threads);
  if (row_end > row_begin)
    detail::pool_pass(X, row_begin, row_end, Z, floors, source_floors, tiles, threads, row_top, pools, columns,
                      reverse);
  merge_across(group, columns);
  if (reverse.capacity() > 0) merge_across(group, reverse);
  pools.finish(tiles.threads);
  result.means.source = gathered(group, slot_means(row_top));
  result.means.target = slot_means(columns);
  row_top = TopValues(0, 0, lowest);

  // Each row's top_m from its pool when the bound proves that no other target could enter it: for an unseen
  // target, CSLS <= its key - r_T(x) <= the pool's smallest key - r_T(x). The margin covers the rounding of the
  // three float expressions (values within [-4, 4], a few ulps of 4.8e-7).
  constexpr float kMargin = 1e-5f;
  const float* target_means = result.means.target.data();
  std::vector<std::vector<Candidate>> from_pool(pools.slots());
  std::vector<char> rescore(pools.slots(), 0);
  parallel_for(pools.slots(), threads, [&](std::size_t slot) {
    const float row_mean = result.means.source[static_cast<Eigen::Index>(row_begin + slot)];
    std::vector<Candidate> best = pools.candidates(slot, static_cast<std::uint32_t>(row_begin + slot));
    for (Candidate& c : best) c.score = csls_score(c.cosine, row_mean, target_means[c.target]);
    std::partial_sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(per_source), best.end(),
                      detail::RanksBefore());
    best.resize(per_source);
    const float unseen_bound = pools.worst_key(slot) - row_mean;
    if (pool_size == n2 || unseen_bound + kMargin < best.back().score) {
      from_pool[slot] = std::move(best);
    } else {
      rescore[slot] = 1;
    }
  });
  std::vector<Candidate> kept;
  std::vector<std::size_t> rows;
  for (std::size_t slot = 0; slot < pools.slots(); ++slot) {
    kept.insert(kept.end(), from_pool[slot].begin(), from_pool[slot].end());
    if (rescore[slot]) rows.push_back(row_begin + slot);
  }
  from_pool = {};
  pools = RowPools(0, 0);
  // The targets' lists are drawn once the pools are freed, so the two never peak together.
  if (reverse.capacity() > 0) {
    result.has_reverse = true;
    if (group.is_root()) result.reverse = reverse_lists(reverse, result.means, std::min(reverse_m, n1));
    reverse = TopCandidates(0, 0, detail::sentinel_candidate());
  }
  if (!rows.empty()) {
    // The similarities do not depend on the tiling or on a row's place (for_each_tile): rescoring these rows on
    // their own gives the values the full second pass would have.
    Matrix X_rows(static_cast<Eigen::Index>(rows.size()), X.cols());
    NeighbourhoodMeans means;
    means.source.resize(static_cast<Eigen::Index>(rows.size()));
    means.target = result.means.target;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      X_rows.row(static_cast<Eigen::Index>(r)) = X.row(static_cast<Eigen::Index>(rows[r]));
      means.source[static_cast<Eigen::Index>(r)] = result.means.source[static_cast<Eigen::Index>(rows[r])];
    }
    SelectionOptions per_row;
    per_row.top_m = selection.top_m;
    for (Candidate c : select_csls_candidates(X_rows, Z, means, per_row, tiles, single_process())) {
      c.source = static_cast<std::uint32_t>(rows[c.source]);
      kept.push_back(c);
    }
  }
  result.rescored_rows = rows.size();
  rank_and_cut(kept, selection.limit, group, threads);
  logger().debug("CSLS in one pass: {} x {} terms, pools of {}, {} of {} rows rescored, {} candidate pairs", n1,
                 n2, pool_size, rows.size(), row_end - row_begin, kept.size());
  result.candidates = std::move(kept);
  return result;
}

}  // namespace termalign
