#include "termalign/version.h"

#include <cstdint>
#include <cstdio>
#include <string_view>

#include "detail/bundled_models.h"

namespace termalign {

const char* version() { return TERMALIGN_VERSION; }

std::string bundled_models_id() {
  // FNV-1a, 64 bits, over both models with a separator: any change to either file changes it.
  std::uint64_t hash = 14695981039346656037ull;
  const auto add = [&hash](std::string_view text) {
    for (const unsigned char byte : text) hash = (hash ^ byte) * 1099511628211ull;
  };
  add(detail::bundled_model_text(false));
  add(std::string_view("\0", 1));
  add(detail::bundled_model_text(true));
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(hash));
  return std::string("fnv1a64:") + digits;
}

}  // namespace termalign
