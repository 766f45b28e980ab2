// Blocked similarity over all pairs: tiles of X x Z^T, one GEMM per tile into a reused buffer, result handlers
// that keep top-k per row and per column, CSLS candidate selection. Memory grows with n1 + n2, the tile size and
// the number of kept candidates, never with n1 x n2.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/types.h"

namespace termalign {

// The scoring's one matrix product, single-threaded: out (rhs_rows x lhs_rows, row-major) = rhs lhs^T, both
// operands row-major with `dim` columns, rows padded to multiples of 48. OpenBLAS's sgemm when termalign is built
// with it (the default when libopenblas-dev is installed; 1.4x Eigen's throughput per core on the AVX-512
// benchmark machine), OpenBLAS runs single-threaded (use_single_threaded_blas) and, checked once per setting, its
// kernel on this machine gives every element the same bits wherever it lies in the product (its AVX-512 kernels
// do, its AVX2 ones do not); else Eigen's product, which the caller keeps single-threaded (SerialEigenProducts).
// Either way no similarity depends on the tiling or the thread count. set_tile_kernel forces one. Public for the
// benchmarks, which time it alone.
void similarity_product(const float* lhs, Eigen::Index lhs_rows, const float* rhs, Eigen::Index rhs_rows,
                        Eigen::Index dim, float* out);
// Which kernel similarity_product uses, e.g. "OpenBLAS (core Cooperlake)" or "Eigen 3.4.0".
std::string similarity_kernel();

// The tile kernel a program asks for (the CLI: TERMALIGN_TILE_KERNEL): automatic (the choice above), eigen or
// openblas (a usage error at the first product when the build has no OpenBLAS, it is not single-threaded or its
// kernel on this machine rounds by position).
enum class TileKernelChoice { automatic, eigen, openblas };
TileKernelChoice parse_tile_kernel(const std::string& name);  // "auto", "eigen", "openblas"; else a usage error
void set_tile_kernel(TileKernelChoice choice);
// Makes OpenBLAS single-threaded for the whole process and stops its server threads, so that the tiles may use it
// (each product on its caller's thread). Process-wide: NumPy's products in the same process become single-threaded
// too. The CLI calls it at start; the library never does.
void use_single_threaded_blas();

// The defaults are those of the run's options (ScoringOptions), defined there once.
struct TileOptions {
  std::size_t rows = ScoringOptions{}.tile_rows;  // rows of X per tile
  std::size_t cols = ScoringOptions{}.tile_cols;  // rows of Z per tile
  int threads = ScoringOptions{}.threads;         // 0 = all; the results never depend on it
  // bf16: the tiles are bf16 products (oneDNN) screened with a proven error bound, and every value that decides a
  // result is rescored in fp32, so the results are those of fp32 bit for bit; automatic: bf16 where the CPU has
  // bf16 instructions (cpu_has_bf16), else fp32.
  Precision precision = ScoringOptions{}.precision;
};

// Whether this CPU multiplies bf16 natively (AVX512_BF16 or AMX-BF16, with the operating system's support).
// TERMALIGN_CPU_BF16=0 (or 1) overrides the answer, e.g. to test the fallback of `automatic` on any machine.
bool cpu_has_bf16();
// The precision a pass runs in: `requested`, with automatic resolved by cpu_has_bf16().
Precision resolve_precision(Precision requested);
// For --version and the log: "bf16 (oneDNN 2.6.3, the CPU has AVX512_BF16)", "fp32 (the CPU has no bf16)", ...
std::string describe_precision(Precision requested);

// X: n1 x d, Z: n2 x d (row-major, unit rows). One pass over all tiles gives both directions. In a group of
// processes each scores its share of X's rows (row_share) and all get the same means as one process would.
NeighbourhoodMeans neighbourhood_means(const Matrix& X, const Matrix& Z, int k, const TileOptions& tiles,
                                       const ProcessGroup& group = single_process());

// Queries Q: n x d, database D: m x d. For each query, the mean of its k largest dot products with D's rows
// (shared out by query rows in a group, the result on every process).
Eigen::VectorXf knn_mean_similarity(const Matrix& Q, const Matrix& D, int k, const TileOptions& tiles,
                                    const ProcessGroup& group = single_process());

// The one check of the CSLS neighbourhood size: a usage error unless k >= 1.
void check_neighbourhood_k(int k);

struct SelectionOptions {
  std::size_t top_m = 10;    // per source row, its m best targets (0 = unlimited)
  std::size_t mutual_m = 0;  // also require the source to be within the target's m best sources (0 = off)
  std::size_t limit = 0;     // keep the `limit` best pairs overall (0 = unlimited)
};

// CSLS(i, j) = 2 x_i . z_j - source_mean(i) - target_mean(j), selected as the options say and returned in
// ranks_before order. The result is identical for any number of threads. In a group of processes each scores its
// share of X's rows; rank 0 gets the whole result, identical to one process's, and the other ranks nothing.
std::vector<Candidate> select_csls_candidates(const Matrix& X, const Matrix& Z, const NeighbourhoodMeans& means,
                                              const SelectionOptions& selection, const TileOptions& tiles,
                                              const ProcessGroup& group = single_process());

// neighbourhood_means then select_csls_candidates, fused into one pass over the similarities when the selection
// allows it (top_m > 0 and mutual_m = 0): each source row keeps its `pool` largest similarities with their
// targets, which give its own neighbourhood mean and, once the target means are known, its top_m by CSLS. A row
// whose pool cannot be shown to hold its true top_m is rescored exactly: an unseen target j has x.z_j <= the
// pool's smallest similarity s_min, so CSLS(x, z_j) <= 2 s_min - r_T(x) - min r_S, and the pool suffices when its
// m-th best CSLS is above that. The result is identical to the two passes', for any pool size (pool = 0: 4 top_m,
// at least k); with other selections the two passes run. `reverse_m` > 0 also keeps, in the same pass, each
// target's 2 reverse_m sources by the key 2 x_i.z - e_i, e_i an estimate of r_T(x_i) from every 16th target (so
// CSLS but for e_i's error and the target's constant), and returns their reverse_m best by exact CSLS
// (CslsSelection::reverse): the target side's candidates without a second pass, close to the second pass's lists,
// not always identical.
CslsSelection csls_select(const Matrix& X, const Matrix& Z, int k, const SelectionOptions& selection,
                          const TileOptions& tiles, std::size_t pool = 0,
                          const ProcessGroup& group = single_process(), std::size_t reverse_m = 0);

// --- Memory (memory.cpp) ---

// What scoring n1 source terms against n2 target terms of dimension d will allocate, in bytes.
struct ScoringMemory {
  std::size_t term_matrices =
      0;                         // X (n1 x d) and Z (n2 x d), plus the frequent words of vocabulary neighbourhoods
  std::size_t tile_buffers = 0;  // per thread: one tile of similarities and the padded rows of both sides
  std::size_t top_lists = 0;     // per-row lists, per-thread column lists and their merge, for both passes
  std::size_t candidates = 0;    // the kept candidate pairs
  std::size_t total() const { return term_matrices + tile_buffers + top_lists + candidates; }
};

struct ScoringShape {
  std::size_t source_terms = 0, target_terms = 0, dim = 0;
  std::size_t target_lists = 0;  // sources each target's list keeps (the full evidence's top_m; 0: no lists)
};

// The estimate for the configured scoring (k, neighbourhood, top_m, mutual_m, cap) with these tiles;
// `tiles.threads` is resolved as parallel_for does (0 = all cores).
ScoringMemory estimate_scoring_memory(const ScoringShape& shape, const AlignConfig& config,
                                      const TileOptions& tiles);

// Before scoring X (n1 x d) against Z (n2 x d): when the estimate exceeds memory_limit(), halves the tile
// sizes (logging it) until it fits; when even the smallest tiles do not fit, a resources error (exit 5) says what
// the run needs and what to change.
// `target_lists`: as ScoringShape's. `held_bytes`: what the run holds besides (word vectors kept for the scoring),
// taken from a limit the program set (util/resources.h): one budget for the loading and the scoring.
void guard_scoring_memory(const Matrix& X, const Matrix& Z, const AlignConfig& config, TileOptions& tiles,
                          std::size_t target_lists = 0, std::size_t held_bytes = 0);

}  // namespace termalign
