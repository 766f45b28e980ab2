// Throughput of the two CSLS passes, and of the fused one-pass selection, next to plain GEMMs of the same shapes
// (Eigen's own, and the library's tile product on the library's tiles; 2 n1 n2 d flops a pass), at
// d = 300 and n1 = n2 = n. Run: bench_scoring [--benchmark_filter=...]. The thread count is OpenMP's default
// (OMP_NUM_THREADS); the tiles are the library's defaults unless TERMALIGN_BENCH_TILE_ROWS / _COLS are set.
// The passes run in both precisions (second argument: 0 fp32, 1 bf16, scoring.h's TileOptions::precision), and
// each bf16 result is compared with the fp32 one, outside the timing: a difference fails the benchmark. The bf16
// tile product (oneDNN's matmul on the same tiles, BM_Bf16GemmTiles) is the bf16 passes' yardstick.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "scoring/bf16_product.h"
#include "scoring/scoring.h"
#include "util/parallel.h"

// Bit-for-bit equality of candidates (the bf16 results are compared with the fp32 ones); found by argument lookup.
namespace termalign {
bool operator==(const Candidate& a, const Candidate& b) {
  return a.score == b.score && a.cosine == b.cosine && a.source == b.source && a.target == b.target;
}
}  // namespace termalign

namespace {

constexpr int kDim = 300;
constexpr int kYardstickBlock = 2048;  // rows of X per call of Eigen's own (multi-threaded) GEMM

std::size_t tile_from_environment(const char* name, std::size_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && std::atol(value) > 0 ? static_cast<std::size_t>(std::atol(value)) : fallback;
}

// The bf16 benchmarks on a CPU without bf16 instructions: skipped, with the reason run_benchmarks.sh looks for.
constexpr const char* kNoBf16 = "this CPU has no bf16 instructions";
bool skipped_without_bf16(benchmark::State& state, std::int64_t precision) {
  if (precision == 0 || termalign::cpu_has_bf16()) return false;
  state.SkipWithError(kNoBf16);
  return true;
}

termalign::TileOptions bench_tiles(std::int64_t precision = 0) {
  termalign::TileOptions tiles;
  tiles.precision = precision == 1 ? termalign::Precision::bf16 : termalign::Precision::fp32;
  tiles.rows = tile_from_environment("TERMALIGN_BENCH_TILE_ROWS", tiles.rows);
  tiles.cols = tile_from_environment("TERMALIGN_BENCH_TILE_COLS", tiles.cols);
  return tiles;
}

termalign::Matrix random_unit_rows(int rows, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  termalign::Matrix M(rows, kDim);
  for (int i = 0; i < rows; ++i) {
    for (int c = 0; c < kDim; ++c) M(i, c) = normal(generator);
    M.row(i).normalize();
  }
  return M;
}

void report(benchmark::State& state, int n) {
  const double flops = 2.0 * n * n * kDim;
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = termalign::resolve_threads(0);
}

// The yardsticks' walk: the library's tiles of an n x n product, the row blocks shared out among the threads,
// product(slot, first_row, rows, first_col, cols, buffer) once per tile into the thread's buffer (tiles x rows,
// row-major), each product single-threaded.
template <typename Product>
void time_tiles(benchmark::State& state, int n, Product&& product) {
  const termalign::TileOptions tiles = bench_tiles();
  const int threads = termalign::resolve_threads(0);
  const int tile_rows = std::min<int>(static_cast<int>(tiles.rows), n);
  const int tile_cols = std::min<int>(static_cast<int>(tiles.cols), n);
  std::vector<termalign::Matrix> buffers(threads, termalign::Matrix(tile_cols, tile_rows));
  const int row_blocks = (n + tile_rows - 1) / tile_rows;
  auto serial_products = std::make_unique<termalign::SerialEigenProducts>();
  for (auto _ : state) {
    termalign::parallel_for(row_blocks, threads, [&](std::size_t block) {
      const int slot = termalign::current_thread() % threads;
      const int first_row = static_cast<int>(block) * tile_rows, rows = std::min(tile_rows, n - first_row);
      for (int first_col = 0; first_col < n; first_col += tile_cols) {
        product(slot, first_row, rows, first_col, std::min(tile_cols, n - first_col), buffers[slot].data());
        benchmark::DoNotOptimize(buffers[slot].data());
      }
    });
  }
  serial_products.reset();  // before report(), which counts the threads
  report(state, n);
}

// Yardstick 1: the library's tiles and its tile product (similarity_product: OpenBLAS's sgemm, or Eigen's).
void BM_PlainGemmTiles(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  time_tiles(state, n, [&](int, int first_row, int rows, int first_col, int cols, float* out) {
    termalign::similarity_product(X.row(first_row).data(), rows, Z.row(first_col).data(), cols, kDim, out);
  });
  state.SetLabel(termalign::similarity_kernel());
}

// Yardstick 1 in bf16: the same tiles as oneDNN bf16 matmuls (detail::Bf16Product, fp32 results), the rows
// rounded to bf16 beforehand (the passes round them as they go).
void BM_Bf16GemmTiles(benchmark::State& state) {
  if (skipped_without_bf16(state, 1)) return;
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  std::vector<termalign::detail::Bf16> x(X.size()), z(Z.size());
  termalign::detail::to_bf16(X.data(), x.size(), x.data());
  termalign::detail::to_bf16(Z.data(), z.size(), z.data());
  std::vector<std::unique_ptr<termalign::detail::Bf16Product>> products(termalign::resolve_threads(0));
  for (auto& product : products) product = std::make_unique<termalign::detail::Bf16Product>();
  time_tiles(state, n, [&](int slot, int first_row, int rows, int first_col, int cols, float* out) {
    (*products[slot])(x.data() + static_cast<std::size_t>(first_row) * kDim, rows,
                      z.data() + static_cast<std::size_t>(first_col) * kDim, cols, kDim, out);
  });
  state.SetLabel(termalign::detail::onednn_version());
}

// The result of the same call in fp32, for a bf16 run to be compared with (outside the timing): the benchmark
// fails when they differ.
template <typename Result, typename Run>
void check_identical(benchmark::State& state, std::int64_t precision, const Result& result, Run&& run_fp32) {
  if (precision == 0) return;
  if (!(run_fp32() == result)) state.SkipWithError("the bf16 result differs from the fp32 result");
  state.SetLabel("bf16, identical to fp32");
}

// Yardstick 2: Eigen's own multi-threaded GEMM, X in blocks of 2048 rows against all of Z (no tiling of ours).
void BM_EigenGemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  termalign::Matrix block(std::min(kYardstickBlock, n), n);
  for (auto _ : state) {
    for (int first_row = 0; first_row < n; first_row += kYardstickBlock) {
      const int rows = std::min(kYardstickBlock, n - first_row);
      block.topRows(rows).noalias() = X.middleRows(first_row, rows) * Z.transpose();
      benchmark::DoNotOptimize(block.data());
    }
  }
  report(state, n);
}

