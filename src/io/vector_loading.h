// What the vector loaders share: embeddings.cpp (the lookups, the reader chosen by content), vec_text.cpp (a .vec
// parsed in chunks on the threads), vec_gz.cpp (a .vec.gz inflated and parsed a block at a time with the same
// chunks) and bin_vectors.cpp (a fastText .bin or .bin.gz).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "io/fasttext_model_file.h"
#include "termalign/embeddings.h"

namespace termalign {

class SubwordModel : public detail::FastTextModelFile {
 public:
  using detail::FastTextModelFile::FastTextModelFile;
};

namespace detail {

using Clock = std::chrono::steady_clock;

// Whether `word`'s row is kept: every row without restrict_words, else the wanted words, and with fold_case the
// words whose folded form (fold_case: lower case, ё as е) is wanted.
bool wanted_word(const LoadOptions& options, std::string_view word);
// Logs what a load kept of its `total` words, and its time since `start`.
void log_loaded(const Embeddings& embeddings, std::size_t total, Clock::time_point start);

// A .vec file, mapped (vec_text.cpp), and a .vec.gz (vec_gz.cpp): the same vectors and errors.
Embeddings load_vec_text(const std::string& path, const LoadOptions& options, Clock::time_point start);
Embeddings load_vec_gz(const std::string& path, const LoadOptions& options, Clock::time_point start);

// The parts of a .vec's parsing (vec_text.cpp) that the .vec.gz reader applies to each block.

// The longest .vec line read: a header (`dim` 0) of longest_word_bytes, or a word of up to that and `dim` values
// of up to 64 characters each. Past it the file is corrupt or no .vec, and a gzip stream without line ends is not
// held whole. long_vec_line: what an input error at such a line says.
std::size_t longest_vec_line(int dim);
std::string long_vec_line(int dim);

// The first error of a piece of the file; line 0 = none.
struct LineError {
  std::size_t line = 0;
  std::string message;
};

// Keeps the error of the earlier line.
void keep_first(LineError& first, std::size_t line, std::string message);

// A .vec line without its '\n', its '\r' and the trailing space fastText writes.
std::string_view strip_line_end(std::string_view line);

struct VecHeader {
  std::size_t words = 0;
  int dim = 0;
};

// '<number of words> <dimension>', both positive; otherwise an input error naming line 1 of `path`.
VecHeader parse_vec_header(const std::string& path, std::string_view line);
// The header at the start of `text` (a file's, after a UTF-8 byte order mark, which is ignored with a warning),
// parsed and removed from it. An empty text or a bad header is an input error naming `path`.
VecHeader take_vec_header(const std::string& path, std::string_view& text);

// A piece of the body of a .vec file, cut at line ends, parsed on its own.
struct Chunk {
  std::string_view text;
  std::size_t first_line = 0;           // file line (1-based) of its first line
  std::size_t first_kept_row = 0;       // matrix row of its first kept line
  std::vector<std::string_view> words;  // one per line, into word_bytes
  std::string word_bytes;               // the words, copied: the file's pages are released once read
  std::vector<char> kept;               // one per line
  LineError error;                      // its first error
};

// `body` cut after the first line end past each `target_bytes`.
std::vector<Chunk> split_into_chunks(std::string_view body, std::size_t target_bytes);

// First pass: the word of each line, whether its row is wanted, and the errors of the word itself (and of a line
// longer than longest_vec_line(dim)). Error lines are chunk-relative (1-based) until the chunk's first line is
// known.
void scan_words(Chunk& chunk, const LoadOptions& options, int dim);
// What the chunks' words take: their bytes, their views and flags.
std::size_t word_bytes_of(const std::vector<Chunk>& chunks);

// Second pass: the values of every line, into the matrix for kept lines (when there is a matrix); other lines are
// only checked.
void parse_rows(Chunk& chunk, int dim, Matrix* vectors);

// Chunks of 1 to 16 MiB: about 16 a thread.
std::size_t automatic_chunk_bytes(std::size_t body_bytes, int threads);

// Places the chunks after `total_rows` rows (`kept_rows` of them kept), both updated: their file lines, the most
// frequent rows kept, their first matrix rows.
void place_chunks(std::vector<Chunk>& chunks, const LoadOptions& options, std::size_t& total_rows,
                  std::size_t& kept_rows);

// Each word seen -> the line it is on: open addressing over the words' hashes, the words themselves views into
// text that outlives the table (a node-based map allocated a node a word: 11 % of a 2M-word .vec.gz load).
class FirstLines {
 public:
  explicit FirstLines(std::size_t expected = 0) { rehash(expected); }
  // Room for `words` words in all: no insert rehashes until they are in.
  void reserve(std::size_t words) { rehash(words); }
  // The table's bytes, now and once room was made for `words` words.
  std::size_t bytes() const { return slots_.size() * sizeof(Slot); }
  static std::size_t bytes_for(std::size_t words) { return slot_count(words) * sizeof(Slot); }
  // Records `word` on `line`; returns the line it was first seen on, or 0 when this is the first time.
  std::size_t insert(std::string_view word, std::size_t line) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * (size_ + 1));
    const std::size_t hash = std::hash<std::string_view>()(word);
    for (std::size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
      Slot& entry = slots_[slot];
      if (entry.line == 0) {
        entry = {word, hash, line};
        ++size_;
        return 0;
      }
      if (entry.hash == hash && entry.word == word) return entry.line;
    }
  }

 private:
  struct Slot {
    std::string_view word;
    std::size_t hash = 0, line = 0;  // line 0: empty (a word's line is at least 2)
  };
  static std::size_t slot_count(std::size_t wanted) {
    std::size_t count = 1024;
    while (count < 2 * wanted) count *= 2;
    return count;
  }
  void rehash(std::size_t wanted) {
    const std::size_t count = slot_count(wanted);
    if (count <= slots_.size()) return;
    std::vector<Slot> old(count);
    old.swap(slots_);
    mask_ = count - 1;
    for (const Slot& entry : old) {
      if (entry.line == 0) continue;
      std::size_t slot = entry.hash & mask_;
      while (slots_[slot].line != 0) slot = (slot + 1) & mask_;
      slots_[slot] = entry;
    }
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
};

// The first duplicate word of the chunks, in file order, into first_error (unless it holds an error);
// first_lines: each word seen (in these chunks or before) -> its line.
void find_duplicates(const std::vector<Chunk>& chunks, FirstLines& first_lines, LineError& first_error);

// The chunks' kept words appended to the embeddings' words and index.
void index_kept_words(const std::vector<Chunk>& chunks, Embeddings& embeddings);

}  // namespace detail
}  // namespace termalign
