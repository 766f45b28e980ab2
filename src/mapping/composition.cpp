#include "mapping/composition.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "io/io.h"
#include "io/train_vectors.h"
#include "mapping/compose_alongside.h"
#include "termalign/logging.h"
#include "util/huge_pages.h"
#include "util/parallel.h"
#include "util/spread_sample.h"

namespace termalign {

namespace {

// Splits on the separators inside compounds: hyphens (-, U+2010, U+2011) and apostrophes (', U+2019).
std::vector<std::string> split_compound(const std::string& token) {
  static const char* separators[] = {"-", "'", "\xE2\x80\x90", "\xE2\x80\x91", "\xE2\x80\x99"};
  std::vector<std::string> pieces;
  std::string current;
  for (std::size_t i = 0; i < token.size();) {
    std::size_t separator_length = 0;
    for (const char* separator : separators) {
      const std::size_t length = std::char_traits<char>::length(separator);
      if (token.compare(i, length, separator) == 0) {
        separator_length = length;
        break;
      }
    }
    if (separator_length) {
      if (!current.empty()) pieces.push_back(std::move(current));
      current.clear();
      i += separator_length;
    } else {
      current += token[i++];
    }
  }
  if (!current.empty()) pieces.push_back(std::move(current));
  return pieces;
}

constexpr std::size_t kMinCompoundPart = 4;  // characters of a closed compound's head, and of its modifier
// A word with no reading in such parts may have parts of 3 characters (datei|typ, web|seite, zip|code), none of
// them among the vectors' kFrequentRows first rows: those are function words, which would split words at their
// prefixes and endings (`aus|wahl`, `ändern|den`).
constexpr std::size_t kMinShortPart = 3;
constexpr std::size_t kFrequentRows = 150;
constexpr std::size_t kMaxCompoundLength = 64;  // characters: longer tokens are not searched for parts
// Linking elements between a modifier and its head (`arbeit-s-blatt`, `seite-n-zahl`, `tag-es-zeit`).
constexpr std::string_view kLinkingElements[] = {"s", "es", "n", "en"};

// The row of `word` in `vectors`, as written or (any_case) by row_any_case.
std::optional<std::size_t> known_row(const Embeddings& vectors, const std::string& word, bool any_case) {
  return any_case ? vectors.row_any_case(word) : vectors.row(word);
}

bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::size_t characters(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !utf8_continuation(c); }));
}

// A reading of a word as parts: their rows, and the sum over them of log(row + 2), a frequency rank's log (the
// rows of a vector file come most frequent first).
struct Reading {
  std::vector<std::size_t> rows;
  double log_ranks = 0;

  // A word read as itself.
  static Reading of(std::size_t row) {
    Reading reading;
    reading.add(row);
    return reading;
  }
  double mean() const { return log_ranks / static_cast<double>(rows.size()); }
  void add(std::size_t row) {
    rows.push_back(row);
    log_ranks += std::log(static_cast<double>(row) + 2);
  }
  // Koehn and Knight's rule (2003): the parts of the highest geometric mean of frequency, so the lowest mean log
  // rank (`wirtschaft|s|teil`, not `wirtschaft|steil`); at equal means fewer parts.
  bool better_than(const std::optional<Reading>& other) const {
    if (!other) return true;
    if (mean() != other->mean()) return mean() < other->mean();
    return rows.size() < other->rows.size();
  }
};

// The search of closed_compound_rows: every head of at least kMinCompoundPart characters that the vectors know,
// after every reading of the modifier; the most frequent reading wins (Reading::better_than). Only a word without
// such a reading is searched again with parts of kMinShortPart characters. A word reads at most kMaxLookups words
// of the vectors per search (a German compound some tens; a word of which every substring is a word would read
// thousands), keeping the best reading found within them.
class CompoundSplitter {
 public:
  static constexpr std::size_t kMaxLookups = 512;

  CompoundSplitter(const Embeddings& vectors, bool any_case) : vectors_(vectors), any_case_(any_case) {}

  // The best reading of `word` (split at depth 1), within the lookup bound.
  std::optional<Reading> read(std::string_view word) const {
    for (const std::size_t min_part : {kMinCompoundPart, kMinShortPart}) {
      lookups_ = 0;
      min_part_ = min_part;
      if (auto reading = split(word, 1)) return reading;
    }
    return std::nullopt;
  }

