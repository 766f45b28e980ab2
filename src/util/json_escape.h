// A string as the inside of a JSON string, for the JSON the library writes by hand (evaluate's tables, ablate's
// results.json).
#pragma once

#include <spdlog/fmt/fmt.h>

#include <string>

namespace termalign::detail {

// Quotes, backslashes and control characters escaped.
inline std::string json_escape(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      escaped += '\\';
      escaped += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      escaped += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      escaped += c;
    }
  }
  return escaped;
}

}  // namespace termalign::detail
