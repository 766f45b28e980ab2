#include "scoring/bf16_product.h"

#include <cpuid.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <utility>
#include <vector>

#include "scoring/scoring.h"
#include "termalign/error.h"
#include "util/parallel.h"

namespace termalign {
namespace {

// The bf16 instructions this CPU offers with the operating system's support, e.g. "AVX512_BF16, AMX-BF16", or ""
// (cpuid leaf 7: subleaf 1 EAX bit 5 AVX512_BF16, subleaf 0 EDX bits 22 and 24 AMX-BF16 and AMX-TILE; XCR0 bits
// 1, 2, 5-7 the AVX-512 state, 17-18 the AMX tile state).
std::string bf16_instructions() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx) == 0 || (ecx & (1u << 27)) == 0) return "";  // no OSXSAVE
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  std::string found;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 5)) != 0 &&
      (xcr0_low & 0xE6u) == 0xE6u)
    found = "AVX512_BF16";
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (edx & (1u << 22)) != 0 && (edx & (1u << 24)) != 0 &&
      (xcr0_low & 0x60000u) == 0x60000u)
    found += found.empty() ? "AMX-BF16" : ", AMX-BF16";
  return found;
}

// TERMALIGN_CPU_BF16 when set and not empty, else null.
const char* forced_bf16() {
  const char* forced = std::getenv("TERMALIGN_CPU_BF16");
  return forced != nullptr && *forced != '\0' ? forced : nullptr;
}

}  // namespace

bool cpu_has_bf16() {
  if (const char* forced = forced_bf16()) {
    if (std::strcmp(forced, "0") == 0) return false;
    if (std::strcmp(forced, "1") == 0) return true;
    throw_usage_error("TERMALIGN_CPU_BF16 must be 0 or 1 (got \"" + std::string(forced) + "\").");
  }
  static const bool has = !bf16_instructions().empty();
  return has;
}

// Whether this build has the vector code of the bf16 passes (rounding, exact dot products, selection), compiled
// for AVX-512 (-march=native on such a CPU); without it they run, more slowly, and `auto` does not pick them.
constexpr bool kVectorBf16Passes =
#if defined(__AVX512F__)
    true;
#else
    false;
#endif

Precision resolve_precision(Precision requested) {
  if (requested != Precision::automatic) return requested;
  return kVectorBf16Passes && cpu_has_bf16() ? Precision::bf16 : Precision::fp32;
}

std::string describe_precision(Precision requested) {
  const std::string instructions = bf16_instructions();
  const std::string cpu =
      instructions.empty() ? "the CPU has no bf16 instructions" : "the CPU has " + instructions;
  const char* forced = forced_bf16();
  const std::string why =
      forced != nullptr && requested == Precision::automatic ? cpu + ", TERMALIGN_CPU_BF16=" + forced : cpu;
  const Precision chosen = resolve_precision(requested);
  const std::string how = requested == Precision::automatic ? "auto" : "asked for";
  if (!kVectorBf16Passes && chosen == Precision::fp32 && requested == Precision::automatic && cpu_has_bf16())
    return "fp32 (auto; " + why +
           ", but this build has no AVX-512 code for the bf16 passes: -DTERMALIGN_NATIVE=OFF)";
  if (chosen == Precision::fp32) return "fp32 (" + how + "; " + why + ")";
  return "bf16 rescored in fp32 (" + std::string(detail::onednn_version()) + "; " + how + "; " + why + ")";
}

namespace detail {

void to_bf16(const float* values, std::size_t count, Bf16* out) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  // The scalar rounding on 16 floats at a time (integer operations: the same bits, subnormals included).
  const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF), infinity = _mm512_set1_epi32(0x7F800000);
  const __m512i half = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  for (; i + 16 <= count; i += 16) {
    const __m512i bits = _mm512_loadu_si512(values + i);
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(bits, magnitude), infinity);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(bits, _mm512_add_epi32(half, _mm512_and_si512(_mm512_srli_epi32(bits, 16), one))), 16);
    const __m512i result = _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(bits, 16), quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(result));
  }
#endif
  for (; i < count; ++i) out[i] = to_bf16(values[i]);
}

