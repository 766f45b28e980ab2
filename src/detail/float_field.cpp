#include "detail/float_field.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

namespace termalign::detail {

FloatField parse_float_field(const char* first, const char* last, float& value) {
  const auto parsed = std::from_chars(first, last, value);
  if (parsed.ec == std::errc() && (parsed.ptr == last || *parsed.ptr == ' ')) {
    return {parsed.ptr, std::isfinite(value) ? FloatStatus::ok : FloatStatus::not_finite};
  }
  const void* space = std::memchr(first, ' ', static_cast<std::size_t>(last - first));
  const char* field_end = space != nullptr ? static_cast<const char*>(space) : last;
  if (parsed.ec != std::errc::result_out_of_range || parsed.ptr != field_end) {
    return {field_end, FloatStatus::not_a_number};
  }
  // from_chars reports underflow and overflow alike; through double, underflow rounds to zero or a subnormal
  // float while overflow becomes infinite.
  double wide;
  const auto reparsed = std::from_chars(first, field_end, wide);
  if (reparsed.ec != std::errc() || reparsed.ptr != field_end) return {field_end, FloatStatus::not_finite};
  value = static_cast<float>(wide);
  return {field_end, std::isfinite(value) ? FloatStatus::ok : FloatStatus::not_finite};
}

}  // namespace termalign::detail
