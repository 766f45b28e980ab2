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
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "scoring/bf16_product.h"
#include "scoring/blas_core.h"
#include "detail/huge_pages.h"
#include "scoring/topk.h"
#include "scoring/windows.h"
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
// on this machine rounds alike in every position, it recognised the CPU (not a core without AVX2 where Eigen's
// build has AVX2) and set_tile_kernel did not ask for Eigen; else Eigen. Nothing here changes the process: a
// program decides (the CLI calls use_single_threaded_blas at start).
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
  if (wanted_kernel == TileKernelChoice::openblas) {
    // Asked for, OpenBLAS still has to round alike: otherwise the outputs would depend on the tiling.
    if (!openblas_rounds_alike())
      throw_usage_error(
          "The OpenBLAS tile kernel was asked for, but " + openblas +
          " rounds a product by its place in the tile, so the results would depend on the tile sizes "
          "and thread count: use the automatic choice or Eigen's.");
    return {true, openblas};
  }
#if defined(__AVX2__) && defined(__FMA__)
  // Eigen is compiled for this machine (AVX2 and FMA at least); an OpenBLAS that did not recognise the CPU runs
  // kernels without them.
  if (detail::blas_core_without_avx2(openblas_get_corename()))
    return {false, eigen + " (" + openblas + " has no AVX2 kernel, which this CPU and Eigen's build have)"};
#endif
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
                   const BlockDone& block_done = nullptr) {
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
    std::vector<detail::Bf16> source_bf16, target_bf16;  // bf16 tiles: the block's rows and the tile's, rounded
    std::unique_ptr<detail::Bf16Product> bf16_product;
  };
  const bool bf16 = resolve_precision(tiles.precision) == Precision::bf16;
  // Z rounded once for all row blocks when that takes at most kRoundedOnce bytes; else each thread rounds each
  // tile as it comes (2 % of a pass at d = 300 with the default tiles).
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
    if (workspace.similarities.size() == 0)
      workspace.similarities.resize(row_capacity * col_capacity);
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
    // (scan_pools' targets' lists) seldom waits for another thread. The results do not depend on the order.
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
        (*workspace.bf16_product)(workspace.source_bf16.data(), lhs_rows, rhs, static_cast<Eigen::Index>(cols), dim,
                                  workspace.similarities.data());
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

// The float expressions of the keys, shared by the fp32 passes, the bf16 passes' screening and their exact
// rescoring, so that a rescored key has the fp32 pass's bits: 2 x.z - c (the pools' and the targets' lists), and
// CSLS, 2 x.z - r_T(x) - r_S(z).
inline float doubled_minus(float similarity, float offset) { return 2.0f * similarity - offset; }
inline float csls_score(float similarity, float source_mean, float target_mean) {
  return 2.0f * similarity - source_mean - target_mean;
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

// The CSLS scores of a tile, column by column (a row of Z), in chunks of kChunk rows of X:
// body(column, values, chunk, count, scores), values the chunk's similarities and scores their CSLS scores, the
// means r_T of the tile's rows from row_means and r_S of the columns from target_means. The selection passes, fp32
// and bf16, screen these.
template <typename Body>
void for_each_csls_chunk(const Tile& tile, std::size_t first_col, const float* row_means,
                         const float* target_means, Body&& body) {
  float scores[kChunk];
  for (Eigen::Index j = 0; j < tile.rows(); ++j) {
    const std::size_t column = first_col + static_cast<std::size_t>(j);
    const float* similarities = tile.row(j).data();
    const float target_mean = target_means[column];
    for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
      const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
      for (Eigen::Index t = 0; t < count; ++t)
        scores[t] = csls_score(similarities[chunk + t], row_means[chunk + t], target_mean);
      body(column, similarities + chunk, chunk, count, scores);
    }
  }
}

// ---- The bf16 passes: windows screened on bf16 tiles, then every listed pair rescored in fp32 ----
//
// A bf16 pass visits the same tiles with approximations of the similarities (for_each_tile with bf16 tiles), each
// within the proven bound E of its fp32 value, so a key 2 x.z - c is within 2 E. Each top list of the fp32 pass
// becomes a Windows list (of the same capacity, width 2 E for similarities, 4 E for keys): what might be among the
// list's best by fp32 value. The listed pairs are then rescored in fp32 (ExactValues: the fp32 tiles' values, bit
// for bit) and offered to the fp32 pass's own structures, which so receive every item that they would keep in the
// fp32 pass: they end the same, whatever else they were offered. A row's lists are rescored when its block is done;
// a column's after the pass.

