// Parsing one space-separated float field of a text line without iostreams.
#pragma once

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

}  // namespace termalign::detail