RoundingNorms rounding_norms(const Matrix& M, int threads) {
  constexpr Eigen::Index kRows = 4096;
  const std::size_t blocks = static_cast<std::size_t>((M.rows() + kRows - 1) / kRows);
  std::vector<RoundingNorms> squares(blocks);  // per block, the largest squared norms
  const auto dim = static_cast<std::size_t>(M.cols());
  parallel_for(blocks, threads, [&](std::size_t block) {
    RoundingNorms& most = squares[block];
    std::vector<Bf16> rounded_row(dim);
    const Eigen::Index end = std::min(M.rows(), static_cast<Eigen::Index>(block + 1) * kRows);
    for (Eigen::Index r = static_cast<Eigen::Index>(block) * kRows; r < end; ++r) {
      const float* values = M.data() + static_cast<std::size_t>(r) * dim;
      to_bf16(values, dim, rounded_row.data());
      double row = 0, rounded = 0, residual = 0;
      std::size_t c = 0;
#if defined(__AVX512F__)
      // 8 doubles at a time (any order of the sums: their rounding is far below the bound's margin).
      __m512d rows8 = _mm512_setzero_pd(), rounded8 = _mm512_setzero_pd(), residual8 = _mm512_setzero_pd();
      for (; c + 8 <= dim; c += 8) {
        const __m512d value = _mm512_cvtps_pd(_mm256_loadu_ps(values + c));
        const __m512d approximation = _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rounded_row.data() + c))),
            16)));
        const __m512d difference = _mm512_sub_pd(value, approximation);
        rows8 = _mm512_fmadd_pd(value, value, rows8);
        rounded8 = _mm512_fmadd_pd(approximation, approximation, rounded8);
        residual8 = _mm512_fmadd_pd(difference, difference, residual8);
      }
      row = _mm512_reduce_add_pd(rows8);
      rounded = _mm512_reduce_add_pd(rounded8);
      residual = _mm512_reduce_add_pd(residual8);
#endif
      for (; c < dim; ++c) {
        const double value = values[c], approximation = from_bf16(rounded_row[c]);
        row += value * value;
        rounded += approximation * approximation;
        residual += (value - approximation) * (value - approximation);
      }
      most.row = std::max(most.row, row);
      most.rounded = std::max(most.rounded, rounded);
      most.residual = std::max(most.residual, residual);
    }
  });
  // Square roots of sums of squares in double: relative errors near 1e-16, covered by the bound's final factor.
  RoundingNorms norms;
  for (const RoundingNorms& most : squares) {
    norms.row = std::max(norms.row, std::sqrt(most.row));
    norms.rounded = std::max(norms.rounded, std::sqrt(most.rounded));
    norms.residual = std::max(norms.residual, std::sqrt(most.residual));
  }
  return norms;
}

float bf16_error_bound(const RoundingNorms& x, const RoundingNorms& z, Eigen::Index dim) {
  const double u = std::ldexp(1.0, -24), d = static_cast<double>(dim);
  TERMALIGN_CHECK(d * u < 0.5, "a dimension the bound covers");
  const double gamma = d * u / (1 - d * u);
  const double inputs = x.rounded * z.residual + x.residual * z.rounded + x.residual * z.residual;
  const double sums = gamma * (x.rounded * z.rounded + x.row * z.row);
  const double subnormals = 2 * d * static_cast<double>(std::numeric_limits<float>::min());
  const double bound = (inputs + sums + subnormals) * (1 + 1e-6);
  return std::nextafter(static_cast<float>(bound), std::numeric_limits<float>::infinity());
}

struct Bf16Product::State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<std::pair<Eigen::Index, Eigen::Index>, dnnl::matmul> primitives;  // by (rhs_rows, lhs_rows)
  Eigen::Index dim = -1;
};

Bf16Product::Bf16Product() : state_(std::make_unique<State>()) {}
Bf16Product::~Bf16Product() = default;

void Bf16Product::operator()(const Bf16* lhs, Eigen::Index lhs_rows, const Bf16* rhs, Eigen::Index rhs_rows,
                             Eigen::Index dim, float* out) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  if (dim != state_->dim) state_->primitives.clear(), state_->dim = dim;
  // oneDNN: dst (M x N) = src (M x K) weights (K x N); src = rhs (row-major), weights = lhs^T (lhs row-major is
  // its transpose in "ba" order), dst = out.
  const dnnl::memory::desc src({rhs_rows, dim}, dt::bf16, tag::ab);
  const dnnl::memory::desc weights({dim, lhs_rows}, dt::bf16, tag::ba);
  const dnnl::memory::desc dst({rhs_rows, lhs_rows}, dt::f32, tag::ab);
  auto found = state_->primitives.find({rhs_rows, lhs_rows});
  if (found == state_->primitives.end()) {
    try {
      const dnnl::matmul::primitive_desc description(dnnl::matmul::desc(src, weights, dst), state_->engine);
      found = state_->primitives.emplace(std::make_pair(rhs_rows, lhs_rows), dnnl::matmul(description)).first;
    } catch (const dnnl::error& error) {
      throw_usage_error(
          std::string("bf16 similarity tiles: ") + onednn_version() +
          " has no bf16 matrix product for this CPU (" + error.what() +
          "). Use --precision fp32, or auto, which takes bf16 only where the CPU has bf16 instructions.");
    }
  }
  dnnl::memory src_memory(src, state_->engine, const_cast<Bf16*>(rhs));
  dnnl::memory weights_memory(weights, state_->engine, const_cast<Bf16*>(lhs));
  dnnl::memory dst_memory(dst, state_->engine, out);
  found->second.execute(
      state_->stream,
      {{DNNL_ARG_SRC, src_memory}, {DNNL_ARG_WEIGHTS, weights_memory}, {DNNL_ARG_DST, dst_memory}});
  state_->stream.wait();
}

