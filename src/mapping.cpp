#include "termalign/mapping.h"

#include <Eigen/SVD>
#include <cstdio>
#include <sstream>

#include "termalign/error.h"
#include "termalign/io.h"

namespace termalign {

namespace {
constexpr const char* kMappingHeader = "termalign-mapping 1";

bool unit_first(Normalization kind) {
  return kind == Normalization::unit || kind == Normalization::unit_center_unit;
}
bool centres(Normalization kind) {
  return kind == Normalization::center || kind == Normalization::unit_center_unit;
}
bool unit_last(Normalization kind) { return kind == Normalization::unit_center_unit; }

void normalize(RowVector& vector) {
  const float norm = vector.norm();
  if (norm > 0) vector /= norm;
}
}  // namespace

void normalize_rows(Matrix& vectors) {
  for (Eigen::Index i = 0; i < vectors.rows(); ++i) {
    const float norm = vectors.row(i).norm();
    if (norm > 0) vectors.row(i) /= norm;
  }
}

void Normalizer::fit_apply(Matrix& vectors) {
  mean.resize(0);
  if (unit_first(kind)) normalize_rows(vectors);
  if (centres(kind)) {
    mean = vectors.rows() > 0 ? RowVector(vectors.colwise().mean()) : RowVector::Zero(vectors.cols());
    vectors.rowwise() -= mean;
  }
  if (unit_last(kind)) normalize_rows(vectors);
}

void Normalizer::apply(RowVector& vector) const {
  if (unit_first(kind)) normalize(vector);
  if (centres(kind)) {
    TERMALIGN_CHECK(mean.size() == vector.size(), "normaliser applied before it was fitted");
    vector -= mean;
  }
  if (unit_last(kind)) normalize(vector);
}

void Normalizer::apply_rows(Matrix& vectors) const {
  if (unit_first(kind)) normalize_rows(vectors);
  if (centres(kind)) {
    TERMALIGN_CHECK(mean.size() == vectors.cols(), "normaliser applied before it was fitted");
    vectors.rowwise() -= mean;
  }
  if (unit_last(kind)) normalize_rows(vectors);
}

Matrix procrustes(const Matrix& source, const Matrix& target) {
  TERMALIGN_CHECK(source.rows() == target.rows() && source.cols() == target.cols(),
                  "Procrustes needs two matrices of the same shape");
  // The d x d cross-covariance in double precision: the SVD of a sum over thousands of pairs loses little then.
  const Eigen::MatrixXd cross = source.cast<double>().transpose() * target.cast<double>();
  Eigen::BDCSVD<Eigen::MatrixXd> svd(cross, Eigen::ComputeFullU | Eigen::ComputeFullV);
  return (svd.matrixU() * svd.matrixV().transpose()).cast<float>();
}

Mapping fit_mapping(const Matrix& Xs, const Matrix& Zt, const Matrix& /*source_vocabulary*/,
                    const Matrix& /*target_vocabulary*/, const MappingOptions& /*options*/, int /*threads*/) {
  Mapping mapping;
  mapping.source_transform = procrustes(Xs, Zt);
  mapping.target_transform = Matrix::Identity(Zt.cols(), Zt.cols());
  return mapping;
}

void save_mapping(const std::string& path, const Mapping& mapping) {
  std::string text;
  auto append_row = [&text](const float* values, Eigen::Index n) {
    char buffer[32];
    for (Eigen::Index j = 0; j < n; ++j) {
      std::snprintf(buffer, sizeof buffer, j ? " %.9g" : "%.9g", static_cast<double>(values[j]));
      text += buffer;
    }
    text += '\n';
  };
  const Eigen::Index d = mapping.source_transform.rows(), mapped = mapping.source_transform.cols();
  TERMALIGN_CHECK(mapping.target_transform.rows() == d && mapping.target_transform.cols() == mapped,
                  "both transforms must have the same shape");
  text += std::string(kMappingHeader) + "\n";
  text += "dim " + std::to_string(d) + " " + std::to_string(mapped) + "\n";
  text += std::string("normalization ") + to_string(mapping.source.kind) + "\n";
  for (const Normalizer* side : {&mapping.source, &mapping.target}) {
    const RowVector mean = side->mean.size() ? side->mean : RowVector::Zero(d);
    append_row(mean.data(), d);
  }
  for (const Matrix* transform : {&mapping.source_transform, &mapping.target_transform}) {
    for (Eigen::Index i = 0; i < d; ++i) append_row(transform->row(i).data(), mapped);
  }
  write_file_atomically(path, text);
}

Mapping load_mapping(const std::string& path) {
  std::istringstream stream(read_file(path));
  std::string line;
  std::size_t line_number = 0;
  auto next_line = [&]() -> std::istringstream {
    if (!std::getline(stream, line)) throw_input_error(path, line_number + 1, "the mapping file ends too early.");
    ++line_number;
    return std::istringstream(line);
  };
  next_line();
  if (line != kMappingHeader) throw_input_error(path, 1, "not a termalign mapping file (bad header).");
  std::string word, name;
  long d = 0, mapped = 0;
  if (!(next_line() >> word >> d >> mapped) || word != "dim" || d <= 0 || mapped <= 0 || mapped > d) {
    throw_input_error(path, 2, "expected 'dim D D2' with 0 < D2 <= D.");
  }
  if (!(next_line() >> word >> name) || word != "normalization") {
    throw_input_error(path, 3, "expected 'normalization NAME'.");
  }
  Mapping mapping;
  try {
    mapping.source.kind = mapping.target.kind = parse_normalization(name);
  } catch (const Error& error) {
    throw_input_error(path, 3, error.what());
  }
  auto read_row = [&](float* values, long n) {
    auto row = next_line();
    for (long j = 0; j < n; ++j) {
      if (!(row >> values[j]) || !std::isfinite(values[j])) {
        throw_input_error(path, line_number, "expected " + std::to_string(n) + " finite numbers.");
      }
    }
  };
  for (Normalizer* side : {&mapping.source, &mapping.target}) {
    side->mean.resize(d);
    read_row(side->mean.data(), d);
  }
  for (Matrix* transform : {&mapping.source_transform, &mapping.target_transform}) {
    transform->resize(d, mapped);
    for (long i = 0; i < d; ++i) read_row(transform->row(i).data(), mapped);
  }
  return mapping;
}

}  // namespace termalign
