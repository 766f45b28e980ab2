// The bf16 similarity tiles of TileOptions::precision = bf16 (scoring.h): rows rounded to bf16, their products by
// oneDNN's matmul with fp32 accumulation, and a bound on how far such a product may lie from the fp32 tile value
// of the same pair, so that the scoring can tell which pairs it must rescore in fp32.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "termalign/embeddings.h"

namespace termalign::detail {

using Bf16 = std::uint16_t;

// fp32 to bf16, rounded to nearest even (NaN stays NaN), and back (exact).
inline Bf16 to_bf16(float value) {
  std::uint32_t bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<Bf16>((bits >> 16) | 0x40u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<Bf16>(bits >> 16);
}
inline float from_bf16(Bf16 value) {
  const std::uint32_t bits = static_cast<std::uint32_t>(value) << 16;
  float result;
  __builtin_memcpy(&result, &bits, sizeof result);
  return result;
}
// `count` floats to bf16.
void to_bf16(const float* values, std::size_t count, Bf16* out);

// The norms behind the error bound, maxima over a matrix's rows: of each row x, of its bf16 rounding x^ and of the
// rounding's residual x - x^ (computed in double, rounded up).
struct RoundingNorms {
  double row = 0, rounded = 0, residual = 0;
};
RoundingNorms rounding_norms(const Matrix& M, int threads);  // rows shared out among `threads` threads

// An upper bound on |fp32 tile value - bf16 tile value| for every pair of a row of X and a row of Z, whatever the
// order of the sums: x.z = x^.z^ + x^.r_z + r_x.z^ + r_x.r_z, so the roundings of the inputs account for at most
// |x^||r_z| + |r_x||z^| + |r_x||r_z|; each side's fp32 sum of d terms is within gamma_d = d u / (1 - d u) (u =
// 2^-24) of its sum of absolute terms, at most |x^||z^| for the bf16 product and |x||z| for the fp32 one; flushed
// subnormals add at most d times the smallest normal float. Rounded up.
float bf16_error_bound(const RoundingNorms& x, const RoundingNorms& z, Eigen::Index dim);

// out (rhs_rows x lhs_rows, row-major, fp32) = rhs lhs^T for bf16 operands, row-major with `dim` columns: oneDNN's
// matmul, one primitive per shape, created on first use. One object per thread; the product runs on the calling
// thread alone when called inside a parallel region (oneDNN's OpenMP runtime does not nest).
class Bf16Product {
 public:
  Bf16Product();
  ~Bf16Product();
  Bf16Product(const Bf16Product&) = delete;
  Bf16Product& operator=(const Bf16Product&) = delete;
  void operator()(const Bf16* lhs, Eigen::Index lhs_rows, const Bf16* rhs, Eigen::Index rhs_rows, Eigen::Index dim,
                  float* out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "oneDNN 2.6.3".
const char* onednn_version();

}  // namespace termalign::detail

namespace termalign::detail {

// out[j] = the dot product of `fixed` with others[j] (each `dim` floats), summed as one chain of fused
// multiply-adds in the order of the dimensions from 0: the order in which the fp32 tile kernels sum a similarity
// (similarity_product), which ordered_dots_match_tiles checks. 16 rows at a time with AVX-512 (a 16 x 16 transpose
// per 16 dimensions), else one row at a time.
void ordered_dots(const float* fixed, const float* const* others, std::size_t count, Eigen::Index dim, float* out);

}  // namespace termalign::detail
