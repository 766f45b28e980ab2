#include "termalign/corpus.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "termalign/error.h"
#include "termalign/io.h"
#include "termalign/logging.h"
#include "termalign/parallel.h"
#include "termalign/train_vectors.h"

namespace termalign {

namespace {

// The terms as token sequences, found by their first token.
class TermMatcher {
 public:
  explicit TermMatcher(const std::vector<std::string>& terms) {
    sequences_.reserve(terms.size());
    for (std::size_t t = 0; t < terms.size(); ++t) {
      sequences_.push_back(tokenize(terms[t]));
      if (!sequences_.back().empty())
        by_first_[sequences_.back().front()].push_back(static_cast<std::uint32_t>(t));
    }
  }
  // Calls found(term, length) for every term whose tokens start at `begin`.
  template <class Found>
  void match(const std::vector<std::string>& tokens, std::size_t begin, Found&& found) const {
    const auto entry = by_first_.find(tokens[begin]);
    if (entry == by_first_.end()) return;
    for (const std::uint32_t term : entry->second) {
      const std::vector<std::string>& sequence = sequences_[term];
      if (begin + sequence.size() > tokens.size()) continue;
      if (std::equal(sequence.begin() + 1, sequence.end(),
                     tokens.begin() + static_cast<std::ptrdiff_t>(begin) + 1))
        found(term, sequence.size());
    }
  }

 private:
  std::vector<std::vector<std::string>> sequences_;
  std::unordered_map<std::string, std::vector<std::uint32_t>> by_first_;
};

// A token that is a word (starts with a letter, a number or '_'), not punctuation.
bool is_word_token(const std::string& token) {
  const auto first = static_cast<unsigned char>(token[0]);
  if (first < 0x80) return std::isalnum(first) || first == '_';
  std::int32_t offset = 0;
  UChar32 c = 0;
  U8_NEXT(token.data(), offset, static_cast<std::int32_t>(token.size()), c);
  return c >= 0 && (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_N_MASK)) != 0;
}

// Lower case; ASCII lines (most of them) without ICU.
std::string lower_line(const std::string& line) {
  if (std::all_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string lowered = line;
    for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lowered;
  }
  return to_lower(line);
}

// What one thread has counted.
struct Counts {
  std::size_t sentences = 0, tokens = 0;
  std::unordered_map<std::string, std::uint64_t> words;
  std::vector<std::uint64_t> term_count, term_sentences;
  std::vector<std::unordered_map<std::string, float>> context;
  explicit Counts(std::size_t terms) : term_count(terms), term_sentences(terms), context(terms) {}
};

// A piece of the corpus: whole lines, and the number of its first line.
struct Piece {
  std::string text;
  std::size_t first_line = 1;
};

void count_piece(const Piece& piece, const std::string& path, const TermMatcher& matcher, int window,
                 Counts& counts) {
  std::vector<std::uint32_t> seen;  // terms found in the sentence
  std::size_t line_number = piece.first_line, start = 0;
  while (start < piece.text.size()) {
    std::size_t end = piece.text.find('\n', start);
    if (end == std::string::npos) end = piece.text.size();
    std::string line = piece.text.substr(start, end - start);
    start = end + 1;
    if (line_number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!is_valid_utf8(line)) throw_input_error(path, line_number, "line is not valid UTF-8.");
    ++line_number;
    const std::vector<std::string> tokens = tokenize(lower_line(line));
    if (tokens.empty()) continue;
    ++counts.sentences;
    counts.tokens += tokens.size();
    std::vector<std::uint8_t> word(tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      word[i] = is_word_token(tokens[i]);
      if (word[i]) ++counts.words[tokens[i]];
    }
    seen.clear();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      matcher.match(tokens, i, [&](std::uint32_t term, std::size_t length) {
        ++counts.term_count[term];
        seen.push_back(term);
        auto& context = counts.context[term];
        const std::size_t from = i >= static_cast<std::size_t>(window) ? i - window : 0;
        const std::size_t to = std::min(tokens.size(), i + length + window);
        for (std::size_t j = from; j < to; ++j) {
          if ((j < i || j >= i + length) && word[j]) context[tokens[j]] += 1.0f;
        }
      });
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (const std::uint32_t term : seen) ++counts.term_sentences[term];
  }
}

}  // namespace