  // `word` as modifier then head, the modifier read up to `depth` more levels of compounds.
  std::optional<Reading> split(std::string_view word, int depth) const {
    const std::size_t total = characters(word);
    if (total < 2 * min_part_ || total > kMaxCompoundLength) return std::nullopt;
    std::optional<Reading> best;
    std::size_t before = 0;  // characters before byte i
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (utf8_continuation(word[i])) continue;
      if (before >= min_part_ && total - before >= min_part_) {
        if (const auto head = part(word.substr(i))) {
          for_each_modifier(word.substr(0, i), depth, [&](const Reading& modifier) {
            Reading reading = modifier;
            reading.add(*head);
            if (reading.better_than(best)) best = std::move(reading);
          });
        }
      }
      ++before;
    }
    return best;
  }

  std::optional<std::size_t> lookup(std::string_view word) const {
    if (++lookups_ > kMaxLookups) return std::nullopt;
    return known_row(vectors_, std::string(word), any_case_);
  }

  // A known word that may be a part: a short one (under kMinCompoundPart characters) not among the most frequent.
  std::optional<std::size_t> part(std::string_view word) const {
    const auto row = lookup(word);
    if (row && *row < kFrequentRows && characters(word) < kMinCompoundPart) return std::nullopt;
    return row;
  }

 private:
  // Calls `use` with each reading of `word` as a modifier: the known word itself; else each known word before a
  // linking element, and (depth > 0) the best reading as a compound of its own, with or without one. A modifier
  // known as written is not read otherwise (`autres`, not `autre` + s).
  template <typename Use>
  void for_each_modifier(std::string_view word, int depth, Use&& use) const {
    if (const auto row = part(word)) {
      use(Reading::of(*row));
      return;
    }
    if (depth > 0) {
      if (const auto compound = split(word, depth - 1)) use(*compound);
    }
    for (const std::string_view link : kLinkingElements) {
      if (word.size() <= link.size() || word.substr(word.size() - link.size()) != link) continue;
      const std::string_view stem = word.substr(0, word.size() - link.size());
      if (characters(stem) < min_part_) continue;
      if (const auto row = part(stem)) {
        use(Reading::of(*row));
      } else if (depth > 0) {
        if (const auto compound = split(stem, depth - 1)) use(*compound);
      }
    }
  }

  const Embeddings& vectors_;
  bool any_case_;
  mutable std::size_t lookups_ = 0;                  // by the current search
  mutable std::size_t min_part_ = kMinCompoundPart;  // characters of a part in the current search
};

}  // namespace

bool closed_compound_rows(const Embeddings& vectors, const std::string& word, bool any_case,
                          std::vector<std::size_t>& rows) {
  rows.clear();
  auto reading = CompoundSplitter(vectors, any_case).read(word);
  if (reading) rows = std::move(reading->rows);
  return reading.has_value();
}

double closed_compound_share(const std::vector<std::string>& terms, const Embeddings& vectors, bool any_case) {
  const CompoundSplitter splitter(vectors, any_case);
  std::size_t words = 0, compounds = 0;
  // At most kShareSample terms: a share to compare with a threshold of a few percent, in milliseconds for lists of
  // hundreds of thousands of terms, spread so that no period of the list lines up with the sample.
  constexpr std::size_t kShareSample = 10000;
  const std::size_t n = terms.size(), count = std::min(n, kShareSample);
  const std::size_t stride = detail::spread_stride(n, count);
  for (std::size_t i = 0; i < count; ++i) {
    for (const auto& word : split_words(terms[(i * stride) % n])) {
      ++words;
      if (known_row(vectors, word, any_case)) continue;
      compounds += splitter.read(word).has_value();
    }
  }
  return words ? static_cast<double>(compounds) / static_cast<double>(words) : 0.0;
}

double known_term_share(const TermList& terms, const Embeddings& vectors, std::size_t sample,
                        bool closed_compounds) {
  if (terms.size() == 0) return 1.0;
  const std::size_t count = std::min(sample, terms.size());
  std::size_t known = 0;
  std::vector<std::size_t> rows;
  // A closed compound of known words counts as known where it is composed from them.
  const auto known_or_compound = [&](const std::string& word) {
    return known_row(vectors, word, /*any_case=*/true).has_value() ||
           (closed_compounds && closed_compound_rows(vectors, word, /*any_case=*/true, rows));
  };
  const std::size_t stride = detail::spread_stride(terms.size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<std::string> words = split_words(terms.terms[(i * stride) % terms.size()]);
    known += std::all_of(words.begin(), words.end(), known_or_compound);
  }
  return static_cast<double>(known) / static_cast<double>(count);
}

