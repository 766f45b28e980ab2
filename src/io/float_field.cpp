#include "io/float_field.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

namespace {

// One 64-byte block's byte classes, bit i for byte i.
struct ByteMasks {
  std::uint64_t digit = 0, space = 0, dot = 0, minus = 0, e = 0;
};

#ifdef __SSE2__
std::uint64_t bytes_equal(const __m128i (&bytes)[4], char value) {
  const __m128i wanted = _mm_set1_epi8(value);
  std::uint64_t mask = 0;
  for (int part = 0; part < 4; ++part) {
    const auto bits = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes[part], wanted)));
    mask |= static_cast<std::uint64_t>(bits) << (16 * part);
  }
  return mask;
}
#endif

ByteMasks classify(const char* block) {
  ByteMasks masks;
#ifdef __SSE2__
  __m128i bytes[4];
  std::uint64_t digit = 0;
  for (int part = 0; part < 4; ++part) {
    bytes[part] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * part));
    // byte - '0' below 10, unsigned: a digit.
    const __m128i above_nine = _mm_subs_epu8(_mm_sub_epi8(bytes[part], _mm_set1_epi8('0')), _mm_set1_epi8(9));
    const auto bits =
        static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(above_nine, _mm_setzero_si128())));
    digit |= static_cast<std::uint64_t>(bits) << (16 * part);
  }
  masks.digit = digit;
  masks.space = bytes_equal(bytes, ' ');
  masks.dot = bytes_equal(bytes, '.');
  masks.minus = bytes_equal(bytes, '-');
  masks.e = bytes_equal(bytes, 'e');
#else
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    const char byte = block[i];
    if (is_digit(byte)) masks.digit |= bit;
    if (byte == ' ') masks.space |= bit;
    if (byte == '.') masks.dot |= bit;
    if (byte == '-') masks.minus |= bit;
    if (byte == 'e') masks.e |= bit;
  }
#endif
  return masks;
}

// X shifted one byte on (bit i set when byte i - 1 is in X), the previous block's last bit coming in.
struct Follower {
  std::uint64_t last = 0;
  std::uint64_t operator()(std::uint64_t mask) {
    const std::uint64_t shifted = (mask << 1) | last;
    last = mask >> 63;
    return shifted;
  }
};

}  // namespace

bool plain_float_fields(std::string_view values, int count) {
  // Rules on 64-byte blocks of bit masks, one bit a byte; the end of the text acts as one more space (`end`),
  // and so does the position before it. A field -?D+(.D+)?(e-D{1,2})? between spaces is exactly what they allow:
  //   only digits, ' ', '.', '-', 'e'; a space (or the start) is followed by a digit or '-';
  //   '-' starts a field or follows 'e', and is followed by a digit;
  //   '.' lies between digits, and the digits after it end at a space, an 'e' or the end;
  //   'e' follows a digit and is followed by '-', one or two digits, then a space or the end;
  //   no run of 16 digits or more (so the integer part is below 1e16: finite).
  const std::size_t size = values.size();
  Follower after_space, after_digit, after_minus, after_dot, after_e, after_exponent_minus, after_first_digit,
      after_second_digit;
  after_space.last = 1;  // the start acts as a space
  std::uint64_t add_carry = 0, spaces = 0;
  std::size_t digit_run = 0;  // digits at the end of the blocks so far
  std::uint64_t faults = 0;
  char padded[64];
  for (std::size_t begin = 0; begin <= size; begin += 64) {
    const char* block = values.data() + begin;
    const std::size_t length = std::min<std::size_t>(64, size - begin);
    std::uint64_t valid = ~std::uint64_t{0}, end = 0;
    if (length < 64) {                                     // the last block: its bytes, then spaces
      if (length > 0) std::memcpy(padded, block, length);  // an empty view may have no data at all
      std::memset(padded + length, ' ', 64 - length);
      block = padded;
      end = std::uint64_t{1} << length;
      valid = end - 1;
    }
    ByteMasks m = classify(block);
    m.digit &= valid;
    m.dot &= valid;
    m.minus &= valid;
    m.e &= valid;
    m.space &= valid;
    const std::uint64_t ends = m.space | end;  // a space or the end
    const std::uint64_t checked = valid | end;
    faults |= valid & ~(m.digit | m.space | m.dot | m.minus | m.e);
    const std::uint64_t space_before = after_space(m.space);
    const std::uint64_t digit_before = after_digit(m.digit);
    const std::uint64_t minus_before = after_minus(m.minus);
    const std::uint64_t dot_before = after_dot(m.dot);
    const std::uint64_t e_before = after_e(m.e);
    faults |= space_before & ~(m.digit | m.minus) & checked;
    faults |= m.minus & ~(space_before | e_before);
    faults |= minus_before & ~m.digit & checked;
    faults |= (m.dot | m.e) & ~digit_before;
    faults |= dot_before & ~m.digit & checked;
    // The digits after '.': adding their first bit carries through the run onto the byte that ends it.
    std::uint64_t sum;
    const bool overflow_a = __builtin_add_overflow(m.digit, dot_before, &sum);
    const bool overflow_b = __builtin_add_overflow(sum, add_carry, &sum);
    add_carry = (overflow_a || overflow_b) ? 1 : 0;
    faults |= sum & ~m.digit & ~(ends | m.e) & checked;
    faults |= e_before & ~m.minus & checked;
    const std::uint64_t first_digit = after_exponent_minus(e_before & m.minus);
    const std::uint64_t second = after_first_digit(first_digit);
    faults |= second & ~(m.digit | ends) & checked;
    faults |= after_second_digit(second & m.digit) & ~ends & checked;
    // Runs of 16 digits: within the block, or across its start.
    std::uint64_t run = m.digit & (m.digit << 1);
    run &= run << 2;
    run &= run << 4;
    run &= run << 8;
    faults |= run;
    const std::size_t leading =
        m.digit == ~std::uint64_t{0} ? 64 : static_cast<std::size_t>(__builtin_ctzll(~m.digit));
    if (digit_run + leading >= 16) return false;
    digit_run =
        leading == 64 ? digit_run + 64 : (m.digit >> 63 ? static_cast<std::size_t>(__builtin_clzll(~m.digit)) : 0);
    spaces += static_cast<std::uint64_t>(__builtin_popcountll(m.space));
    if (faults != 0) return false;
  }
  // An exponent's digits or a '.''s digits running into the end carry past the padding: the end took them.
  return spaces + 1 == static_cast<std::uint64_t>(count);
}

}  // namespace termalign::detail
