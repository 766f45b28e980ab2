// Throughput of the two CSLS passes, and of the fused one-pass selection, next to plain GEMMs of the same shapes
// (Eigen's own, and the library's tile product on the library's tiles; 2 n1 n2 d flops a pass), at
// d = 300 and n1 = n2 = n. Run: bench_scoring [--benchmark_filter=...]. The thread count is OpenMP's default
// (OMP_NUM_THREADS); the tiles are the library's defaults unless TERMALIGN_BENCH_TILE_ROWS / _COLS are set.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "termalign/parallel.h"
#include "termalign/scoring.h"

namespace {

constexpr int kDim = 300;
constexpr int kYardstickBlock = 2048;  // rows of X per call of Eigen's own (multi-threaded) GEMM

std::size_t tile_from_environment(const char* name, std::size_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && std::atol(value) > 0 ? static_cast<std::size_t>(std::atol(value)) : fallback;
}

termalign::TileOptions bench_tiles() {
  termalign::TileOptions tiles;
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

// Yardstick 1: the library's tiles and its tile product (similarity_product: OpenBLAS's sgemm, or Eigen's), one
// single-threaded product per tile into a per-thread buffer, the row blocks shared out among the threads.
void BM_PlainGemmTiles(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::TileOptions tiles = bench_tiles();
  const int threads = termalign::resolve_threads(0);
  const int tile_rows = std::min<int>(static_cast<int>(tiles.rows), n);
  const int tile_cols = std::min<int>(static_cast<int>(tiles.cols), n);
  std::vector<termalign::Matrix> buffers(threads, termalign::Matrix(tile_cols, tile_rows));
  const int row_blocks = (n + tile_rows - 1) / tile_rows;
  auto serial_products = std::make_unique<termalign::SerialEigenProducts>();
  for (auto _ : state) {
    termalign::parallel_for(row_blocks, threads, [&](std::size_t block) {
      termalign::Matrix& buffer = buffers[termalign::current_thread() % threads];
      const int first_row = static_cast<int>(block) * tile_rows, rows = std::min(tile_rows, n - first_row);
      for (int first_col = 0; first_col < n; first_col += tile_cols) {
        const int cols = std::min(tile_cols, n - first_col);
        termalign::similarity_product(X.row(first_row).data(), rows, Z.row(first_col).data(), cols, kDim,
                                      buffer.data());
        benchmark::DoNotOptimize(buffer.data());
      }
    });
  }
  state.SetLabel(termalign::similarity_kernel());
  serial_products.reset();  // before report(), which counts the threads
  report(state, n);
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
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::TileOptions tiles = bench_tiles();
  for (auto _ : state) benchmark::DoNotOptimize(termalign::neighbourhood_means(X, Z, 10, tiles));
  report(state, n);
}

// The selection as `termalign align` runs it by default: top 10 per source, cut at the BUCC cap (10 n).
void BM_SelectCandidates(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::TileOptions tiles = bench_tiles();
  const termalign::NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 10, tiles);
  const termalign::SelectionOptions selection{10, 0, static_cast<std::size_t>(10 * n)};
  for (auto _ : state) benchmark::DoNotOptimize(termalign::select_csls_candidates(X, Z, means, selection, tiles));
  report(state, n);
}

// What `termalign align` runs by default: neighbourhoods and selection fused (csls_select), so usually about one
// pass over the similarities plus an eighth for the floors. Its GFLOP/s count the flops of the two passes it
// replaces (4 n^2 d), so it can exceed the GEMM's.
void BM_CslsOnePass(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::TileOptions tiles = bench_tiles();
  const termalign::SelectionOptions selection{10, 0, static_cast<std::size_t>(10 * n)};
  std::size_t rescored = 0;
  for (auto _ : state) {
    const termalign::CslsSelection result = termalign::csls_select(X, Z, 10, selection, tiles);
    rescored = result.rescored_rows;
    benchmark::DoNotOptimize(result.candidates.data());
  }
  report(state, n);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2 * 2.0 * n * n * kDim * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rescored_rows"] = static_cast<double>(rescored);
}

void sizes(benchmark::internal::Benchmark* benchmark) {
  for (int n : {2000, 10000, 20000, 40000}) benchmark->Arg(n);
  benchmark->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_PlainGemmTiles)->Apply(sizes);
BENCHMARK(BM_EigenGemm)->Apply(sizes);
BENCHMARK(BM_NeighbourhoodMeans)->Apply(sizes);
BENCHMARK(BM_SelectCandidates)->Apply(sizes);
BENCHMARK(BM_CslsOnePass)->Apply(sizes);

// As the CLI: OpenBLAS single-threaded, so that the tiles may use it (similarity_product, scoring.h).
int main(int argc, char** argv) {
  termalign::use_single_threaded_blas();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
