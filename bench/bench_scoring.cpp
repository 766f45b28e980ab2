// Throughput of the two CSLS passes next to a plain tiled Eigen GEMM of the same shapes (2 n1 n2 d flops a pass).
// Run: bench_scoring [--benchmark_filter=...]; the thread count is OpenMP's default (OMP_NUM_THREADS).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>

#include "termalign/parallel.h"
#include "termalign/scoring.h"

namespace {

constexpr int kDim = 300;
const termalign::TileOptions kTiles{};

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
}

// The yardstick: the same tiles, one GEMM each into a per-thread buffer, nothing else.
void BM_PlainGemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const int threads = termalign::resolve_threads(kTiles.threads);
  const int tile_rows = std::min<int>(static_cast<int>(kTiles.rows), n);
  const int tile_cols = std::min<int>(static_cast<int>(kTiles.cols), n);
  std::vector<termalign::Matrix> buffers(threads, termalign::Matrix(tile_rows, tile_cols));
  const int row_blocks = (n + tile_rows - 1) / tile_rows;
  for (auto _ : state) {
    termalign::parallel_for(row_blocks, threads, [&](std::size_t block) {
      termalign::Matrix& buffer = buffers[termalign::current_thread() % threads];
      const int first_row = static_cast<int>(block) * tile_rows, rows = std::min(tile_rows, n - first_row);
      for (int first_col = 0; first_col < n; first_col += tile_cols) {
        const int cols = std::min(tile_cols, n - first_col);
        auto tile = buffer.topLeftCorner(rows, cols);
        tile.noalias() = X.middleRows(first_row, rows) * Z.middleRows(first_col, cols).transpose();
        benchmark::DoNotOptimize(buffer.data());
      }
    });
  }
  report(state, n);
}

void BM_NeighbourhoodMeans(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  for (auto _ : state) benchmark::DoNotOptimize(termalign::neighbourhood_means(X, Z, 10, kTiles));
  report(state, n);
}

void BM_SelectCandidates(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const termalign::Matrix X = random_unit_rows(n, 1), Z = random_unit_rows(n, 2);
  const termalign::NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 10, kTiles);
  const termalign::SelectionOptions selection{10, 0, static_cast<std::size_t>(10 * n)};
  for (auto _ : state) benchmark::DoNotOptimize(termalign::select_csls_candidates(X, Z, means, selection, kTiles));
  report(state, n);
}

}  // namespace

BENCHMARK(BM_PlainGemm)->Arg(2000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NeighbourhoodMeans)->Arg(2000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SelectCandidates)->Arg(2000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
