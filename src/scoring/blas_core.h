// OpenBLAS's kernel families by the core name it reports (openblas_get_corename()), for the tile kernel choice.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>

namespace termalign::detail {

// Whether OpenBLAS's kernels for `core` predate AVX2. OpenBLAS falls back to such a core on a CPU it does not
// recognise: a virtual "Intel(R) Xeon(R) Processor" with AVX-512 gets "Prescott" (SSE3), much slower than Eigen
// compiled for the machine.
inline bool blas_core_without_avx2(std::string_view core) {
  static constexpr std::array<std::string_view, 18> kOld = {
      "prescott",  "core2",  "penryn",     "dunnington", "nehalem", "sandybridge",
      "atom",      "katmai", "coppermine", "northwood",  "banias",  "opteron",
      "barcelona", "bobcat", "bulldozer",  "piledriver", "nano",    "generic"};
  std::string lower(core);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(kOld.begin(), kOld.end(), lower) != kOld.end();
}

}  // namespace termalign::detail