// The widths of the windows of a bf16 pass over X Z^T: for similarities, twice the bound; for keys 2 x.z - c, four
// times; each plus a margin for the float rounding of the keys (a few ulps of the keys' magnitude).
struct Bf16Widths {
  float values = 0, keys = 0;
};

Bf16Widths bf16_widths(const Matrix& X, const Matrix& Z, int threads) {
  const detail::RoundingNorms x = detail::rounding_norms(X, threads), z = detail::rounding_norms(Z, threads);
  const float bound = detail::bf16_error_bound(x, z, X.cols());
  const float margin = 1e-5f * static_cast<float>(std::max(1.0, x.row * z.row));
  logger().debug("bf16 tiles of {} x {} rows: similarities within {:.3g} of fp32", X.rows(), Z.rows(), bound);
  return Bf16Widths{2 * bound + margin, 4 * bound + margin};
}

// Whether ordered_dots gives the values of the fp32 tiles bit for bit with the tile kernel in use (both sum a
// similarity as one chain of fused multiply-adds in the order of the dimensions, OpenBLAS's AVX-512 kernels and
// Eigen's with FMA alike): checked once per kernel on random rows of several dimensions against
// similarity_product. Where it does not, the exact values come from padded products (ExactValues).
bool ordered_dots_match_tiles() {
  static std::mutex mutex;
  static std::map<std::string, bool> checked;  // by similarity_kernel()
  const std::string kernel = similarity_kernel();
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = checked.find(kernel);
  if (found != checked.end()) return found->second;
  std::mt19937 generator(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  bool match = true;
  for (const Eigen::Index dim : {1, 5, 16, 17, 64, 100, 300, 301}) {
    Matrix lhs(48, dim), rhs(96, dim);
    for (Eigen::Index r = 0; r < lhs.rows(); ++r)
      for (Eigen::Index c = 0; c < dim; ++c) lhs(r, c) = normal(generator);
    for (Eigen::Index r = 0; r < rhs.rows(); ++r)
      for (Eigen::Index c = 0; c < dim; ++c) rhs(r, c) = normal(generator);
    std::vector<float> product(48 * 96), dots(96);
    similarity_product(lhs.data(), 48, rhs.data(), 96, dim, product.data());
    std::vector<const float*> others(96);
    for (Eigen::Index r = 0; r < 96; ++r) others[static_cast<std::size_t>(r)] = rhs.row(r).data();
    for (Eigen::Index i = 0; i < 48 && match; ++i) {
      detail::ordered_dots(lhs.row(i).data(), others.data(), others.size(), dim, dots.data());
      for (std::size_t j = 0; j < 96; ++j) match = match && dots[j] == product[j * 48 + static_cast<std::size_t>(i)];
    }
  }
  logger().debug("exact values of the bf16 passes: {} ({})",
                 match ? "ordered dot products" : "padded tile products", kernel);
  checked.emplace(kernel, match);
  return match;
}

// Exact values of chosen pairs, bit for bit those of the fp32 tiles: the similarities of one row of X or Z
// (`fixed`) with chosen rows of the other side, by ordered_dots where it matches the tiles, else by one
// similarity_product of the gathered rows, each side padded with zero rows to the kernel multiple as for_each_tile
// pads them (the value then depends neither on the tiling nor on the row's place).
class ExactValues {
 public:
  ExactValues() : ordered_(ordered_dots_match_tiles()) {}

  // values[t] = the similarity of row `fixed` of `side` with row others[t] of `other_side`; `side` is X (the
  // tiles' left-hand side) when fixed_is_source, else Z.
  void compute(const Matrix& side, std::size_t fixed, const Matrix& other_side,
               const std::vector<std::uint32_t>& others, bool fixed_is_source, std::vector<float>& values) {
    values.resize(others.size());
    if (others.empty()) return;
    const std::size_t dim = static_cast<std::size_t>(side.cols());
    if (ordered_) {
      pointers_.resize(others.size());
      for (std::size_t t = 0; t < others.size(); ++t) pointers_[t] = other_side.data() + others[t] * dim;
      detail::ordered_dots(side.data() + fixed * dim, pointers_.data(), others.size(), side.cols(), values.data());
      return;
    }
    const std::vector<std::uint32_t> one{static_cast<std::uint32_t>(fixed)};
    const std::vector<std::uint32_t>& lhs_rows = fixed_is_source ? one : others;
    const std::vector<std::uint32_t>& rhs_rows = fixed_is_source ? others : one;
    const Matrix& X = fixed_is_source ? side : other_side;
    const Matrix& Z = fixed_is_source ? other_side : side;
    const std::size_t lhs_padded = round_up(lhs_rows.size(), kKernelMultiple);
    const std::size_t rhs_padded = round_up(rhs_rows.size(), kKernelMultiple);
    gather(X, lhs_rows, lhs_padded, lhs_);
    gather(Z, rhs_rows, rhs_padded, rhs_);
    if (out_.size() < lhs_padded * rhs_padded) out_.resize(lhs_padded * rhs_padded);
    similarity_product(lhs_.data(), static_cast<Eigen::Index>(lhs_padded), rhs_.data(),
                       static_cast<Eigen::Index>(rhs_padded), side.cols(), out_.data());
    for (std::size_t t = 0; t < others.size(); ++t) values[t] = fixed_is_source ? out_[t * lhs_padded] : out_[t];
  }

 private:
  static void gather(const Matrix& M, const std::vector<std::uint32_t>& rows, std::size_t padded,
                     std::vector<float, Eigen::aligned_allocator<float>>& out) {
    const std::size_t dim = static_cast<std::size_t>(M.cols());
    out.assign(padded * dim, 0.0f);
    for (std::size_t r = 0; r < rows.size(); ++r)
      std::copy(M.data() + rows[r] * dim, M.data() + (rows[r] + 1) * dim, out.data() + r * dim);
  }

  bool ordered_;
  std::vector<const float*> pointers_;
  std::vector<float, Eigen::aligned_allocator<float>> lhs_, rhs_, out_;
};

// Sorted, without repeats.
void sort_unique(std::vector<std::uint32_t>& indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
}

// Rescoring of one slot (a row of X or of Z) whose windows list rows of the other side: offer(w, index, value)
// for each listed item with its exact value (w: which window), each item rescored once.
template <typename Offer>
void rescore_slot(const Matrix& side, std::size_t slot, std::size_t fixed, const Matrix& other_side,
                  bool fixed_is_source, const std::vector<detail::Windows*>& windows, ExactValues& exact,
                  std::vector<std::uint32_t>& others, std::vector<float>& values, Offer&& offer) {
  others.clear();
  detail::Windows::Span lists[2];
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
                  const std::vector<detail::Windows*>& windows, ExactValues& exact, Offer&& offer) {
  std::vector<std::uint32_t> others;
  std::vector<float> values;
  for (std::size_t r = 0; r < rows; ++r) {
    rescore_slot(X, r, first_row + r, Z, true, windows, exact, others, values,
                 [&](std::size_t w, std::uint32_t column, float value) { offer(w, r, column, value); });
    for (detail::Windows* w : windows) w->clear(r);
  }
}

// Every column of Z, whose windows (a slot per column, listing rows of X) are complete: offer(w, column, row,
// value) for each listed pair with its exact value, the columns shared out among `threads` threads; the windows'
// memory is freed chunk by chunk (Windows::release_chunk) as the exact lists fill.
template <typename Offer>
void rescore_columns(const Matrix& X, const Matrix& Z, const std::vector<detail::Windows*>& windows, int threads,
                     Offer&& offer) {
  constexpr std::size_t kColumns = 256;  // per parallel item
  const std::size_t n2 = static_cast<std::size_t>(Z.rows());
  PerSlot<ExactValues> exact(static_cast<std::size_t>(threads), [] { return ExactValues(); });
  SerialEigenProducts serial_products;
  constexpr std::size_t kChunk = detail::Windows::kChunkSlots;
  static_assert(kChunk % kColumns == 0, "whole groups per chunk");
  for (std::size_t first = 0; first < n2; first += kChunk) {
    const std::size_t end = std::min(n2, first + kChunk);
    parallel_for((end - first + kColumns - 1) / kColumns, threads, [&](std::size_t group) {
      ExactValues& values_of = exact[static_cast<std::size_t>(current_thread()) % static_cast<std::size_t>(threads)];
      std::vector<std::uint32_t> others;
      std::vector<float> values;
      for (std::size_t column = first + group * kColumns; column < std::min(end, first + (group + 1) * kColumns);
           ++column)
        rescore_slot(Z, column, column, X, false, windows, values_of, others, values,
                     [&](std::size_t w, std::uint32_t row, float value) { offer(w, column, row, value); });
    });
    for (detail::Windows* w : windows) w->release_chunk(first);  // memory the exact lists may take
  }
}

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

// Spare entries of a window: rows are few at a time (a block per thread); columns all at once, so a column's
// window keeps fewer spare entries when they are many (more compactions, less memory): as many as 64 MiB of
// windows allow, between keep / 2 + 8 and 2 keep + 32.
constexpr std::size_t kRowSpare(std::size_t keep) { return 3 * keep + 32; }
std::size_t column_spare(std::size_t keep, std::size_t columns) {
  constexpr std::size_t kBudget = std::size_t{64} << 20;  // bytes of windows beyond which spares shrink
  const std::size_t affordable = kBudget / (std::max<std::size_t>(columns, 1) * sizeof(detail::Windows::Entry));
  const std::size_t least = keep / 2 + 8, most = 2 * keep + 32;
  return std::min(most, std::max(least, affordable > keep ? affordable - keep : 0));
}

// Starting thresholds for fresh windows, from the tile at hand: the maxima of `keep` disjoint groups of a slot's
// items are `keep` different items, so the smallest of them is at most the slot's keep-th largest key
// (Windows::raise). One vectorised pass over the tile for the rows of a block (each row's keys in the tile: factor
// x.z_j - offsets[j] - row_offsets[i], either may be null for 0), instead of the appends and compactions that would
// raise the thresholds from -inf.
void raise_rows_from_tile(const Tile& tile, float factor, const float* offsets, const float* row_offsets,
                          detail::Windows& windows) {
  const std::size_t keep = windows.keep();
  const auto cols = static_cast<std::size_t>(tile.rows()), rows = static_cast<std::size_t>(tile.cols());
  if (keep == 0 || cols < keep) return;
  thread_local std::vector<float> maxima, smallest;  // per row of the block
  smallest.assign(rows, std::numeric_limits<float>::infinity());
  maxima.resize(rows);
  for (std::size_t group = 0; group < keep; ++group) {
    std::fill(maxima.begin(), maxima.end(), -std::numeric_limits<float>::infinity());
    for (std::size_t j = cols * group / keep; j < cols * (group + 1) / keep; ++j) {
      const float* values = tile.row(static_cast<Eigen::Index>(j)).data();
      const float offset = offsets == nullptr ? 0.0f : offsets[j];
      float* m = maxima.data();
      for (std::size_t i = 0; i < rows; ++i) m[i] = std::max(m[i], factor * values[i] - offset);
    }
    for (std::size_t i = 0; i < rows; ++i) smallest[i] = std::min(smallest[i], maxima[i]);
  }
  for (std::size_t i = 0; i < rows; ++i)
    windows.raise(i, smallest[i] - (row_offsets == nullptr ? 0.0f : row_offsets[i]));
}

// The same bound for a column whose window is fresh, from its keys in the tile, factor x_i.z - offsets[i] (offsets
// indexed by the tile's rows, may be null): applied with the column's offers, under the tile's lock.
float column_bound_from_tile(const float* values, std::size_t rows, float factor, const float* offsets,
                             std::size_t keep) {
  if (keep == 0 || rows < keep) return -std::numeric_limits<float>::infinity();
  float smallest = std::numeric_limits<float>::infinity();
  for (std::size_t group = 0; group < keep; ++group) {
    float largest = -std::numeric_limits<float>::infinity();
    for (std::size_t i = rows * group / keep; i < rows * (group + 1) / keep; ++i)
      largest = std::max(largest, factor * values[i] - (offsets == nullptr ? 0.0f : offsets[i]));
    smallest = std::min(smallest, largest);
  }
  return smallest;
}

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

bool bf16_tiles(const TileOptions& tiles) { return resolve_precision(tiles.precision) == Precision::bf16; }

// The bf16 pass of scan_neighbourhoods over this process's rows [row_begin, row_end) (both sides non-empty): fills
// row_top as the fp32 pass does and returns the columns' lists (column_k largest values of each row of Z; an empty
// set when column_k is 0), this process's part, as the fp32 pass's merged per-thread lists.
TopValues scan_neighbourhoods_bf16(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                                   const TileOptions& tiles, int threads, const char* what, TopValues& row_top,
                                   std::size_t column_k) {
  const std::size_t n2 = static_cast<std::size_t>(Z.rows());
  const bool with_columns = column_k > 0;
  const Bf16Widths widths = bf16_widths(X, Z, threads);
  const std::size_t block_rows = tile_extent(tiles.rows, row_end - row_begin);
  PerSlot<detail::Windows> row_windows(static_cast<std::size_t>(threads), [&] {
    return detail::Windows(block_rows, row_top.capacity(), widths.values, kRowSpare(row_top.capacity()));
  });
  detail::Windows column_windows(with_columns ? n2 : 0, column_k, widths.values, column_spare(column_k, n2));
  ColumnTileLocks locks(n2, tiles, with_columns);
  PerSlot<ExactValues> exact(static_cast<std::size_t>(threads), [] { return ExactValues(); });
  PerSlot<PendingOffers> pending(static_cast<std::size_t>(threads), [] { return PendingOffers(); });
  const auto visit = [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
    detail::Windows& rows = row_windows[slot];
    PendingOffers& to_columns = pending[slot];
    constexpr float kFresh = -std::numeric_limits<float>::infinity();
    if (rows.thresholds()[0] == kFresh)
      raise_rows_from_tile(tile, 1.0f, nullptr, nullptr, rows);
    for (Eigen::Index j = 0; j < tile.rows(); ++j) {
      const std::size_t column = first_col + static_cast<std::size_t>(j);
      const float* similarities = tile.row(j).data();
      float column_threshold = with_columns ? column_windows.threshold(column) : 0.0f;
      if (with_columns && column_threshold == kFresh) {
        const float bound = column_bound_from_tile(similarities, static_cast<std::size_t>(tile.cols()), 1.0f,
                                                   nullptr, column_k);
        column_threshold = bound - widths.values;
        to_columns.raise(column, bound, 0);
      }
      for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
        const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
        const float* values = similarities + chunk;
        const std::uint32_t to_rows = reaching(values, count, rows.thresholds() + chunk);
        const std::uint32_t to_column = with_columns ? reaching(values, count, column_threshold) : 0;
        if ((to_rows | to_column) == 0) continue;
        for_each_bit(to_rows, [&](Eigen::Index t) {
          rows.offer(static_cast<std::size_t>(chunk + t), values[t], static_cast<std::uint32_t>(column));
        });
        for_each_bit(to_column, [&](Eigen::Index t) {
          to_columns.add(column, first_row + static_cast<std::size_t>(chunk + t), values[t], 0);
        });
      }
    }
    if (!to_columns.empty()) {
      const std::unique_lock<std::mutex> lock = locks.lock(first_col);
      to_columns.flush([&](const PendingOffers::Offer& o) { column_windows.raise(o.column, o.key); },
                       [&](const PendingOffers::Offer& o) { column_windows.offer(o.column, o.key, o.row); });
    }
  };
  const auto block_done = [&](std::size_t slot, std::size_t first_row, std::size_t rows) {
    rescore_rows(X, first_row, rows, Z, {&row_windows[slot]}, exact[slot],
                 [&](std::size_t, std::size_t r, std::uint32_t, float value) {
                   row_top.offer(first_row - row_begin + r, value);
                 });
  };
  for_each_tile(X, row_begin, row_end, Z, tiles, threads, what, visit, block_done);
  TopValues columns(with_columns ? n2 : 0, column_k, -std::numeric_limits<float>::infinity());
  if (with_columns)
    rescore_columns(X, Z, {&column_windows}, threads,
                    [&](std::size_t, std::size_t column, std::uint32_t, float value) { columns.offer(column, value); });
  return columns;
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
  const char* what = with_columns ? "CSLS neighbourhoods" : "nearest neighbours";
  std::unique_ptr<TopValues> bf16_columns;  // the bf16 pass's column lists, this process's part
  if (row_end > row_begin && n2 > 0 && bf16_tiles(tiles)) {
    bf16_columns = std::make_unique<TopValues>(
        scan_neighbourhoods_bf16(X, row_begin, row_end, Z, tiles, threads, what, row_top, column_k));
  } else if (row_end > row_begin && n2 > 0) {
    for_each_tile(
        X, row_begin, row_end, Z, tiles, threads, what,
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
    TopValues columns = bf16_columns ? std::move(*bf16_columns) : column_top.merged();
    merge_across(group, columns);
    means.target = slot_means(columns);
  }
  return means;
}

// The bf16 pass of scan_pools (same arguments, same results; `floors` and `source_floors` are exact).
void scan_pools_bf16(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                     const Eigen::VectorXf& floors, const Eigen::VectorXf& source_floors, const TileOptions& tiles,
                     int threads, TopValues& row_top, RowPools& pool, TopValues& columns, TopCandidates& reverse) {
  const std::size_t n2 = static_cast<std::size_t>(Z.rows());
  const bool with_reverse = reverse.capacity() > 0;
  const Bf16Widths widths = bf16_widths(X, Z, threads);
  const std::size_t block_rows = tile_extent(tiles.rows, row_end - row_begin);
  struct RowWindows {
    detail::Windows values, pool;
  };
  PerSlot<RowWindows> row_windows(static_cast<std::size_t>(threads), [&] {
    return RowWindows{detail::Windows(block_rows, row_top.capacity(), widths.values, kRowSpare(row_top.capacity())),
                      detail::Windows(block_rows, pool.capacity(), widths.keys, kRowSpare(pool.capacity()))};
  });
  detail::Windows column_windows(n2, columns.capacity(), widths.values, column_spare(columns.capacity(), n2));
  // The targets' lists: their keys 2 x.z - e(x) crowd near each list's worst (a window would hold two or three
  // times its capacity), so the exact lists are kept all along, `reverse` itself, and each target stages a few
  // items at a time, rescored when its stage is full: an item is staged when its key may reach the exact list's
  // worst (within half the keys' width: 2 E and half the margin).
  constexpr std::size_t kStaged = 16;  // a full block of ordered_dots
  detail::Staging staged(with_reverse ? n2 : 0, kStaged);
  std::vector<float> reverse_thresholds(with_reverse ? n2 : 0, -std::numeric_limits<float>::infinity());
  const float half_key_width = widths.keys / 2;
  ColumnTileLocks locks(n2, tiles, true);
  PerSlot<PendingOffers> pending(static_cast<std::size_t>(threads), [] { return PendingOffers(); });
  PerSlot<ExactValues> exact(static_cast<std::size_t>(threads), [] { return ExactValues(); });
  // Rescores the target's staged sources into `reverse` and raises its threshold (under the column's lock).
  const auto rescore_staged = [&](std::size_t column, ExactValues& values_of, std::vector<std::uint32_t>& rows,
                                  std::vector<float>& values) {
    rows.clear();
    for (const auto& entry : staged.entries(column)) rows.push_back(entry.index);
    values_of.compute(Z, column, X, rows, false, values);
    for (std::size_t t = 0; t < rows.size(); ++t)
      reverse.offer(column, Candidate{doubled_minus(values[t], source_floors[static_cast<Eigen::Index>(rows[t])]),
                                      values[t], rows[t], static_cast<std::uint32_t>(column)});
    staged.clear(column);
    const float threshold = std::max(reverse_thresholds[column], reverse.bounds()[column] - half_key_width);
    detail::store_relaxed(reverse_thresholds[column], threshold);
  };
  PerSlot<std::pair<std::vector<std::uint32_t>, std::vector<float>>> scratch(
      static_cast<std::size_t>(threads), [] { return std::pair<std::vector<std::uint32_t>, std::vector<float>>(); });
  const auto visit = [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
    RowWindows& rows = row_windows[slot];
    PendingOffers& to_columns = pending[slot];
    float keys[kChunk], reverse_keys[kChunk];
    const float* row_floors = with_reverse ? source_floors.data() + first_row : nullptr;
    constexpr float kFresh = -std::numeric_limits<float>::infinity();
    if (rows.values.thresholds()[0] == kFresh) {
      raise_rows_from_tile(tile, 1.0f, nullptr, nullptr, rows.values);
      raise_rows_from_tile(tile, 2.0f, floors.data() + first_col, nullptr, rows.pool);
    }
    const auto tile_rows = static_cast<std::size_t>(tile.cols());
    for (Eigen::Index j = 0; j < tile.rows(); ++j) {
      const std::size_t column = first_col + static_cast<std::size_t>(j);
      const auto target = static_cast<std::uint32_t>(column);
      const float* similarities = tile.row(j).data();
      const float floor = floors[static_cast<Eigen::Index>(column)];
      float column_threshold = column_windows.threshold(column);
      if (column_threshold == kFresh) {
        const float bound = column_bound_from_tile(similarities, tile_rows, 1.0f, nullptr, columns.capacity());
        column_threshold = bound - widths.values;
        to_columns.raise(column, bound, 0);
      }
      float reverse_threshold = 0.0f;
      if (with_reverse) reverse_threshold = detail::load_relaxed(reverse_thresholds[column]);
      if (with_reverse && reverse_threshold == kFresh) {
        const float bound = column_bound_from_tile(similarities, tile_rows, 2.0f, row_floors, reverse.capacity());
        reverse_threshold = bound - widths.keys;
        to_columns.raise(column, bound, 1);
      }
      for (Eigen::Index chunk = 0; chunk < tile.cols(); chunk += kChunk) {
        const Eigen::Index count = std::min(kChunk, tile.cols() - chunk);
        const float* values = similarities + chunk;
        for (Eigen::Index t = 0; t < count; ++t) keys[t] = doubled_minus(values[t], floor);
        const std::uint32_t to_rows = reaching(values, count, rows.values.thresholds() + chunk);
        const std::uint32_t to_pool = reaching(keys, count, rows.pool.thresholds() + chunk);
        const std::uint32_t to_column = reaching(values, count, column_threshold);
        std::uint32_t to_reverse = 0;
        if (with_reverse) {
          for (Eigen::Index t = 0; t < count; ++t) reverse_keys[t] = doubled_minus(values[t], row_floors[chunk + t]);
          to_reverse = reaching(reverse_keys, count, reverse_threshold);
        }
        if ((to_rows | to_pool | to_column | to_reverse) == 0) continue;
        const auto source = [&](Eigen::Index t) {
          return static_cast<std::uint32_t>(first_row + static_cast<std::size_t>(chunk + t));
        };
        for_each_bit(to_rows, [&](Eigen::Index t) {
          rows.values.offer(static_cast<std::size_t>(chunk + t), values[t], target);
        });
        for_each_bit(to_pool,
                     [&](Eigen::Index t) { rows.pool.offer(static_cast<std::size_t>(chunk + t), keys[t], target); });
        for_each_bit(to_column, [&](Eigen::Index t) { to_columns.add(column, source(t), values[t], 0); });
        for_each_bit(to_reverse, [&](Eigen::Index t) { to_columns.add(column, source(t), reverse_keys[t], 1); });
      }
    }
    if (!to_columns.empty()) {
      const std::unique_lock<std::mutex> lock = locks.lock(first_col);
      std::vector<std::uint32_t>& rows_of = scratch[slot].first;  // not a structured binding: lambdas use them
      std::vector<float>& values_of = scratch[slot].second;
      to_columns.flush(
          [&](const PendingOffers::Offer& o) {
            if (o.window == 0) return column_windows.raise(o.column, o.key);
            // The group maxima bound the keep-th approximate key: the exact one is at least that - 2 E.
            const float threshold = std::max(reverse_thresholds[o.column], o.key - widths.keys);
            detail::store_relaxed(reverse_thresholds[o.column], threshold);
          },
          [&](const PendingOffers::Offer& o) {
            if (o.window == 0) return column_windows.offer(o.column, o.key, o.row);
            if (o.key >= reverse_thresholds[o.column] && staged.add(o.column, o.key, o.row))
              rescore_staged(o.column, exact[slot], rows_of, values_of);
          });
    }
  };
  // The exact offers compute the keys as the fp32 pass does.
  const auto block_done = [&](std::size_t slot, std::size_t first_row, std::size_t rows) {
    RowWindows& windows = row_windows[slot];
    rescore_rows(X, first_row, rows, Z, {&windows.values, &windows.pool}, exact[slot],
                 [&](std::size_t w, std::size_t r, std::uint32_t column, float value) {
                   const std::size_t row_slot = first_row - row_begin + r;
                   if (w == 0) return row_top.offer(row_slot, value);
                   pool.offer(row_slot, doubled_minus(value, floors[static_cast<Eigen::Index>(column)]), value, column);
                 });
  };
  for_each_tile(X, row_begin, row_end, Z, tiles, threads, "CSLS one pass", visit, block_done);
  logger().debug("bf16 one pass: {} of {} columns' windows outgrew their buffers", column_windows.moved(), n2);
  if (with_reverse) {
    SerialEigenProducts serial_products;
    parallel_for((n2 + 1023) / 1024, threads, [&](std::size_t part) {
      const std::size_t slot = static_cast<std::size_t>(current_thread()) % static_cast<std::size_t>(threads);
      std::vector<std::uint32_t>& rows_of = scratch[slot].first;
      std::vector<float>& values_of = scratch[slot].second;
      for (std::size_t column = part * 1024; column < std::min(n2, (part + 1) * 1024); ++column)
        rescore_staged(column, exact[slot], rows_of, values_of);
    });
  }
  rescore_columns(X, Z, {&column_windows}, threads,
                  [&](std::size_t, std::size_t column, std::uint32_t, float value) { columns.offer(column, value); });
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
  if (bf16_tiles(tiles)) {
    if (row_end > row_begin)
      scan_pools_bf16(X, row_begin, row_end, Z, floors, source_floors, tiles, threads, row_top, pool, columns,
                      reverse);
    merge_across(group, columns);
    if (with_reverse) merge_across(group, reverse);
    return;
  }
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
              for (Eigen::Index t = 0; t < count; ++t) keys[t] = doubled_minus(values[t], floor);
              const std::uint32_t to_rows = reaching(values, count, row_bounds + chunk);
              const std::uint32_t to_column =
                  reaching(values, count, std::max(column_values.bounds()[column], shared_bound));
              // >=: an equal key may still rank before the pool's threshold by its indices; offer() decides.
              const std::uint32_t to_pool = reaching(keys, count, pool_bounds + chunk);
              std::uint32_t to_reverse = 0;
              if (with_reverse) {
                for (Eigen::Index t = 0; t < count; ++t)
                  reverse_keys[t] = doubled_minus(values[t], row_floors[chunk + t]);
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

// The bf16 pass of select_csls_candidates for per-source lists only: row_top (a slot per row of this process's
// share [row_begin, row_end)) ends as the fp32 pass leaves it.
void select_rows_bf16(const Matrix& X, std::size_t row_begin, std::size_t row_end, const Matrix& Z,
                      const NeighbourhoodMeans& means, const TileOptions& tiles, int threads, TopCandidates& row_top) {
  const Bf16Widths widths = bf16_widths(X, Z, threads);
  const std::size_t block_rows = tile_extent(tiles.rows, row_end - row_begin);
  PerSlot<detail::Windows> row_windows(static_cast<std::size_t>(threads), [&] {
    return detail::Windows(block_rows, row_top.capacity(), widths.keys, kRowSpare(row_top.capacity()));
  });
  PerSlot<ExactValues> exact(static_cast<std::size_t>(threads), [] { return ExactValues(); });
  const float* source_means = means.source.data();
  const float* target_means = means.target.data();
  const auto visit = [&](std::size_t slot, std::size_t first_row, std::size_t first_col, const Tile& tile) {
    detail::Windows& rows = row_windows[slot];
    const float* row_means = source_means + first_row;
    if (rows.thresholds()[0] == -std::numeric_limits<float>::infinity())
      raise_rows_from_tile(tile, 2.0f, target_means + first_col, row_means, rows);
    for_each_csls_chunk(
        tile, first_col, row_means, target_means,
        [&](std::size_t column, const float*, Eigen::Index chunk, Eigen::Index count, const float* scores) {
          for_each_bit(reaching(scores, count, rows.thresholds() + chunk), [&](Eigen::Index t) {
            rows.offer(static_cast<std::size_t>(chunk + t), scores[t], static_cast<std::uint32_t>(column));
          });
        });
  };
  // The exact offers compute the score as the fp32 pass does.
  const auto block_done = [&](std::size_t slot, std::size_t first_row, std::size_t rows) {
    rescore_rows(X, first_row, rows, Z, {&row_windows[slot]}, exact[slot],
                 [&](std::size_t, std::size_t r, std::uint32_t column, float value) {
                   const float score = csls_score(value, source_means[first_row + r], target_means[column]);
                   row_top.offer(first_row - row_begin + r,
                                 Candidate{score, value, static_cast<std::uint32_t>(first_row + r), column});
                 });
  };
  for_each_tile(X, row_begin, row_end, Z, tiles, threads, "CSLS selection", visit, block_done);
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
        for_each_csls_chunk(
            tile, first_col, row_means, target_means,
            [&](std::size_t column, const float* values, Eigen::Index chunk, Eigen::Index count,
                const float* scores) {
              // >=: an equal score may still rank before a bound by its indices; offer() decides. Disabled lists
              // have bounds of +inf, which no score reaches.
              const std::uint32_t to_rows = reaching(scores, count, row_bounds + chunk);
              const std::uint32_t to_column = reaching(scores, count, columns.bounds()[column]);
              const std::uint32_t to_best = reaching(scores, count, best.bounds()[0]);
              if ((to_rows | to_column | to_best) == 0) return;
              const auto candidate = [&](Eigen::Index t) {
                return Candidate{scores[t], values[t],
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
            });
      };
  // bf16 tiles for per-source lists alone; the target and overall lists take the fp32 tiles.
  if (row_end > row_begin && bf16_tiles(tiles) && per_target == 0 && overall == 0) {
    select_rows_bf16(X, row_begin, row_end, Z, means, tiles, threads, row_top);
  } else if (row_end > row_begin) {
    TileOptions fp32 = tiles;
    fp32.precision = Precision::fp32;
    for_each_tile(X, row_begin, row_end, Z, fp32, threads, "CSLS selection", visit);
  }

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
  // from every kReverseStride-th target, at most kReverseSample of them (CSLS up to the target's constant), then
  // the reverse_m best by CSLS. An estimate, not a bound: a larger sample moves a target's list only where the
  // estimates' errors reorder its sources around the 2 reverse_m-th; past 16 x 4096 targets the sample stays at
  // 4096 (at 130k x 290k the pass over n1 x sample takes 1 s instead of 3.6 s; AP 0.0614 either way).
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
  const bool bf16 = bf16_tiles(tiles);
  RowPools pools(row_end - row_begin, pool_size, bf16 ? pool_size + 8 : 0);
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
