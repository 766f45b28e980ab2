// Normalisation and the orthogonal Procrustes map: fit, apply, save, load.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/types.h"

namespace termalign {

// Scales each row to unit length (zero rows stay zero), blocks of rows on `threads` threads (0: OpenMP's default).
void normalize_rows(Matrix& vectors, int threads = 0);

// rows <- rows x transform (d x d'), then each row scaled to unit length. A square transform is applied in place,
// block of rows by block of rows on `threads` threads, with no temporary of the matrix's size (fresh memory is
// slow to fault in: 80 ms for 24 MB on the 2-core benchmark machine); the identity is skipped (x I = x exactly).
// The result does not depend on the thread count.
void transform_rows(Matrix& rows, const Matrix& transform, int threads = 0);

// Fits the mapping that `options` describe (orthogonal Procrustes, the multi-step framework, self-learning
// refinement). Xs, Zt: n x d normalised seed-pair vectors, row i of each is a pair. source_vocabulary,
// target_vocabulary: normalised word vectors, most frequent first (used by the refinement only). The
// normalisers of the result are left empty: the caller sets them. Usage error when dim_reduction exceeds d or
// when whitening meets seed vectors that do not span every dimension.
Mapping fit_mapping(const Matrix& Xs, const Matrix& Zt, const Matrix& source_vocabulary,
                    const Matrix& target_vocabulary, const MappingOptions& options, int threads = 0);

// The products over the seed pairs (row i of Xs and of Zt, n x d) that the multi-step mapping needs, in double:
// Xs^T Zt, and with whitening Xs^T Xs and Zt^T Zt. Computed on `threads` threads (0: OpenMP's default) over a
// fixed split of the rows, summed in a fixed order: the same bits on any number of threads. Usage error when
// dim_reduction exceeds d.
struct SeedProducts {
  Eigen::MatrixXd cross, source_gram, target_gram;  // d x d; the grams are empty without whitening
  Eigen::Index pairs = 0;
};
SeedProducts seed_products(const Matrix& Xs, const Matrix& Zt, const MappingOptions& options, int threads = 0);

// The seed products that fit_mapping decomposes: those of the seed pairs plus, with refinement, the induced
// dictionary it kept (the iterations themselves are fitted and decomposed here). mapping_from_products of the
// result is fit_mapping's mapping; the split lets a caller run that serial step beside other work.
SeedProducts refined_seed_products(const Matrix& Xs, const Matrix& Zt, const Matrix& source_vocabulary,
                                   const Matrix& target_vocabulary, const MappingOptions& options,
                                   int threads = 0);

// The multi-step mapping that `options` describe, from the seed products: only d x d decompositions, on the
// calling thread (fit_mapping without refinement is seed_products, then this). The normalisers are left empty.
// Usage error when whitening meets seed vectors that do not span every dimension.
Mapping mapping_from_products(const SeedProducts& products, const MappingOptions& options);

// The refinement's dictionary under `mapping`: the pairs of mutual CSLS nearest neighbours (k = 10) among the
// first `words` rows of each vocabulary (normalised word vectors, most frequent first), as (source row, target
// row), sorted.
std::vector<std::pair<std::uint32_t, std::uint32_t>> mutual_nearest_words(const Matrix& source_vocabulary,
                                                                          const Matrix& target_vocabulary,
                                                                          const Mapping& mapping,
                                                                          std::size_t words, int threads = 0);

// W = U V^T from the SVD of Xs^T Zt. Xs, Zt: n x d, row i of each is a seed pair.
Matrix procrustes(const Matrix& source, const Matrix& target);

// Text file: a header, the dimensions, the normalisation, both means and both transforms at full float precision.
void save_mapping(const std::string& path, const Mapping& mapping);
Mapping load_mapping(const std::string& path);

}  // namespace termalign
