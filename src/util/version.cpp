#include "termalign/version.h"

#include <cstdint>
#include <cstdio>
#include <string_view>

#include "rerank/bundled_models.h"
#include "util/distributed.h"

namespace termalign {

const char* version() { return TERMALIGN_VERSION; }

std::string bundled_models_id() {
  // The models are built in and never change: hashed once. fingerprint_bytes (FNV-1a) over all four, chained.
  static const std::string id = [] {
    const std::string_view plain = detail::bundled_model_text(false), corpus = detail::bundled_model_text(true);
    std::uint64_t hash = fingerprint_bytes(plain.data(), plain.size());
    hash = fingerprint_bytes(corpus.data(), corpus.size(), hash ^ plain.size());
    for (const bool with_corpora : {false, true}) {
      const std::string_view seedless = detail::bundled_model_text(with_corpora, true);
      hash = fingerprint_bytes(seedless.data(), seedless.size(), hash ^ seedless.size());
    }
    char digits[17];
    std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(hash));
    return std::string("fnv1a64:") + digits;
  }();
  return id;
}

}  // namespace termalign