CorpusStatistics gather_corpus_statistics(const std::string& path, const std::vector<std::string>& terms,
                                          const CorpusOptions& options) {
  if (options.window < 1) throw_usage_error("The corpus context window must be at least 1 token.");
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw_input_error(path, 0, "the corpus is a directory.");
  std::ifstream input(path, std::ios::binary);
  if (!input) throw_input_error(path, 0, std::string("cannot open the corpus: ") + std::strerror(errno));
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  const auto started = std::chrono::steady_clock::now();

  const TermMatcher matcher(terms);
  const int threads = resolve_threads(options.threads);
  std::vector<Counts> counts(static_cast<std::size_t>(threads), Counts(terms.size()));
  const std::size_t piece_bytes = options.chunk_bytes ? options.chunk_bytes : std::size_t(4) << 20;
  Progress progress("corpus " + path + ", bytes", error ? 0 : static_cast<std::size_t>(size));
  // Pieces are read on the calling thread, a batch of two per thread at a time (bounded memory), and counted on
  // the threads; each thread's counts are merged at the end, so the result does not depend on the thread count.
  std::string carry;
  std::size_t next_line = 1;
  bool done = false;
  while (!done) {
    std::vector<Piece> pieces;
    while (pieces.size() < 2 * static_cast<std::size_t>(threads) && !done) {
      std::string text = std::move(carry);
      carry.clear();
      const std::size_t kept = text.size();
      text.resize(kept + piece_bytes);
      input.read(&text[kept], static_cast<std::streamsize>(piece_bytes));
      text.resize(kept + static_cast<std::size_t>(input.gcount()));
      if (input.bad()) throw_input_error(path, next_line, "cannot read the corpus.");
      if (!input) {
        done = true;
      } else {
        const std::size_t last = text.rfind('\n');
        if (last == std::string::npos) {  // a line longer than a piece: read on
          carry = std::move(text);
          continue;
        }
        carry = text.substr(last + 1);
        text.resize(last + 1);
      }
      if (text.empty()) continue;
      Piece piece{std::move(text), next_line};
      next_line += static_cast<std::size_t>(std::count(piece.text.begin(), piece.text.end(), '\n'));
      pieces.push_back(std::move(piece));
    }
    parallel_for(pieces.size(), threads, [&](std::size_t p) {
      count_piece(pieces[p], path, matcher, options.window, counts[static_cast<std::size_t>(current_thread())]);
      progress.advance(pieces[p].text.size());
    });
  }
  progress.finish();

  // Merged into the first thread's counts.
  Counts& total = counts[0];
  for (std::size_t thread = 1; thread < counts.size(); ++thread) {
    Counts& other = counts[thread];
    total.sentences += other.sentences;
    total.tokens += other.tokens;
    for (const auto& [word, count] : other.words) total.words[word] += count;
    for (std::size_t t = 0; t < terms.size(); ++t) {
      total.term_count[t] += other.term_count[t];
      total.term_sentences[t] += other.term_sentences[t];
      for (const auto& [word, count] : other.context[t]) total.context[t][word] += count;
    }
    other = Counts(0);
  }
  if (total.sentences == 0) throw_input_error(path, 0, "the corpus has no text.");

  CorpusStatistics statistics;
  statistics.path = path;
  statistics.sentences = total.sentences;
  statistics.tokens = total.tokens;
  statistics.term_count = std::move(total.term_count);
  statistics.term_sentences = std::move(total.term_sentences);
  // Context distribution smoothed to the power 0.75, so that rare context words do not get huge PMI values.
  double smoothed_total = 0;
  for (const auto& [word, count] : total.words) smoothed_total += std::pow(static_cast<double>(count), 0.75);
  statistics.context.resize(terms.size());
  for (std::size_t t = 0; t < terms.size(); ++t) {
    double term_total = 0;
    for (const auto& entry : total.context[t]) term_total += entry.second;
    // Words in a fixed order (by string), so that the ids and the result do not depend on the hash order.
    std::vector<std::pair<std::string, float>> entries(total.context[t].begin(), total.context[t].end());
    std::sort(entries.begin(), entries.end());
    SparseVector& vector = statistics.context[t];
    for (const auto& [word, count] : entries) {
      const double word_count = static_cast<double>(total.words.at(word));
      const double pmi = std::log(count / term_total) - std::log(std::pow(word_count, 0.75) / smoothed_total);
      if (pmi <= 0) continue;
      auto [found, inserted] =
          statistics.word_ids.try_emplace(word, static_cast<std::uint32_t>(statistics.words.size()));
      if (inserted) {
        statistics.words.push_back(word);
        statistics.word_count.push_back(static_cast<std::uint64_t>(word_count));
      }
      vector.emplace_back(found->second, static_cast<float>(pmi));
    }
    std::sort(vector.begin(), vector.end());
  }
  std::size_t found_terms = 0;
  for (const std::uint64_t count : statistics.term_count) found_terms += count > 0;
  logger().info("corpus {}: {} sentences, {} tokens; {} of {} terms found, {} context words, in {:.2f} s", path,
                statistics.sentences, statistics.tokens, found_terms, terms.size(), statistics.words.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return statistics;
}

double sparse_cosine(const SparseVector& a, const SparseVector& b) {
  double dot = 0, norm_a = 0, norm_b = 0;
  for (const auto& entry : a) norm_a += double(entry.second) * entry.second;
  for (const auto& entry : b) norm_b += double(entry.second) * entry.second;
  if (norm_a == 0 || norm_b == 0) return 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i].first < b[j].first) {
      ++i;
    } else if (b[j].first < a[i].first) {
      ++j;
    } else {
      dot += double(a[i++].second) * b[j++].second;
    }
  }
  return dot / std::sqrt(norm_a * norm_b);
}

}  // namespace termalign