const char* onednn_version() {
  static const std::string version = [] {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  }();
  return version.c_str();
}

namespace {

#if defined(__AVX512F__)
// rows[0..15] -> columns[k] holds element k of each row (k < 16), by unpacks of pairs of floats, then of pairs of
// pairs (as doubles), then 128-bit lane shuffles.
inline void transpose16(__m512 rows[16], __m512 columns[16]) {
  __m512 pairs[16], quads[16];
  for (int g = 0; g < 8; ++g) {
    pairs[2 * g] = _mm512_unpacklo_ps(rows[2 * g], rows[2 * g + 1]);      // per lane: a0 b0 a1 b1
    pairs[2 * g + 1] = _mm512_unpackhi_ps(rows[2 * g], rows[2 * g + 1]);  // per lane: a2 b2 a3 b3
  }
  for (int g = 0; g < 4; ++g) {  // rows 4g..4g+3: quads[4g + m] holds, in lane l, column 4l + m
    const __m512d low01 = _mm512_castps_pd(pairs[4 * g]), high01 = _mm512_castps_pd(pairs[4 * g + 1]);
    const __m512d low23 = _mm512_castps_pd(pairs[4 * g + 2]), high23 = _mm512_castps_pd(pairs[4 * g + 3]);
    quads[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(low01, low23));
    quads[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(low01, low23));
    quads[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(high01, high23));
    quads[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(high01, high23));
  }
  for (int m = 0; m < 4; ++m) {
    const __m512 low01 = _mm512_shuffle_f32x4(quads[m], quads[4 + m], 0x44);  // lanes 0 1 of rows 0-3, 4-7
    const __m512 low23 = _mm512_shuffle_f32x4(quads[8 + m], quads[12 + m], 0x44);
    const __m512 high01 = _mm512_shuffle_f32x4(quads[m], quads[4 + m], 0xEE);  // lanes 2 3
    const __m512 high23 = _mm512_shuffle_f32x4(quads[8 + m], quads[12 + m], 0xEE);
    columns[0 + m] = _mm512_shuffle_f32x4(low01, low23, 0x88);
    columns[4 + m] = _mm512_shuffle_f32x4(low01, low23, 0xDD);
    columns[8 + m] = _mm512_shuffle_f32x4(high01, high23, 0x88);
    columns[12 + m] = _mm512_shuffle_f32x4(high01, high23, 0xDD);
  }
}
#endif

}  // namespace

void ordered_dots(const float* fixed, const float* const* others, std::size_t count, Eigen::Index dim,
                  float* out) {
  std::size_t j = 0;
#if defined(__AVX512F__)
  for (; j + 16 <= count; j += 16) {
    __m512 sums = _mm512_setzero_ps(), rows[16], columns[16];
    for (Eigen::Index k = 0; k < dim; k += 16) {
      const Eigen::Index width = std::min<Eigen::Index>(16, dim - k);
      const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1u);
      for (int r = 0; r < 16; ++r)
        rows[r] = _mm512_maskz_loadu_ps(mask, others[j + static_cast<std::size_t>(r)] + k);
      transpose16(rows, columns);
      for (Eigen::Index t = 0; t < width; ++t)
        sums = _mm512_fmadd_ps(_mm512_set1_ps(fixed[k + t]), columns[t], sums);
    }
    _mm512_storeu_ps(out + j, sums);
  }
  if (j < count) {  // the last rows, with the last one repeated to make 16
    const float* padded[16];
    float sums[16];
    for (std::size_t r = 0; r < 16; ++r) padded[r] = others[std::min(j + r, count - 1)];
    ordered_dots(fixed, padded, 16, dim, sums);
    std::copy(sums, sums + (count - j), out + j);
    return;
  }
#endif
  // 8 chains at a time, so that their fused multiply-adds overlap.
  for (; j < count; j += 8) {
    const std::size_t chains = std::min<std::size_t>(8, count - j);
    float sums[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (Eigen::Index k = 0; k < dim; ++k)
      for (std::size_t c = 0; c < chains; ++c) sums[c] = std::fma(fixed[k], others[j + c][k], sums[c]);
    std::copy(sums, sums + chains, out + j);
  }
}

}  // namespace detail
}  // namespace termalign
