// Normalisation and the orthogonal Procrustes map: fit, apply, save, load.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "termalign/config.h"
#include "termalign/embeddings.h"

namespace termalign {

// A fitted normalisation: the same steps can be applied later to vectors outside the matrix it was fitted on
// (subword vectors of out-of-vocabulary words).
struct Normalizer {
  Normalization kind = Normalization::none;
  RowVector mean;  // the centring vector (empty unless kind centres)

  // Fits on `vectors` (n x d) and normalises them in place.
  void fit_apply(Matrix& vectors);
  // Applies the fitted steps to one vector, or to every row of a matrix.
  void apply(RowVector& vector) const;
  void apply_rows(Matrix& vectors) const;
};

// Scales each row to unit length (zero rows stay zero).
void normalize_rows(Matrix& vectors);

struct Mapping {
  Matrix W;  // d x d orthogonal: source x (1 x d) maps to x W
  Normalizer source, target;
};

// W = U V^T from the SVD of Xs^T Zt. Xs, Zt: n x d, row i of each is a seed pair.
Matrix procrustes(const Matrix& source, const Matrix& target);

// Text file: a header, the dimension, the normalisation, both means and W at full float precision.
void save_mapping(const std::string& path, const Mapping& mapping);
Mapping load_mapping(const std::string& path);

}  // namespace termalign
