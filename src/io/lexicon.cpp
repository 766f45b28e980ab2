#include "termalign/lexicon.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "io/io.h"
#include "termalign/error.h"
#include "termalign/logging.h"

namespace termalign {

std::optional<std::uint32_t> TermList::id(const std::string& term) const {
  const auto found = ids.find(term);
  if (found == ids.end()) return std::nullopt;
  return found->second;
}

namespace {

// Walks a whole file line by line: checks encoding and NUL bytes, strips a BOM, CRLF ends and surrounding white
// space, skips blank lines, and collects the counts behind the one-per-file warnings.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), contents_(read_file(path)) {
    rest_ = contents_;
    line_capacity_ = static_cast<std::size_t>(std::count(rest_.begin(), rest_.end(), '\n')) + 1;
    if (strip_utf8_bom(rest_)) {
      logger().warn("{}: starts with a UTF-8 byte order mark; ignored", path_);
    }
  }

  // The next non-blank line: `raw` without its line end, `text` stripped of surrounding white space.
  bool next(std::string_view& raw, std::string_view& text) {
    while (!rest_.empty()) {
      const auto end = rest_.find('\n');
      raw = rest_.substr(0, end);
      rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end + 1);
      ++line_;
      if (end != std::string_view::npos && !raw.empty() && raw.back() == '\r') {
        raw.remove_suffix(1);
        ++crlf_lines_;
      }
      if (std::memchr(raw.data(), '\0', raw.size()) != nullptr) fail("line contains a NUL byte");
      // A file joined from several may carry a byte order mark inside: it is not part of the term.
      if (strip_utf8_bom(raw)) ++bom_lines_;
      if (!is_valid_utf8(raw)) fail("line is not valid UTF-8");
      if (!is_nfc(raw)) ++non_nfc_lines_;
      text = trim(raw);
      if (text.find('\r') != std::string_view::npos) {
        fail(
            "line holds a carriage return (CR) inside: a file with CR-only line ends? Convert it to LF line "
            "ends");
      }
      if (!text.empty()) return true;
    }
    return false;
  }

  // Keeps the first copy of each line; later copies are counted (and, in a ranked list, take no rank).
  bool first_occurrence(std::string_view text) {
    if (seen_.empty()) seen_.reserve(line_capacity_);
    if (seen_.insert(text).second) return true;
    ++duplicates_;
    return false;
  }
  // For a reader that keeps its own index of the lines seen: counts a later copy.
  void count_duplicate() { ++duplicates_; }

  [[noreturn]] void fail(const std::string& message) const { throw_input_error(path_, line_, message); }

  // The summary warnings, once the whole file is read.
  void finish(const char* repeated_what) const {
    if (crlf_lines_ > 0) logger().warn("{}: {} lines end with CRLF; accepted", path_, crlf_lines_);
    if (bom_lines_ > 0) {
      logger().warn(
          "{}: {} lines after the first start with a UTF-8 byte order mark (files joined together?); "
          "ignored",
          path_, bom_lines_);
    }
    if (duplicates_ > 0) logger().warn("{}: {} repeated {}", path_, duplicates_, repeated_what);
    if (non_nfc_lines_ > 0) {
      logger().warn(
          "{}: {} lines are not in Unicode NFC (composed characters, as BUCC data and fastText vectors are): "
          "their words may miss the vectors, the seed lexicon and the gold; convert the file to NFC",
          path_, non_nfc_lines_);
    }
  }

  std::size_t line() const { return line_; }
  // An upper bound on the number of lines, for reserving.
  std::size_t line_capacity() const { return line_capacity_; }
  std::size_t duplicates() const { return duplicates_; }

 private:
  const std::string& path_;
  const std::string contents_;
  std::string_view rest_;
  std::size_t line_ = 0, crlf_lines_ = 0, bom_lines_ = 0, duplicates_ = 0, non_nfc_lines_ = 0, line_capacity_ = 0;
  std::unordered_set<std::string_view> seen_;
};

const char* describe(PairFileKind kind) {
  switch (kind) {
    case PairFileKind::seed_lexicon:
      return "seed lexicon";
    case PairFileKind::gold:
      return "gold file";
    case PairFileKind::submission:
      return "submission";
  }
  return "pair file";
}

// A finite number in plain decimal or exponent notation, the whole field.
bool is_number(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  double value = 0;
  const auto parsed = std::from_chars(field.data(), field.data() + field.size(), value);
  return !field.empty() && parsed.ec == std::errc() && parsed.ptr == field.data() + field.size() &&
         std::isfinite(value);
}

// The number of numeric fields after the first when every one of them is numeric, else 0: a row of a .vec file
// ("word 0.12 -0.5 ...") gives its dimension.
std::size_t vector_fields(std::string_view line) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return 0;
  std::size_t fields = 0;
  for (std::string_view rest = line.substr(space + 1); !rest.empty();) {
    const auto end = rest.find(' ');
    const std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (field.empty()) continue;
    if (!is_number(field)) return 0;
    ++fields;
  }
  return fields;
}

// Terms have a few words; a line of a word and this many numbers is a word vector, not a term.
constexpr std::size_t kVectorFields = 8;

}  // namespace

