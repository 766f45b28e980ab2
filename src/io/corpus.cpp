#include "io/corpus.h"

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

#include "io/io.h"
#include "io/train_vectors.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/count_map.h"
#include "util/parallel.h"

namespace termalign {

namespace {

// The words of a term occurrence (the data's README, "Term occurrence"): tokenize's words, split further at
// apostrophes (' and U+2019), so that `abandon` occurs in `l'abandon` and `utilisateur` in `l’utilisateur`.
std::vector<std::string> occurrence_tokens(std::string_view text) {
  std::vector<std::string> words;
  for (std::string& token : tokenize(text)) {
    if (token.find('\'') == std::string::npos && token.find("\xE2\x80\x99") == std::string::npos) {
      words.push_back(std::move(token));
      continue;
    }
    std::size_t start = 0;
    while (start <= token.size()) {
      const std::size_t plain = token.find('\'', start), curly = token.find("\xE2\x80\x99", start);
      const std::size_t end = std::min(plain, curly);
      if (end > start)
        words.push_back(token.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + (end == plain ? 1 : 3);
    }
  }
  return words;
}

// The terms as token sequences in a trie: each position of a sentence costs one lookup per token of the longest
// term starting there, however many terms share their first words.
class TermMatcher {
 public:
  explicit TermMatcher(const std::vector<std::string>& terms) : nodes_(1) {
    for (std::size_t t = 0; t < terms.size(); ++t) {
      // In NFC and folded, as the corpus lines are (count_piece): a term written with capitals, ё for е, or
      // decomposed accents is found too.
      const std::vector<std::string> tokens = occurrence_tokens(fold_case(to_nfc(terms[t])));
      if (tokens.empty()) continue;
      std::uint32_t node = 0;
      for (const std::string& token : tokens) {
        const auto [child, added] =
            nodes_[node].children.try_emplace(token, static_cast<std::uint32_t>(nodes_.size()));
        if (added) nodes_.emplace_back();
        node = child->second;
      }
      nodes_[node].terms.push_back(static_cast<std::uint32_t>(t));
    }
  }
  // Calls found(term, length) for every term whose tokens start at `begin`.
  template <class Found>
  void match(const std::vector<std::string>& tokens, std::size_t begin, Found&& found) const {
    std::uint32_t node = 0;
    for (std::size_t i = begin; i < tokens.size(); ++i) {
      const auto child = nodes_[node].children.find(tokens[i]);
      if (child == nodes_[node].children.end()) return;
      node = child->second;
      for (const std::uint32_t term : nodes_[node].terms) found(term, i + 1 - begin);
    }
  }

 private:
  struct Node {
    std::unordered_map<std::string, std::uint32_t> children;
    std::vector<std::uint32_t> terms;  // the terms ending here
  };
  std::vector<Node> nodes_;
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

// Folded (fold_case: lower case, ё as е); ASCII lines (most of them) without ICU.
std::string lower_line(const std::string& line) {
  if (std::all_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string lowered = line;
    for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lowered;
  }
  return fold_case(line);
}

// What one thread has counted; its words by ids of its own.
struct Counts {
  std::size_t sentences = 0, tokens = 0, non_nfc_lines = 0;
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<std::string> words;
  std::vector<std::uint64_t> word_count;
  std::vector<std::uint64_t> term_count, term_sentences;
  detail::CountMap context;  // (term << 32 | word id) -> co-occurrences
  explicit Counts(std::size_t terms) : term_count(terms), term_sentences(terms) {}
  std::uint32_t intern(const std::string& word) {
    const auto [found, added] = ids.try_emplace(word, static_cast<std::uint32_t>(words.size()));
    if (added) {
      words.push_back(word);
      word_count.push_back(0);
    }
    return found->second;
  }
};

constexpr std::uint32_t kNotWord = 0xFFFFFFFFu;

// A piece of the corpus: whole lines, and the number of its first line.
struct Piece {
  std::string text;
  std::size_t first_line = 1;
};

void count_piece(const Piece& piece, const std::string& path, const TermMatcher& matcher, int window,
                 Counts& counts) {
  std::vector<std::uint32_t> seen;  // terms found in the sentence
  std::vector<std::uint32_t> word;  // each token's word id, or kNotWord
  std::size_t line_number = piece.first_line, start = 0;
  while (start < piece.text.size()) {
    std::size_t end = piece.text.find('\n', start);
    if (end == std::string::npos) end = piece.text.size();
    std::string line = piece.text.substr(start, end - start);
    start = end + 1;
    if (line_number == 1 && line.rfind(kUtf8Bom, 0) == 0) line.erase(0, kUtf8Bom.size());
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!is_valid_utf8(line)) throw_input_error(path, line_number, "line is not valid UTF-8.");
    ++line_number;
    // Decomposed accents (NFD, as some tools write) would keep the terms, the seed and the vectors' words from
    // matching: such lines are read in NFC.
    if (!is_nfc(line)) {
      line = to_nfc(line);
      ++counts.non_nfc_lines;
    }
    const std::vector<std::string> tokens = occurrence_tokens(lower_line(line));
    if (tokens.empty()) continue;
    ++counts.sentences;
    counts.tokens += tokens.size();
    word.resize(tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      word[i] = is_word_token(tokens[i]) ? counts.intern(tokens[i]) : kNotWord;
      if (word[i] != kNotWord) ++counts.word_count[word[i]];
    }
    seen.clear();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      matcher.match(tokens, i, [&](std::uint32_t term, std::size_t length) {
        ++counts.term_count[term];
        seen.push_back(term);
        const std::uint64_t key = static_cast<std::uint64_t>(term) << 32;
        const std::size_t from = i >= static_cast<std::size_t>(window) ? i - window : 0;
        const std::size_t to = std::min(tokens.size(), i + length + window);
        for (std::size_t j = from; j < to; ++j) {
          if ((j < i || j >= i + length) && word[j] != kNotWord) counts.context.increment(key | word[j]);
        }
      });
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (const std::uint32_t term : seen) ++counts.term_sentences[term];
  }
}

}  // namespace

void warn_read_in_nfc(const std::string& path, std::size_t lines) {
  logger().warn(
      "{}: {} lines are not in Unicode NFC (decomposed accents); read in NFC, the form of BUCC data and fastText "
      "vectors",
      path, lines);
}

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

