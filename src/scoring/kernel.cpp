#include "scoring/kernel.h"

#if TERMALIGN_WITH_OPENBLAS
#include <cblas.h>
// Stops the server threads of OpenBLAS's pthread build (what OpenBLAS itself calls before a fork); absent from
// its serial and OpenMP builds, hence weak.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
#endif

#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "scoring/blas_core.h"
#include "scoring/scoring.h"
#include "termalign/error.h"

namespace termalign {
namespace {

// Eigen evaluates Z_tile X_tile^T into a row-major buffer as X_tile Z_tile^T into a column-major one: the larger Z
// tile is then packed as the kernel's right-hand side, which costs less than packing it as the left-hand side.
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
  // timeout, taking CPU from the OpenMP threads when they fill every core. With one thread it needs none, so they
  // are stopped (and would start again if a product ever asked for threads).
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

}  // namespace termalign
