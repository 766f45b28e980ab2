// Parsing one space-separated float field of a text line without iostreams.
#pragma once

#include <string_view>

namespace termalign::detail {

enum class FloatStatus {
  ok,            // a finite float (values that underflow round to zero or a subnormal, as strtof does)
  not_a_number,  // not a decimal number ("abc", "1.2.3", "+1", an empty field)
  not_finite,    // "nan", "inf" or a magnitude beyond the float range ("1e99")
};

struct FloatField {
  const char* end;  // end of the field: `last` or the space that ends it, whatever the status
  FloatStatus status;
};

// Parses the field that starts at `first` and ends at the next space or at `last`, into `value`: correctly
// rounded and locale-independent, as std::from_chars (which serves whatever the fast path for short decimals
// leaves).
FloatField parse_float_field(const char* first, const char* last, float& value);

// True when `values` is certainly `count` finite floats separated by single spaces, as fastText writes them
// ("-0.0093491 1.2345e-05 ..."): each field -?D+(.D+)?(e-D{1,2})?, no run of 16 digits or more. A quick check for
// the rows a load does not keep, by bit masks over blocks of 64 bytes (SSE2): about 0.75 us for a row of 300
// values against 3.6 us to parse it. False only says "parse it" (parse_float_field then finds what is wrong, or
// that a rarer form such as "1E+02" is fine).
bool plain_float_fields(std::string_view values, int count);

}  // namespace termalign::detail
