#include "io/float_field.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>

namespace termalign::detail {

namespace {

bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// Appends the decimal digits at `position` to `significand` (wrapping when there are more than 19) and moves past
// them; returns how many there were.
int append_digits(const char*& position, const char* last, std::uint64_t& significand) {
  int count = 0;
  for (; position != last && is_digit(*position); ++position, ++count) {
    significand = significand * 10 + static_cast<unsigned>(*position - '0');
  }
  return count;
}

// Clinger's fast path for what embedding files hold ("-0.0093491", "1.2345e-05"): a decimal with at most 19
// digits whose significand m fits in 24 bits and whose power of ten e is within [-10, 10]. Then m and 10^|e| are
// exact floats and one IEEE multiplication or division rounds correctly, giving what from_chars gives. Returns
// false (leaving the field to from_chars) for anything else, malformed fields included.
bool parse_plain_decimal(const char* first, const char* last, float& value, const char*& end) {
  static constexpr float powers_of_ten[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
  const char* position = first;
  const bool negative = position != last && *position == '-';
  if (negative) ++position;
  std::uint64_t significand = 0;
  int digits = append_digits(position, last, significand), exponent = 0;
  if (position != last && *position == '.') {
    ++position;
    exponent = -append_digits(position, last, significand);
    digits -= exponent;
  }
  if (digits == 0 || digits > 19) return false;
  if (position != last && (*position == 'e' || *position == 'E')) {
    ++position;
    const bool negative_exponent = position != last && *position == '-';
    if (position != last && (*position == '-' || *position == '+')) ++position;
    int written_exponent = 0, exponent_digits = 0;
    for (; position != last && is_digit(*position) && exponent_digits < 4; ++position, ++exponent_digits) {
      written_exponent = written_exponent * 10 + (*position - '0');
    }
    if (exponent_digits == 0) return false;
    exponent += negative_exponent ? -written_exponent : written_exponent;
  }
  if ((position != last && *position != ' ') || significand > (std::uint64_t{1} << 24) || exponent < -10 ||
      exponent > 10) {
    return false;
  }
  const float magnitude = static_cast<float>(significand);
  value = exponent < 0 ? magnitude / powers_of_ten[-exponent] : magnitude * powers_of_ten[exponent];
  if (negative) value = -value;
  end = position;
  return true;
}

}  // namespace

FloatField parse_float_field(const char* first, const char* last, float& value) {
  const char* end;
  if (parse_plain_decimal(first, last, value, end)) return {end, FloatStatus::ok};
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
