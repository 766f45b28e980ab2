#include "termalign/scoring.h"

#include <omp.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#if TERMALIGN_WITH_OPENBLAS
#include <cblas.h>
// Stops the server threads of OpenBLAS's pthread build (what OpenBLAS itself calls before a fork); absent from
// its serial and OpenMP builds, hence weak.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "detail/huge_pages.h"
#include "detail/topk.h"
#include "termalign/distributed.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "termalign/parallel.h"

namespace termalign {
namespace {

using detail::RowPools;
using detail::SharedBounds;
using detail::TopCandidates;
using detail::TopValues;

// std::sort by RanksBefore, a strict total order (so the same result), with the halves sorted on two threads and
// then merged: about half the time for the 200,000 candidates of 20k x 20k terms.
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

// Eigen rounds a dot product differently depending on the micro-kernel that computes it, which it picks by the
// element's place in the product (its widest kernel covers 3 packets of rows and 4 columns; leftovers use others,
// some with two accumulators) and switches to a coefficient loop for tiny products. Every GEMM here is padded
// with zero rows to multiples of this on both sides, so every similarity goes through the widest kernel and its
// value depends neither on the tiling nor on where the row lands in it: duplicate rows tie exactly. 48 is a
// multiple of the widest kernel's rows for floats with SSE, AVX and AVX-512 (12, 24, 48) and of its columns (4).
constexpr std::size_t kKernelMultiple = 48;

std::size_t round_up(std::size_t n, std::size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Eigen evaluates Z_tile X_tile^T into a row-major buffer as X_tile Z_tile^T into a column-major one: the larger Z
// tile is then packed as the kernel's right-hand side, which costs less than packing it as the left-hand side
// (perf: 9 % against 14 % of the cycles with 240 x 2016 tiles at d = 300).
void eigen_product(const float* lhs, Eigen::Index lhs_rows, const float* rhs, Eigen::Index rhs_rows,
                   Eigen::Index dim, float* out) {
  const Eigen::Map<const Matrix> left(lhs, lhs_rows, dim), right(rhs, rhs_rows, dim);
  Eigen::Map<Matrix>(out, rhs_rows, lhs_rows).noalias() = right * left.transpose();
}

#if TERMALIGN_WITH_OPENBLAS
// Column-major, out is lhs_rows x rhs_rows = lhs rhs^T: lhs (row-major) is lhs^T column-major, rhs is rhs^T.
void openblas_product(const float* lhs, Eigen::Index lhs_rows, const float* rhs, Eigen::Index rhs_rows,
                      Eigen::Index dim, float* out) {
  cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<blasint>(lhs_rows),
              static_cast<blasint>(rhs_rows), static_cast<blasint>(dim), 1.0f, lhs, static_cast<blasint>(dim), rhs,
              static_cast<blasint>(dim), 0.0f, out, static_cast<blasint>(lhs_rows));
}

// Whether OpenBLAS's kernel gives a dot product the same bits wherever it lies in a product of the sizes the tiles
// use (multiples of 48): identical rows on both sides must give identical elements, in one product and across
// products of other sizes. Its AVX-512 kernels (SkylakeX, Cooperlake) do; its AVX2 kernels (Haswell, Zen) round
// by position, which would make the results depend on the tiling and the thread count.
bool openblas_rounds_alike() {
  std::mt19937 generator(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Eigen::Index dim : {5, 17, 64, 100, 300}) {
    RowVector x(dim), z(dim);
    for (Eigen::Index c = 0; c < dim; ++c) x[c] = normal(generator), z[c] = normal(generator);
    float expected = 0;
    bool first = true;
    for (const Eigen::Index rows : {48, 144}) {
      for (const Eigen::Index cols : {48, 96}) {
        const Matrix lhs = x.replicate(rows, 1), rhs = z.replicate(cols, 1);
        std::vector<float> out(static_cast<std::size_t>(rows * cols));
        openblas_product(lhs.data(), rows, rhs.data(), cols, dim, out.data());
        if (first) expected = out[0], first = false;
        for (const float value : out)
          if (value != expected) return false;
      }
    }
  }
  return true;
}
#endif

// The kernel similarity_product uses, chosen on first use after the last setting: OpenBLAS when termalign is
// built with it, OpenBLAS runs single-threaded (use_single_threaded_blas, or OPENBLAS_NUM_THREADS=1), its kernel
// on this machine rounds alike in every position and set_tile_kernel did not ask for Eigen; else Eigen. Nothing
// here changes the process: a program decides (the CLI calls use_single_threaded_blas at start).
struct TileKernel {
  bool openblas = false;
  std::string description;
};

std::mutex tile_kernel_mutex;
TileKernelChoice wanted_kernel = TileKernelChoice::automatic;
std::shared_ptr<const TileKernel> chosen_kernel;  // reset by the settings below

TileKernel choose_tile_kernel() {
  const std::string eigen = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                            std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
  TileKernel kernel{false, eigen};
#if TERMALIGN_WITH_OPENBLAS
  if (wanted_kernel == TileKernelChoice::eigen) return kernel;
  const std::string openblas = std::string("OpenBLAS (core ") + openblas_get_corename() + ")";
  // The tiles are shared out among OpenMP threads and each product must run on its caller's thread alone: a
  // multi-threaded OpenBLAS would share out each product again (and its threads are the process's, NumPy's too).
  if (openblas_get_num_threads() != 1) {
    if (wanted_kernel == TileKernelChoice::openblas)
      throw_usage_error(
          "The OpenBLAS tile kernel needs OpenBLAS single-threaded: call use_single_threaded_blas() "
          "first (the CLI does).");
    return {false, eigen + " (" + openblas + " runs " + std::to_string(openblas_get_num_threads()) + " threads)"};
  }
  if (wanted_kernel == TileKernelChoice::openblas) return {true, openblas};
  return openblas_rounds_alike()
             ? TileKernel{true, openblas}
             : TileKernel{false, eigen + " (" + openblas + " rounds a product by its place in the tile)"};
#else
  if (wanted_kernel == TileKernelChoice::openblas)
    throw_usage_error("The OpenBLAS tile kernel was asked for: this build has no OpenBLAS.");
  return kernel;
#endif
}

std::shared_ptr<const TileKernel> tile_kernel() {
  std::lock_guard<std::mutex> lock(tile_kernel_mutex);
  if (!chosen_kernel) chosen_kernel = std::make_shared<const TileKernel>(choose_tile_kernel());
  return chosen_kernel;
}

}  // namespace

TileKernelChoice parse_tile_kernel(const std::string& name) {
  if (name == "auto") return TileKernelChoice::automatic;
  if (name == "eigen") return TileKernelChoice::eigen;
  if (name == "openblas") return TileKernelChoice::openblas;
  throw_usage_error("TERMALIGN_TILE_KERNEL must be auto, eigen or openblas (got \"" + name + "\").");
}

void set_tile_kernel(TileKernelChoice choice) {
  std::lock_guard<std::mutex> lock(tile_kernel_mutex);
  wanted_kernel = choice;
  chosen_kernel.reset();
}

void use_single_threaded_blas() {
#if TERMALIGN_WITH_OPENBLAS
  // The pthread build of OpenBLAS starts a server thread per core when it loads, which spins (sched_yield) until a
  // timeout: 0.13 s of CPU per run here, taken from the OpenMP threads when they fill every core. With one thread
  // it needs none, so they are stopped (and would start again if a product ever asked for threads).
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
#endif
  std::lock_guard<std::mutex> lock(tile_kernel_mutex);
  chosen_kernel.reset();
}

void similarity_product(const float* lhs, Eigen::Index lhs_rows, const float* rhs, Eigen::Index rhs_rows,
                        Eigen::Index dim, float* out) {
#if TERMALIGN_WITH_OPENBLAS
  if (tile_kernel()->openblas) return openblas_product(lhs, lhs_rows, rhs, rhs_rows, dim, out);
#endif
  eigen_product(lhs, lhs_rows, rhs, rhs_rows, dim, out);
}

std::string similarity_kernel() { return tile_kernel()->description; }

namespace {

// Rows per tile along one side: the requested size, rounded down to the kernel multiple when that much is
// requested (so only the last tile is padded), or the whole side when it fits in one tile.
std::size_t tile_extent(std::size_t requested, std::size_t n) {
  if (requested >= n) return n;
  return requested >= kKernelMultiple ? requested - requested % kKernelMultiple : requested;
}

// Where the row blocks of X start (then n). Blocks of the requested rows (a multiple of the kernel multiple, or
// the whole side when it fits in one) while plenty of rows are left; on several threads, then, ever smaller blocks
// as the rows run out (guided scheduling): a quarter per thread of what is left, rounded down to the kernel
// multiple, at least kSmallestBlock rows. A thread that finds no block left waits for the others' last blocks,
// which are small, not full tiles (at 20k terms a full block is 480 rows, 40 ms on one core). Small requests are
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

// A tile's similarities, stored by target: tile(j, i) = x_(first_row + i) . z_(first_col + j), so that each
// target's similarities to the tile's sources are contiguous (cols x rows, rows `stride` floats apart).
using Tile = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
// visit(slot, first_row, first_col, tile): `slot` < the thread count is owned by the calling thread for the call.
using TileVisitor = std::function<void(std::size_t, std::size_t, std::size_t, const Tile&)>;

// Walks the tiles of X[row_begin, row_end) Z^T (X: n1 x d, Z: n2 x d, both ranges non-empty): the row blocks are
// shared out among `threads` threads and each thread computes its block's tiles in column order, one
// single-threaded GEMM per tile (similarity_product) into its own buffer (allocated once per thread). first_row is
// a row of X. No similarity value depends on the tiling, the thread count or the row range. A long walk logs its
// progress in rows of X (Progress), named `what` ("CSLS one pass") and the sizes.
void for_each_tile(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                   const TileOptions& tiles, int threads, const char* what, const TileVisitor& visit) {
  TERMALIGN_CHECK(X.cols() == Z.cols(), "both sides must have the same dimension");
  TERMALIGN_CHECK(row_begin <= row_end && row_end <= static_cast<std::size_t>(X.rows()), "rows within X");
  const std::size_t n1 = row_end - row_begin, n2 = static_cast<std::size_t>(Z.rows());
  const Eigen::Index dim = X.cols();
  const std::vector<std::size_t> starts = row_block_starts(tiles.rows, n1, threads);
  const std::size_t tile_cols = tile_extent(tiles.cols, n2);
  const std::size_t row_capacity = round_up(tile_extent(tiles.rows, n1), kKernelMultiple);
  const std::size_t col_capacity = round_up(tile_cols, kKernelMultiple);
  struct Workspace {
    detail::HugePageVector<float> similarities;  // the tile: 3.9 MB with the default tiles, in huge pages
    Eigen::VectorXf source_rows, target_rows;
    std::size_t padded_first_col = SIZE_MAX;  // the Z tile held padded in target_rows, if any
  };
  std::vector<Workspace> workspaces(static_cast<std::size_t>(threads));
  SerialEigenProducts serial_products;
  Progress progress(std::string(what) + ", rows of " + std::to_string(n1) + " x " + std::to_string(n2) + " terms",
                    n1);
  parallel_for(starts.size() - 1, threads, [&](std::size_t block) {
    const std::size_t slot = static_cast<std::size_t>(current_thread()) % workspaces.size();
    Workspace& workspace = workspaces[slot];
    if (workspace.similarities.size() == 0)
      workspace.similarities.resize(row_capacity * col_capacity);
    const std::size_t first_row = row_begin + starts[block], rows = starts[block + 1] - starts[block];
    const auto lhs_rows = static_cast<Eigen::Index>(round_up(rows, kKernelMultiple));
    const float* lhs = padded_rows(X, first_row, rows, row_capacity, workspace.source_rows);
    // Concurrent blocks start their sweeps at different column tiles, so that a visitor that locks a column tile
    // (scan_pools' targets' lists) seldom waits for another thread. The results do not depend on the order.
    const std::size_t col_tiles = (n2 + tile_cols - 1) / tile_cols;
    const std::size_t first_tile = col_tiles * (block % workspaces.size()) / workspaces.size();
    for (std::size_t visited = 0; visited < col_tiles; ++visited) {
      const std::size_t first_col = (first_tile + visited) % col_tiles * tile_cols;
      const std::size_t cols = std::min(tile_cols, n2 - first_col);
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

// Tile rows are screened in chunks of kChunk values: one mask per chunk and structure (which values reach its
// bounds), then offers only for the set bits, so a chunk with nothing to offer costs a few vector instructions and
// one with entrants no hard-to-predict branch per value.
constexpr Eigen::Index kChunk = 16;

// Bit t is set when values[t] >= bounds[t] (t < n <= kChunk).
inline std::uint32_t reaching(const float* values, Eigen::Index n, const float* bounds) {
#if defined(__AVX512F__)
  if (n == kChunk) return _mm512_cmp_ps_mask(_mm512_loadu_ps(values), _mm512_loadu_ps(bounds), _CMP_GE_OQ);
#elif defined(__AVX__)
  if (n == kChunk) {
    const auto low = _mm256_cmp_ps(_mm256_loadu_ps(values), _mm256_loadu_ps(bounds), _CMP_GE_OQ);
    const auto high = _mm256_cmp_ps(_mm256_loadu_ps(values + 8), _mm256_loadu_ps(bounds + 8), _CMP_GE_OQ);
    return static_cast<std::uint32_t>(_mm256_movemask_ps(low)) |
           static_cast<std::uint32_t>(_mm256_movemask_ps(high)) << 8;
  }
#endif
  std::uint32_t mask = 0;
  for (Eigen::Index t = 0; t < n; ++t) mask |= static_cast<std::uint32_t>(values[t] >= bounds[t]) << t;
  return mask;
}

// Bit t is set when values[t] >= bound (t < n <= kChunk).
inline std::uint32_t reaching(const float* values, Eigen::Index n, float bound) {
#if defined(__AVX512F__)
  if (n == kChunk) return _mm512_cmp_ps_mask(_mm512_loadu_ps(values), _mm512_set1_ps(bound), _CMP_GE_OQ);
#elif defined(__AVX__)
  if (n == kChunk) {
    const auto limit = _mm256_set1_ps(bound);
    const auto low = _mm256_cmp_ps(_mm256_loadu_ps(values), limit, _CMP_GE_OQ);
    const auto high = _mm256_cmp_ps(_mm256_loadu_ps(values + 8), limit, _CMP_GE_OQ);
    return static_cast<std::uint32_t>(_mm256_movemask_ps(low)) |
           static_cast<std::uint32_t>(_mm256_movemask_ps(high)) << 8;
  }
#endif
  std::uint32_t mask = 0;
  for (Eigen::Index t = 0; t < n; ++t) mask |= static_cast<std::uint32_t>(values[t] >= bound) << t;
  return mask;
}
static_assert(kChunk <= 32, "a chunk's mask is 32 bits");

// Calls visit(t) for each set bit t of `mask`, lowest first.
template <typename Visit>
inline void for_each_bit(std::uint32_t mask, Visit&& visit) {
  for (; mask != 0; mask &= mask - 1) visit(static_cast<Eigen::Index>(__builtin_ctz(mask)));
}

// Per-thread structures created by the thread that first uses its slot.
template <typename T>
class PerSlot {
 public:
  PerSlot(std::size_t slots, std::function<T()> make) : items_(slots), make_(std::move(make)) {}
  T& operator[](std::size_t slot) {
    if (!items_[slot]) items_[slot] = std::make_unique<T>(make_());
    return *items_[slot];
  }
  // The slots' structures merged into one (a fresh one when no slot was used).
  T merged() {
    T result = make_();
    for (const auto& item : items_)
      if (item) result.merge(*item);
    return result;
  }

 private:
  std::vector<std::unique_ptr<T>> items_;
  std::function<T()> make_;
};

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
  if (k < 1) throw_usage_error("The CSLS neighbourhood k must be at least 1 (got " + std::to_string(k) + ").");
  check_tiles(tiles);
  const std::size_t n1 = static_cast<std::size_t>(X.rows()), n2 = static_cast<std::size_t>(Z.rows());
  // Named variables, not a structured binding: lambdas below capture them (C++17 cannot capture bindings).
  const std::pair<std::size_t, std::size_t> share = row_share(n1, group.rank(), group.size());
  const std::size_t row_begin = share.first, row_end = share.second;
  const float lowest = -std::numeric_limits<float>::infinity();
  TopValues row_top(row_end - row_begin, std::min<std::size_t>(static_cast<std::size_t>(k), n2), lowest);
  // Without columns, capacity 0: bounds of +inf that nothing reaches.
  const std::size_t column_k = with_columns ? std::min<std::size_t>(static_cast<std::size_t>(k), n1) : 0;
  const int threads = resolve_threads(tiles.threads);
  PerSlot<TopValues> column_top(static_cast<std::size_t>(threads),
                                [&] { return TopValues(n2, column_k, lowest); });
  SharedBounds shared_bounds(with_columns ? n2 : 0);
  if (row_end > row_begin && n2 > 0) {
    for_each_tile(
        X, row_begin, row_end, Z, tiles, threads, with_columns ? "CSLS neighbourhoods" : "nearest neighbours",
        [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
          TopValues& columns = column_top[slot];
          const std::size_t first_slot = first_row - row_begin;
          const float* row_bounds = row_top.bounds() + first_slot;
          for (Eigen::Index j = 0; j < tile.rows(); ++j) {
            const std::size_t column = first_col + static_cast<std::size_t>(j);
            const float* similarities = tile.row(j).data();
            const float shared_bound = with_columns ? shared_bounds.bound(column) : lowest;
            for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
              const Eigen::Index end = std::min(chunk + kChunk, tile.cols());
              const float* values = similarities + chunk;
              const Eigen::Index count = end - chunk;
              const std::uint32_t to_rows = reaching(values, count, row_bounds + chunk);
              const std::uint32_t to_column =
                  reaching(values, count, std::max(columns.bounds()[column], shared_bound));
              if ((to_rows | to_column) == 0) continue;
              for_each_bit(to_rows, [&](Eigen::Index t) {
                row_top.offer(first_slot + static_cast<std::size_t>(chunk + t), values[t]);
              });
              // The column's bound rises with each value it keeps; offer() checks each against the current one.
              for_each_bit(to_column, [&](Eigen::Index t) { columns.offer(column, values[t]); });
            }
            if (with_columns) shared_bounds.raise(column, columns.bounds()[column]);
          }
        });
  }
  NeighbourhoodMeans means;
  means.source = gathered(group, slot_means(row_top));
  if (with_columns) {
    TopValues columns = column_top.merged();
    merge_across(group, columns);
    means.target = slot_means(columns);
  }
  return means;
}

// The fused pass of csls_select over this process's share [row_begin, row_end) of X's rows: each row keeps its
// k largest similarities (row_top) and its best targets by the key 2 x.z_j - floor_j (pool: score = the key,
// cosine = the similarity); each column keeps its k largest values (columns, merged across threads, then across
// the group).
// With `reverse` of a non-zero capacity (a slot per column), each column also keeps its sources of highest key
// 2 x_i.z - source_floors(i) (score: the key, cosine: the similarity): one set for all threads, merged across the
// group.
void scan_pools(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                const Eigen::VectorXf& floors, const Eigen::VectorXf& source_floors, const TileOptions& tiles,
                const ProcessGroup& group, TopValues& row_top, RowPools& pool, TopValues& columns,
                TopCandidates& reverse) {
  const int threads = resolve_threads(tiles.threads);
  const std::size_t n2 = static_cast<std::size_t>(Z.rows()), column_k = columns.capacity();
  const bool with_reverse = reverse.capacity() > 0;
  PerSlot<TopValues> column_top(static_cast<std::size_t>(threads), [&] {
    return TopValues(n2, column_k, -std::numeric_limits<float>::infinity());
  });
  // The targets' lists: one set for all threads (a copy per thread was 93 MB each at 290k targets), each column
  // tile's lists locked by the thread visiting the tile (for_each_tile staggers the threads' sweeps).
  TERMALIGN_CHECK(!with_reverse || reverse.slots() == n2, "a target list per column");
  const std::size_t tile_cols = tile_extent(tiles.cols, n2);
  std::vector<std::mutex> reverse_locks(with_reverse ? (n2 + tile_cols - 1) / tile_cols : 0);
  SharedBounds shared_bounds(n2);
  if (row_end > row_begin) {
    for_each_tile(
        X, row_begin, row_end, Z, tiles, threads, "CSLS one pass",
        [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
          TopValues& column_values = column_top[slot];
          std::unique_lock<std::mutex> reverse_lock;
          if (with_reverse) reverse_lock = std::unique_lock<std::mutex>(reverse_locks[first_col / tile_cols]);
          const std::size_t first_slot = first_row - row_begin;
          const float* row_bounds = row_top.bounds() + first_slot;
          const float* pool_bounds = pool.bounds() + first_slot;
          float keys[kChunk], reverse_keys[kChunk];
          const float* row_floors = with_reverse ? source_floors.data() + first_row : nullptr;
          for (Eigen::Index j = 0; j < tile.rows(); ++j) {
            const std::size_t column = first_col + static_cast<std::size_t>(j);
            const float* similarities = tile.row(j).data();
            const float floor = floors[static_cast<Eigen::Index>(column)];
            const float shared_bound = shared_bounds.bound(column);
            for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
              const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
              const float* values = similarities + chunk;
              for (Eigen::Index t = 0; t < count; ++t) keys[t] = 2.0f * values[t] - floor;
              const std::uint32_t to_rows = reaching(values, count, row_bounds + chunk);
              const std::uint32_t to_column =
                  reaching(values, count, std::max(column_values.bounds()[column], shared_bound));
              // >=: an equal key may still rank before the pool's threshold by its indices; offer() decides.
              const std::uint32_t to_pool = reaching(keys, count, pool_bounds + chunk);
              std::uint32_t to_reverse = 0;
              if (with_reverse) {
                for (Eigen::Index t = 0; t < count; ++t) reverse_keys[t] = 2.0f * values[t] - row_floors[chunk + t];
                to_reverse = reaching(reverse_keys, count, reverse.bounds()[column]);
              }
              if ((to_rows | to_column | to_pool | to_reverse) == 0) continue;
              for_each_bit(to_reverse, [&](Eigen::Index t) {
                const auto row = static_cast<std::uint32_t>(first_row + static_cast<std::size_t>(chunk + t));
                reverse.offer(column, Candidate{reverse_keys[t], values[t], row, static_cast<std::uint32_t>(column)});
              });
              for_each_bit(to_rows, [&](Eigen::Index t) {
                row_top.offer(first_slot + static_cast<std::size_t>(chunk + t), values[t]);
              });
              for_each_bit(to_column, [&](Eigen::Index t) { column_values.offer(column, values[t]); });
              for_each_bit(to_pool, [&](Eigen::Index t) {
                pool.offer(first_slot + static_cast<std::size_t>(chunk + t), keys[t], values[t],
                           static_cast<std::uint32_t>(column));
              });
            }
            shared_bounds.raise(column, column_values.bounds()[column]);
          }
        });
  }
  columns = column_top.merged();
  merge_across(group, columns);
  if (with_reverse) merge_across(group, reverse);
}

// Each target's kept sources (the reverse lists of scan_pools) scored by CSLS, its `m` best: grouped by target in
// ascending order, each group in ranks_before order.
std::vector<Candidate> reverse_lists(const TopCandidates& reverse, const NeighbourhoodMeans& means, std::size_t m) {
  std::vector<Candidate> lists;
  lists.reserve(reverse.slots() * m);
  std::vector<Candidate> list;
  for (std::size_t column = 0; column < reverse.slots(); ++column) {
    list.clear();
    for (const Candidate* c = reverse.begin(column); c != reverse.end(column); ++c) {
      if (c->source == detail::kNoIndex) continue;
      list.push_back(Candidate{2.0f * c->cosine - means.source[static_cast<Eigen::Index>(c->source)] -
                                   means.target[static_cast<Eigen::Index>(column)],
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

  // Named variables, not a structured binding: lambdas below capture them (C++17 cannot capture bindings).
  const std::pair<std::size_t, std::size_t> share = row_share(n1, group.rank(), group.size());
  const std::size_t row_begin = share.first, row_end = share.second;
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

  const float* source_means = means.source.data();
  const float* target_means = means.target.data();
  const auto visit = [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
        TopCandidates& columns = column_top[slot];
        TopCandidates& best = overall_top[slot];
        const std::size_t first_slot = first_row - row_begin;
        const float* row_bounds = row_top.bounds() + first_slot;
        const float* row_means = source_means + first_row;
        float scores[kChunk];
        for (Eigen::Index j = 0; j < tile.rows(); ++j) {
          const std::size_t column = first_col + static_cast<std::size_t>(j);
          const float* similarities = tile.row(j).data();
          const float target_mean = target_means[column];
          for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
            const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
            for (Eigen::Index t = 0; t < count; ++t)
              scores[t] = 2.0f * similarities[chunk + t] - row_means[chunk + t] - target_mean;
            // >=: an equal score may still rank before a bound by its indices; offer() decides. Disabled lists
            // have bounds of +inf, which no score reaches.
            const std::uint32_t to_rows = reaching(scores, count, row_bounds + chunk);
            const std::uint32_t to_column = reaching(scores, count, columns.bounds()[column]);
            const std::uint32_t to_best = reaching(scores, count, best.bounds()[0]);
            if ((to_rows | to_column | to_best) == 0) continue;
            const auto candidate = [&](Eigen::Index t) {
              return Candidate{scores[t], similarities[chunk + t],
                               static_cast<std::uint32_t>(first_row + static_cast<std::size_t>(chunk + t)),
                               static_cast<std::uint32_t>(column)};
            };
            // The column's and the overall bound rise as they keep candidates; offer() checks each candidate
            // against the current worst.
            for_each_bit(to_rows, [&](Eigen::Index t) {
              row_top.offer(first_slot + static_cast<std::size_t>(chunk + t), candidate(t));
            });
            for_each_bit(to_column, [&](Eigen::Index t) { columns.offer(column, candidate(t)); });
            for_each_bit(to_best, [&](Eigen::Index t) { best.offer(0, candidate(t)); });
          }
        }
      };
  if (row_end > row_begin) for_each_tile(X, row_begin, row_end, Z, tiles, threads, "CSLS selection", visit);

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
    for (std::size_t column = column_begin; column < column_end; ++column) keep_real(target_lists, column, nullptr);
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
  if (k < 1) throw_usage_error("The CSLS neighbourhood k must be at least 1 (got " + std::to_string(k) + ").");
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
    Matrix sample((M.rows() + static_cast<Eigen::Index>(stride) - 1) / static_cast<Eigen::Index>(stride), M.cols());
    for (Eigen::Index r = 0; r < sample.rows(); ++r) sample.row(r) = M.row(r * static_cast<Eigen::Index>(stride));
    return sample;
  };
  const std::size_t stride = (n1 + kSampleStride - 1) / kSampleStride >= column_k ? kSampleStride : 1;
  const Eigen::VectorXf floors = scan_neighbourhoods(Z, every(X, stride), k, tiles, false, group).source;
  // The targets' lists: each target keeps its 2 reverse_m sources by the key 2 x_i.z - an estimate of r_T(x_i)
  // from every kReverseStride-th target (CSLS up to the target's constant), then the reverse_m best by CSLS.
  constexpr std::size_t kReverseStride = 16;
  const std::size_t reverse_capacity = std::min(2 * reverse_m, n1);
  Eigen::VectorXf source_floors;
  if (reverse_capacity > 0) {
    const std::size_t sample_stride = (n2 + kReverseStride - 1) / kReverseStride >= row_k ? kReverseStride : 1;
    source_floors = scan_neighbourhoods(X, every(Z, sample_stride), k, tiles, false, group).source;
  }

  const float lowest = -std::numeric_limits<float>::infinity();
  TopValues row_top(row_end - row_begin, row_k, lowest);
  RowPools pools(row_end - row_begin, pool_size);
  TopValues columns(n2, column_k, lowest);
  TopCandidates reverse(reverse_capacity > 0 ? n2 : 0, reverse_capacity, detail::sentinel_candidate());
  scan_pools(X, row_begin, row_end, Z, floors, source_floors, tiles, group, row_top, pools, columns, reverse);
  pools.finish(tiles.threads);
  result.means.source = gathered(group, slot_means(row_top));
  result.means.target = slot_means(columns);
  row_top = TopValues(0, 0, lowest);

  // Each row's top_m from its pool when the bound proves that no other target could enter it: for an unseen
  // target, CSLS <= its key - r_T(x) <= the pool's smallest key - r_T(x). The margin covers the rounding of the
  // three float expressions (values within [-4, 4], a few ulps of 4.8e-7).
  constexpr float kMargin = 1e-5f;
  const float* target_means = result.means.target.data();
  const int threads = resolve_threads(tiles.threads);
  std::vector<std::vector<Candidate>> from_pool(pools.slots());
  std::vector<char> rescore(pools.slots(), 0);
  parallel_for(pools.slots(), threads, [&](std::size_t slot) {
    const float row_mean = result.means.source[static_cast<Eigen::Index>(row_begin + slot)];
    std::vector<Candidate> best = pools.candidates(slot, static_cast<std::uint32_t>(row_begin + slot));
    for (Candidate& c : best) c.score = 2.0f * c.cosine - row_mean - target_means[c.target];
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
  // The targets' lists are drawn once the pools are freed (at 130k x 290k: 166 MB of pools, 93 MB of lists).
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