TermList read_term_list(const std::string& path) {
  TermList list;
  list.path = path;
  LineReader reader(list.path);
  list.terms.reserve(reader.line_capacity());
  list.ids.reserve(reader.line_capacity());
  std::string_view raw, text;
  while (reader.next(raw, text)) {
    if (text.find('\t') != std::string_view::npos) {
      reader.fail(
          "the line looks like a pair (source<TAB>target), not a term: a term list holds one term per line. Is a "
          "seed lexicon, gold or submission given as a term list?");
    }
    if (const std::size_t numbers = vector_fields(text); numbers >= kVectorFields) {
      reader.fail("the line looks like a word vector (a word and " + std::to_string(numbers) +
                  " numbers), not a term. Is a .vec file given as a term list?");
    }
    // The list's own index tells a repeated term.
    if (!list.ids.emplace(std::string(text), static_cast<std::uint32_t>(list.terms.size())).second) {
      reader.count_duplicate();
      continue;
    }
    list.terms.emplace_back(text);
  }
  reader.finish("terms kept once");
  if (list.terms.empty()) logger().warn("{}: the term list holds no term", path);
  return list;
}

PairList read_pairs(const std::string& path, PairFileKind kind, ScoreColumn score_column) {
  PairList list;
  list.path = path;
  LineReader reader(list.path);
  list.pairs.reserve(reader.line_capacity());
  list.lines.reserve(reader.line_capacity());
  std::size_t space_beside_tab = 0;
  std::optional<bool> scored;  // decided on the first line when detected
  if (score_column != ScoreColumn::detect) scored = score_column == ScoreColumn::required;
  std::string_view raw, text;
  while (reader.next(raw, text)) {
    // Columns are counted on the line before stripping, so that "term<TAB>" is an empty column, not one column.
    const auto tab = raw.find('\t');
    const auto second_tab = tab == std::string_view::npos ? tab : raw.find('\t', tab + 1);
    const bool third =
        second_tab != std::string_view::npos && raw.find('\t', second_tab + 1) == std::string_view::npos;
    if (!scored) scored = third && is_number(trim(raw.substr(second_tab + 1)));
    if (*scored) {
      // A score list (as `align --scores` writes): the third column is the score; the line order stays the rank.
      if (!third) {
        reader.fail(
            "expected exactly 3 TAB-separated columns (source<TAB>target<TAB>score) in a score list, "
            "found " +
            std::string(tab == std::string_view::npos          ? "1"
                        : second_tab == std::string_view::npos ? "2"
                                                               : "more than 3"));
      }
      const std::string_view score = trim(raw.substr(second_tab + 1));
      if (!is_number(score)) reader.fail("the score '" + std::string(score) + "' is not a finite number");
      double value = 0;
      std::from_chars(score.data() + (score.front() == '+'), score.data() + score.size(), value);
      list.scores.push_back(value);
      raw = raw.substr(0, second_tab);
      text = trim(raw);
    }
    const std::size_t columns = tab == std::string_view::npos                       ? 1
                                : raw.find('\t', tab + 1) == std::string_view::npos ? 2
                                                                                    : 3;
    if (columns != 2) {
      reader.fail(std::string("expected exactly 2 TAB-separated columns (source<TAB>target), found ") +
                  (columns == 1 ? "1" : "more than 2"));
    }
    if (trim(raw.substr(0, tab)).empty()) reader.fail("empty source term");
    if (trim(raw.substr(tab + 1)).empty()) reader.fail("empty target term");
    // As the organisers' scorer, the stripped line is split as it is: white space beside the TAB stays.
    const auto text_tab = text.find('\t');
    const std::string_view source = text.substr(0, text_tab), target = text.substr(text_tab + 1);
    if (source != trim(source) || target != trim(target)) ++space_beside_tab;
    if (!reader.first_occurrence(text)) {
      if (*scored) list.scores.pop_back();
      continue;
    }
    list.pairs.emplace_back(std::string(source), std::string(target));
    list.lines.push_back(reader.line());
  }
  list.duplicates = reader.duplicates();
  reader.finish(kind == PairFileKind::submission
                    ? "pairs kept once, at their first rank (later copies take no rank)"
                    : "pairs kept once");
  if (space_beside_tab > 0) {
    logger().warn(
        "{}: {} lines have white space beside the TAB; kept as part of the term, as the organisers' "
        "scorer does",
        path, space_beside_tab);
  }
  if (kind == PairFileKind::gold && list.pairs.empty()) {
    throw_input_error(path, reader.line(), "the gold file holds no pair");
  }
  if (list.pairs.empty()) logger().warn("{}: the {} holds no pair", path, describe(kind));
  return list;
}

std::size_t submission_cap(std::size_t source_terms, std::size_t target_terms) {
  return 10 * (source_terms + target_terms) / 2;
}

std::vector<std::vector<std::uint32_t>> nested_terms(const TermList& list) {
  // Parts of at most this many words: terms have 1 to 5, and a term of a million words costs a few million
  // look-ups, not a trillion.
  constexpr std::size_t kMaxPartWords = 8;
  std::vector<std::vector<std::uint32_t>> parts(list.size());
  for (std::size_t id = 0; id < list.size(); ++id) {
    const std::string& term = list.terms[id];
    std::vector<std::size_t> starts{0}, ends;
    for (std::size_t i = 0; i < term.size(); ++i) {
      if (term[i] != ' ') continue;
      ends.push_back(i);
      starts.push_back(i + 1);
    }
    ends.push_back(term.size());
    for (std::size_t a = 0; a < starts.size(); ++a) {
      for (std::size_t b = a; b < std::min(ends.size(), a + kMaxPartWords); ++b) {
        if (a == 0 && b + 1 == ends.size()) continue;  // the term itself
        const auto found = list.ids.find(term.substr(starts[a], ends[b] - starts[a]));
        if (found != list.ids.end()) parts[id].push_back(found->second);
      }
    }
    std::sort(parts[id].begin(), parts[id].end());  // a part found at several places counts once
    parts[id].erase(std::unique(parts[id].begin(), parts[id].end()), parts[id].end());
  }
  return parts;
}

}  // namespace termalign