  // The threads' counts merged by word: global ids in the order of the words' strings, so that the result does not
  // depend on how the corpus was shared out.
  CorpusStatistics statistics;
  statistics.path = path;
  std::vector<std::string> all_words;
  std::size_t non_nfc_lines = 0;
  for (Counts& part : counts) {
    statistics.sentences += part.sentences;
    statistics.tokens += part.tokens;
    non_nfc_lines += part.non_nfc_lines;
    all_words.insert(all_words.end(), part.words.begin(), part.words.end());
  }
  if (statistics.sentences == 0) throw_input_error(path, 0, "the corpus has no text.");
  if (non_nfc_lines > 0) warn_read_in_nfc(path, non_nfc_lines);
  std::sort(all_words.begin(), all_words.end());
  all_words.erase(std::unique(all_words.begin(), all_words.end()), all_words.end());
  std::unordered_map<std::string, std::uint32_t> global_ids;
  global_ids.reserve(all_words.size());
  for (std::size_t w = 0; w < all_words.size(); ++w)
    global_ids.emplace(all_words[w], static_cast<std::uint32_t>(w));
  std::vector<std::uint64_t> word_count(all_words.size());
  statistics.term_count.assign(terms.size(), 0);
  statistics.term_sentences.assign(terms.size(), 0);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> context;  // (term << 32 | global word id), count
  std::size_t context_entries = 0;
  for (const Counts& part : counts) context_entries += part.context.size();
  context.reserve(context_entries);
  for (Counts& part : counts) {
    std::vector<std::uint32_t> to_global(part.words.size());
    for (std::size_t w = 0; w < part.words.size(); ++w) {
      to_global[w] = global_ids.at(part.words[w]);
      word_count[to_global[w]] += part.word_count[w];
    }
    for (std::size_t t = 0; t < terms.size(); ++t) {
      statistics.term_count[t] += part.term_count[t];
      statistics.term_sentences[t] += part.term_sentences[t];
    }
    part.context.for_each([&](std::uint64_t key, std::uint32_t count) {
      context.emplace_back((key & ~std::uint64_t(0xFFFFFFFFu)) | to_global[key & 0xFFFFFFFFu], count);
    });
    part = Counts(0);
  }
  std::sort(context.begin(), context.end());
  // Context distribution smoothed to the power 0.75, so that rare context words do not get huge PMI values.
  double smoothed_total = 0;
  std::vector<double> smoothed(word_count.size());
  for (std::size_t w = 0; w < word_count.size(); ++w)
    smoothed_total += smoothed[w] = std::pow(double(word_count[w]), 0.75);
  statistics.context.resize(terms.size());
  std::vector<std::uint32_t> final_id(all_words.size(), kNotWord);
  for (std::size_t begin = 0; begin < context.size();) {
    const std::uint64_t term = context[begin].first >> 32;
    std::size_t end = begin;
    double term_total = 0;
    while (end < context.size() && (context[end].first >> 32) == term) term_total += context[end++].second;
    for (std::size_t i = begin; i < end; ++i) {
      // Summed (counts of equal keys from several threads are adjacent after the sort).
      std::uint64_t count = context[i].second;
      while (i + 1 < end && context[i + 1].first == context[i].first) count += context[++i].second;
      const std::uint32_t word = static_cast<std::uint32_t>(context[i].first & 0xFFFFFFFFu);
      const double pmi = std::log(double(count) / term_total) - std::log(smoothed[word] / smoothed_total);
      if (pmi <= 0) continue;
      final_id[word] = 0;  // used
      statistics.context[term].emplace_back(word, static_cast<float>(pmi));
    }
    begin = end;
  }
  // The context words (positive PPMI somewhere) renumbered in string order.
  for (std::size_t w = 0; w < all_words.size(); ++w) {
    if (final_id[w] == kNotWord) continue;
    final_id[w] = static_cast<std::uint32_t>(statistics.words.size());
    statistics.word_ids.emplace(all_words[w], final_id[w]);
    statistics.words.push_back(all_words[w]);
    statistics.word_count.push_back(word_count[w]);
  }
  for (SparseVector& vector : statistics.context)
    for (auto& entry : vector) entry.first = final_id[entry.first];
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