bool splits_closed_compounds(double share, const CompositionOptions& options) {
  return options.split_closed_compounds && share > 0 && share >= options.closed_compound_share;
}

CompositionOptions closed_compounds_for(const std::string& name, const std::vector<std::string>& terms,
                                        const Embeddings& vectors, CompositionOptions options) {
  if (!options.split_closed_compounds) return options;
  const double share = closed_compound_share(terms, vectors, options.lowercase_fallback);
  if (splits_closed_compounds(share, options)) {
    logger().info("{}: {:.1f} % of the words are closed compounds of words of {}: composed from their parts", name,
                  100 * share, vectors.path);
  } else {
    if (share > 0) {
      logger().debug(
          "{}: {:.2f} % of the words are closed compounds of known words, under the {:.1f} % that "
          "splits them (closed_compound_share)",
          name, 100 * share, 100 * options.closed_compound_share);
    }
    options.split_closed_compounds = false;
  }
  return options;
}

std::vector<std::string> split_words(const std::string& term) {
  std::vector<std::string> words;
  for (std::size_t start = 0; start < term.size();) {
    if (is_ascii_space(term[start])) {
      ++start;
      continue;
    }
    std::size_t end = start + 1;
    while (end < term.size() && !is_ascii_space(term[end])) ++end;
    words.push_back(term.substr(start, end - start));
    start = end;
  }
  return words;
}

TermComposer::TermComposer(const Embeddings& embeddings, const Normalizer& normalizer,
                           const CompositionOptions& options)
    : embeddings_(embeddings), normalizer_(normalizer), options_(options) {}

bool TermComposer::add_known(const std::string& word, RowVector& sum, int& count) const {
  const auto row = known_row(embeddings_, word, options_.lowercase_fallback);
  if (!row) return false;
  sum += embeddings_.vectors.row(static_cast<Eigen::Index>(*row));
  ++count;
  return true;
}

bool TermComposer::add_token(const std::string& token, RowVector& sum, int& count) const {
  if (add_known(token, sum, count)) return true;
  if (options_.split_compounds) {
    const auto pieces = split_compound(token);
    if (pieces.size() > 1) {
      bool any = false;
      for (const auto& piece : pieces) any |= add_token(piece, sum, count);
      if (any) return true;
    }
  }
  if (options_.split_closed_compounds) {
    std::vector<std::size_t> rows;
    if (closed_compound_rows(embeddings_, token, options_.lowercase_fallback, rows)) {
      for (const std::size_t row : rows) sum += embeddings_.vectors.row(static_cast<Eigen::Index>(row));
      count += static_cast<int>(rows.size());
      return true;
    }
  }
  if (options_.subword_oov && embeddings_.has_subwords()) {
    RowVector vector;
    if (embeddings_.subword_vector(options_.lowercase_fallback ? to_lower(token) : token, vector)) {
      normalizer_.apply(vector);
      sum += vector;
      ++count;
      return true;
    }
  }
  return false;
}

bool TermComposer::compose(const std::string& term, RowVector& out) const {
  RowVector sum = RowVector::Zero(embeddings_.dim());
  int count = 0;
  const auto words = split_words(term);
  // Vectors trained with the term joined into one token know the term itself: its own vector comes first.
  if (!(options_.joined_terms && words.size() > 1 && add_known(joined_term_token(term), sum, count))) {
    for (const auto& word : words) add_token(word, sum, count);
  }
  const float norm = sum.norm();
  if (count == 0 || !(norm > 0)) return false;
  out = sum / norm;  // the mean's direction: renormalised, the 1/count factor cancels
  return true;
}

Matrix TermComposer::token_vectors(const std::string& term) const {
  const auto words = split_words(term);
  Matrix tokens(static_cast<Eigen::Index>(words.size()), embeddings_.dim());
  Eigen::Index usable = 0;
  for (const auto& word : words) {
    RowVector sum = RowVector::Zero(embeddings_.dim());
    int count = 0;
    add_token(word, sum, count);
    const float norm = sum.norm();
    if (count > 0 && norm > 0) tokens.row(usable++) = sum / norm;
  }
  tokens.conservativeResize(usable, Eigen::NoChange);
  return tokens;
}

ComposedTerms compose_terms(const std::vector<std::string>& terms, const TermComposer& composer, int threads) {
  return std::move(compose_lists({{terms, composer}}, threads).front());
}

std::vector<ComposedTerms> compose_lists(const std::vector<TermsToCompose>& lists, int threads) {
  return detail::compose_lists_alongside(lists, threads, {});
}