void BM_NeighbourhoodMeans(benchmark::State& state) {
  if (skipped_without_bf16(state, state.range(1))) return;
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::TileOptions tiles = bench_tiles(state.range(1));
  termalign::NeighbourhoodMeans means;
  for (auto _ : state) benchmark::DoNotOptimize(means = termalign::neighbourhood_means(X, Z, 10, tiles));
  const auto flat = [](const termalign::NeighbourhoodMeans& m) {
    return std::make_pair(std::vector<float>(m.source.data(), m.source.data() + m.source.size()),
                          std::vector<float>(m.target.data(), m.target.data() + m.target.size()));
  };
  check_identical(state, state.range(1), flat(means),
                  [&] { return flat(termalign::neighbourhood_means(X, Z, 10, bench_tiles(0))); });
  report(state, n);
}

// The selection as `termalign align` runs it by default: top 10 per source, cut at the BUCC cap (10 n).
void BM_SelectCandidates(benchmark::State& state) {
  if (skipped_without_bf16(state, state.range(1))) return;
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::TileOptions tiles = bench_tiles(state.range(1));
  const termalign::NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 10, bench_tiles(0));
  const termalign::SelectionOptions selection{10, 0, static_cast<std::size_t>(10 * n)};
  std::vector<termalign::Candidate> selected;
  for (auto _ : state) {
    selected = termalign::select_csls_candidates(X, Z, means, selection, tiles);
    benchmark::DoNotOptimize(selected.data());
  }
  check_identical(state, state.range(1), selected,
                  [&] { return termalign::select_csls_candidates(X, Z, means, selection, bench_tiles(0)); });
  report(state, n);
}

// What `termalign align` runs by default: neighbourhoods and selection fused (csls_select), so usually about one
// pass over the similarities plus an eighth for the floors. Its GFLOP/s count the flops of the two passes it
// replaces (4 n^2 d), so it can exceed the GEMM's.
void BM_CslsOnePass(benchmark::State& state) {
  if (skipped_without_bf16(state, state.range(1))) return;
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::TileOptions tiles = bench_tiles(state.range(1));
  const termalign::SelectionOptions selection{10, 0, static_cast<std::size_t>(10 * n)};
  std::vector<termalign::Candidate> selected;
  std::size_t rescored = 0;
  for (auto _ : state) {
    termalign::CslsSelection result =
        termalign::csls_select(X, Z, 10, selection, tiles, 0, termalign::single_process(), 10);
    rescored = result.rescored_rows;
    selected = std::move(result.candidates);
    selected.insert(selected.end(), result.reverse.begin(), result.reverse.end());
    benchmark::DoNotOptimize(selected.data());
  }
  check_identical(state, state.range(1), selected, [&] {
    termalign::CslsSelection result =
        termalign::csls_select(X, Z, 10, selection, bench_tiles(0), 0, termalign::single_process(), 10);
    result.candidates.insert(result.candidates.end(), result.reverse.begin(), result.reverse.end());
    return result.candidates;
  });
  report(state, n);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2 * 2.0 * n * n * kDim * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rescored_rows"] = static_cast<double>(rescored);
}

void sizes(benchmark::internal::Benchmark* benchmark) {
  for (int n : {2000, 10000, 20000, 40000}) benchmark->Arg(n);
  benchmark->Unit(benchmark::kMillisecond)->UseRealTime();
}

// Each size in fp32 (0), then in bf16 (1).
void sizes_and_precisions(benchmark::internal::Benchmark* benchmark) {
  for (int n : {2000, 10000, 20000, 40000})
    for (int precision : {0, 1}) benchmark->Args({n, precision});
  benchmark->ArgNames({"n", "bf16"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_PlainGemmTiles)->Apply(sizes);
BENCHMARK(BM_Bf16GemmTiles)->Apply(sizes);
BENCHMARK(BM_EigenGemm)->Apply(sizes);
BENCHMARK(BM_NeighbourhoodMeans)->Apply(sizes_and_precisions);
BENCHMARK(BM_SelectCandidates)->Apply(sizes_and_precisions);
BENCHMARK(BM_CslsOnePass)->Apply(sizes_and_precisions);

// As the CLI: OpenBLAS single-threaded, so that the tiles may use it (similarity_product, scoring.h).
int main(int argc, char** argv) {
  termalign::use_single_threaded_blas();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