std::vector<ComposedTerms> detail::compose_lists_alongside(const std::vector<TermsToCompose>& lists, int threads,
                                                           const std::function<void()>& alongside) {
  // Composed straight into the results' rows (no per-term allocation), then compacted when some are unusable.
  std::vector<ComposedTerms> composed(lists.size());
  std::vector<std::vector<char>> usable(lists.size());
  std::vector<std::size_t> first(lists.size() + 1, 0);  // list l holds the items [first[l], first[l + 1])
  for (std::size_t l = 0; l < lists.size(); ++l) {
    detail::resize_in_huge_pages(composed[l].vectors, static_cast<Eigen::Index>(lists[l].terms.size()),
                                 lists[l].composer.dim());
    usable[l].assign(lists[l].terms.size(), 0);
    first[l + 1] = first[l] + lists[l].terms.size();
  }
  std::vector<RowVector> scratch(static_cast<std::size_t>(resolve_threads(threads)));
  const auto compose_item = [&](std::size_t item) {
    const std::size_t l =
        static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), item) - first.begin()) - 1;
    const std::size_t i = item - first[l];
    RowVector& vector = scratch[static_cast<std::size_t>(current_thread()) % scratch.size()];
    usable[l][i] = lists[l].composer.compose(lists[l].terms[i], vector);
    if (usable[l][i]) composed[l].vectors.row(static_cast<Eigen::Index>(i)) = vector;
  };
  if (alongside) {
    parallel_for_alongside(first.back(), threads, compose_item, alongside);
  } else {
    parallel_for(first.back(), threads, compose_item);
  }
  for (std::size_t l = 0; l < lists.size(); ++l) {
    ComposedTerms& result = composed[l];
    Eigen::Index rows = 0;
    for (std::size_t i = 0; i < usable[l].size(); ++i) {
      if (usable[l][i]) {
        if (rows != static_cast<Eigen::Index>(i))
          result.vectors.row(rows) = result.vectors.row(static_cast<Eigen::Index>(i));
        ++rows;
        result.term_ids.push_back(static_cast<std::uint32_t>(i));
      } else {
        result.unusable.push_back(static_cast<std::uint32_t>(i));
      }
    }
    if (rows < result.vectors.rows()) result.vectors = Matrix(result.vectors.topRows(rows));
  }
  return composed;
}

namespace {

// Whether split_compound could split `word`: it holds a hyphen, an apostrophe or a multi-byte character.
bool may_be_compound(const std::string& word) {
  for (const char c : word) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '-' || c == '\'' || byte >= 0x80) return true;
  }
  return false;
}

// Calls add(word) for every form composing the lists' terms may look up: each word and its folded form (fold_case)
// (computed only when it can differ: lists are mostly lower case), its compound pieces, and the joined token of a
// multi-word term. A word comes as often as it occurs.
template <typename Add>
void for_each_lookup(std::initializer_list<const std::vector<std::string>*> lists, Add&& add) {
  const auto add_both_cases = [&](const std::string& word) {
    add(std::string(word));
    if (may_change_when_lowered(word)) add(fold_case(word));
  };
  for (const auto* list : lists) {
    for (const auto& term : *list) {
      const auto term_words = split_words(term);
      if (term_words.size() > 1) add_both_cases(joined_term_token(term));  // the token of vectors trained joined
      for (const auto& word : term_words) {
        add_both_cases(word);
        if (!may_be_compound(word)) continue;
        for (const auto& piece : split_compound(word)) add_both_cases(piece);
      }
    }
  }
}

std::size_t total_terms(std::initializer_list<const std::vector<std::string>*> lists) {
  std::size_t terms = 0;
  for (const auto* list : lists) terms += list->size();
  return terms;
}

}  // namespace

void collect_words(const std::vector<std::string>& terms, std::vector<std::string>& words) {
  collect_words({&terms}, words);
}

void collect_words(std::initializer_list<const std::vector<std::string>*> lists, std::vector<std::string>& words) {
  std::unordered_set<std::string> seen(words.begin(), words.end());
  seen.reserve(seen.size() + 2 * total_terms(lists));
  for_each_lookup(lists, [&](std::string word) {
    if (seen.insert(word).second) words.push_back(std::move(word));
  });
}

std::unordered_set<std::string> collect_word_set(std::initializer_list<const std::vector<std::string>*> lists) {
  std::unordered_set<std::string> words;
  words.reserve(2 * total_terms(lists));
  for_each_lookup(lists, [&](std::string word) { words.insert(std::move(word)); });
  return words;
}

}  // namespace termalign
