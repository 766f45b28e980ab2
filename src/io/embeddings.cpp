#include "termalign/embeddings.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <string_view>
#include <unordered_set>

#include "io/fasttext_model_file.h"
#include "io/float_field.h"
#include "io/gzip_stream.h"
#include "io/io.h"
#include "io/mapped_file.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/logging.h"
#include "util/huge_pages.h"
#include "util/parallel.h"
#include "util/resources.h"

namespace termalign {

class SubwordModel : public detail::FastTextModelFile {
 public:
  using detail::FastTextModelFile::FastTextModelFile;
};

std::optional<std::size_t> Embeddings::row(const std::string& word) const {
  const auto found = rows.find(word);
  if (found == rows.end()) return std::nullopt;
  return found->second;
}

std::optional<std::size_t> Embeddings::row_any_case(const std::string& word) const {
  if (auto found = row(word)) return found;
  const std::string lowered = to_lower(word);
  if (lowered != word) {
    if (auto found = row(lowered)) return found;
  }
  const std::string key = fold_lowered(lowered);
  if (key != lowered) {
    if (auto found = row(key)) return found;
  }
  const auto found = folded.find(key);
  if (found == folded.end()) return std::nullopt;
  return found->second;
}

bool Embeddings::subword_vector(const std::string& word, RowVector& out) const {
  if (!subwords) return false;
  RowVector vector(subwords->dim());
  if (!subwords->word_vector(word, vector.data())) return false;
  if ((vector.array() == 0.0f).all()) return false;
  out = std::move(vector);
  return true;
}

namespace {

// Whether `word`'s row is kept: every row without restrict_words, else the wanted words, and with fold_case the
// words whose folded form (fold_case: lower case, ё as е) is wanted.
bool wanted_word(const LoadOptions& options, std::string_view word) {
  if (!options.restrict_words) return true;
  const std::string text(word);
  if (options.wanted.count(text) > 0) return true;
  return options.fold_case && may_change_when_lowered(word) && options.wanted.count(fold_case(word)) > 0;
}

using Clock = std::chrono::steady_clock;

// The first error of a piece of the file; line 0 = none.
struct LineError {
  std::size_t line = 0;
  std::string message;
};

void keep_first(LineError& first, std::size_t line, std::string message) {
  if (line > 0 && (first.line == 0 || line < first.line)) first = {line, std::move(message)};
}

// A .vec line without its '\n', its '\r' and the trailing space fastText writes.
std::string_view strip_line_end(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  return line;
}

// Calls visit(index, line) for each line of `text` (0-based index, line stripped by strip_line_end) while it
// returns true.
template <typename Visit>
void for_each_line(std::string_view text, Visit&& visit) {
  for (std::size_t index = 0; !text.empty(); ++index) {
    const void* newline = std::memchr(text.data(), '\n', text.size());
    const std::size_t length = newline ? static_cast<const char*>(newline) - text.data() : text.size();
    const std::string_view line = text.substr(0, length);
    text.remove_prefix(newline ? length + 1 : length);
    if (!visit(index, strip_line_end(line))) return;
  }
}

std::string quoted(std::string_view text) {
  constexpr std::size_t longest = 40;
  if (text.size() <= longest) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, longest)) + "...'";
}

struct VecHeader {
  std::size_t words = 0;
  int dim = 0;
};

VecHeader parse_vec_header(const std::string& path, std::string_view line) {
  VecHeader header;
  const auto space = line.find(' ');
  const char* end = line.data() + line.size();
  bool valid = space != std::string_view::npos;
  if (valid) {
    const auto words = std::from_chars(line.data(), line.data() + space, header.words);
    const auto dim = std::from_chars(line.data() + space + 1, end, header.dim);
    valid = words.ec == std::errc() && words.ptr == line.data() + space && dim.ec == std::errc() &&
            dim.ptr == end && header.words > 0 && header.dim > 0;
  }
  if (!valid) {
    throw_input_error(path, 1,
                      "bad header: expected '<number of words> <dimension>', both positive, got " + quoted(line));
  }
  return header;
}

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

std::vector<Chunk> split_into_chunks(std::string_view body, std::size_t target_bytes) {
  std::vector<Chunk> chunks;
  while (!body.empty()) {
    std::size_t length = std::min(std::max<std::size_t>(target_bytes, 1), body.size());
    const void* newline = std::memchr(body.data() + length - 1, '\n', body.size() - length + 1);
    length = newline ? static_cast<const char*>(newline) - body.data() + 1 : body.size();
    chunks.emplace_back().text = body.substr(0, length);
    body.remove_prefix(length);
  }
  return chunks;
}

// First pass: the word of each line, whether its row is wanted, and the errors of the word itself.
// Error lines are chunk-relative (1-based) until the chunk's first line is known.
void scan_words(Chunk& chunk, const LoadOptions& options) {
  std::vector<std::size_t> ends;
  for_each_line(chunk.text, [&](std::size_t index, std::string_view line) {
    const std::string_view word = line.substr(0, line.find(' '));
    chunk.word_bytes += word;
    ends.push_back(chunk.word_bytes.size());
    chunk.kept.push_back(wanted_word(options, word));
    if (word.empty()) {
      keep_first(chunk.error, index + 1,
                 line.empty() ? "empty line" : "the line starts with a space (empty word)");
    } else if (!is_valid_utf8(word)) {
      keep_first(chunk.error, index + 1, "the word is not valid UTF-8");
    }
    return true;
  });
  chunk.words.reserve(ends.size());
  for (std::size_t i = 0, begin = 0; i < ends.size(); begin = ends[i++]) {
    chunk.words.emplace_back(chunk.word_bytes.data() + begin, ends[i] - begin);
  }
}

// "v1 ... vdim" into row[0, dim), or checked and dropped when row is null; returns an empty string or what is
// wrong.
std::string parse_values(std::string_view values, int dim, float* row) {
  const char* position = values.data();
  const char* const end = position + values.size();
  int count = 0;
  float dropped = 0.0f;
  while (position != end && count < dim) {
    const auto field = detail::parse_float_field(position, end, row != nullptr ? row[count] : dropped);
    if (field.status != detail::FloatStatus::ok) {
      return "value " + std::to_string(count + 1) + " " + quoted({position, std::size_t(field.end - position)}) +
             (field.status == detail::FloatStatus::not_finite ? " is not a finite float" : " is not a number");
    }
    ++count;
    position = field.end == end ? end : field.end + 1;
  }
  if (count == dim && position == end) return {};
  const std::size_t found = values.empty() ? 0 : 1 + std::count(values.begin(), values.end(), ' ');
  return "expected " + std::to_string(dim) + " values after the word, found " + std::to_string(found);
}

// Second pass: the values of every line, into the matrix for kept lines (when there is a matrix); other lines are
// only checked.
void parse_rows(Chunk& chunk, int dim, Matrix* vectors) {
  std::size_t next_row = chunk.first_kept_row;
  for_each_line(chunk.text, [&](std::size_t index, std::string_view line) {
    const std::size_t word_length = chunk.words[index].size();
    const std::string_view values = line.size() > word_length ? line.substr(word_length + 1) : std::string_view();
    float* row = vectors != nullptr && chunk.kept[index]
                     ? vectors->row(static_cast<Eigen::Index>(next_row++)).data()
                     : nullptr;
    // A row not kept is only checked: when it is plainly valid, without converting its values.
    if (row == nullptr && detail::plain_float_fields(values, dim)) return true;
    std::string problem = parse_values(values, dim, row);
    if (problem.empty()) return true;
    keep_first(chunk.error, chunk.first_line + index, std::move(problem));
    return false;
  });
}

std::size_t automatic_chunk_bytes(std::size_t body_bytes, int threads) {
  constexpr std::size_t smallest = std::size_t{1} << 20, largest = std::size_t{16} << 20;
  return std::clamp(body_bytes / (static_cast<std::size_t>(threads) * 16), smallest, largest);
}

void log_loaded(const Embeddings& embeddings, std::size_t total, Clock::time_point start) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  logger().info("{}: {} of {} words kept, dim {}, {:.2f} s", embeddings.path, embeddings.size(), total,
                embeddings.dim(), seconds);
}

// Places the chunks after `total_rows` rows (`kept_rows` of them kept), both updated: their file lines, the most
// frequent rows kept, their first matrix rows.
void place_chunks(std::vector<Chunk>& chunks, const LoadOptions& options, std::size_t& total_rows,
                  std::size_t& kept_rows) {
  for (Chunk& chunk : chunks) {
    chunk.first_line = 2 + total_rows;
    if (chunk.error.line > 0) chunk.error.line += chunk.first_line - 1;
    if (options.restrict_words && total_rows < options.most_frequent) {
      const std::size_t frequent = std::min(options.most_frequent - total_rows, chunk.kept.size());
      std::fill_n(chunk.kept.begin(), frequent, 1);
    }
    chunk.first_kept_row = kept_rows;
    total_rows += chunk.words.size();
    kept_rows += static_cast<std::size_t>(std::count(chunk.kept.begin(), chunk.kept.end(), 1));
  }
}

// Each word seen -> the line it is on: open addressing over the words' hashes, the words themselves views into
// text that outlives the table (a node-based map allocated a node a word: 11 % of a 2M-word .vec.gz load).
class FirstLines {
 public:
  explicit FirstLines(std::size_t expected = 0) { rehash(expected); }
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
  void rehash(std::size_t wanted) {
    std::size_t count = 1024;
    while (count < 2 * wanted) count *= 2;
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
void find_duplicates(const std::vector<Chunk>& chunks, FirstLines& first_lines, LineError& first_error) {
  for (const Chunk& chunk : chunks) {
    for (std::size_t index = 0; index < chunk.words.size() && first_error.line == 0; ++index) {
      const std::size_t first = first_lines.insert(chunk.words[index], chunk.first_line + index);
      if (first != 0 && !chunk.words[index].empty()) {
        first_error = {chunk.first_line + index, "duplicate word " + quoted(chunk.words[index]) +
                                                     " (first at line " + std::to_string(first) + ")"};
      }
    }
  }
}

// The chunks' kept words appended to the embeddings' words and index.
void index_kept_words(const std::vector<Chunk>& chunks, Embeddings& embeddings) {
  for (const Chunk& chunk : chunks) {
    for (std::size_t index = 0; index < chunk.words.size(); ++index) {
      if (!chunk.kept[index]) continue;
      embeddings.rows.emplace(std::string(chunk.words[index]), embeddings.words.size());
      embeddings.words.emplace_back(chunk.words[index]);
    }
  }
}

// The text of a .vec file, parsed on the threads. `prefault` maps a piece of it before it is read and `release`
// drops a piece read (a memory map's pages: the file is read twice, a piece at a time, and never resident as a
// whole beside the vectors), or they do nothing.
Embeddings parse_vec_text(const std::string& path, std::string_view contents,
                          const std::function<void(std::string_view)>& prefault,
                          const std::function<void(std::string_view)>& release, const LoadOptions& options,
                          Clock::time_point start) {
  if (contents.empty())
    throw_input_error(path, 1, "empty file (expected a header '<number of words> <dimension>')");
  if (strip_utf8_bom(contents)) {  // as the other inputs: a UTF-8 byte order mark is ignored
    logger().warn("{}: starts with a UTF-8 byte order mark; ignored", path);
  }
  const auto header_end = contents.find('\n');
  const VecHeader header = parse_vec_header(path, strip_line_end(contents.substr(0, header_end)));
  contents.remove_prefix(header_end == std::string_view::npos ? contents.size() : header_end + 1);

  const int threads = resolve_threads(options.threads);
  std::vector<Chunk> chunks = split_into_chunks(
      contents, options.chunk_bytes > 0 ? options.chunk_bytes : automatic_chunk_bytes(contents.size(), threads));
  parallel_for(chunks.size(), threads, [&](std::size_t c) {
    prefault(chunks[c].text);  // at 20k x 20k: 2,000 of align's page faults
    scan_words(chunks[c], options);
    release(chunks[c].text);
  });

  // Place the chunks: file lines, the most frequent rows, matrix rows; then look for duplicates in file order.
  std::size_t total_rows = 0, kept_rows = 0;
  place_chunks(chunks, options, total_rows, kept_rows);
  // A valid row holds dim values and dim separators, so at least 2 dim bytes. When the body is too short for
  // that, some row is malformed: the rows are only checked, to report the first bad line, and the matrix (which
  // a header announcing a huge dimension would make huge) is never allocated.
  const bool plausible = kept_rows <= contents.size() / (2 * static_cast<std::size_t>(header.dim));
  std::size_t charged = 0;
  if (plausible) guard_loading_memory(path, kept_rows, static_cast<std::size_t>(header.dim), options, charged);
  Embeddings embeddings;
  embeddings.path = path;
  if (plausible)
    detail::resize_in_huge_pages(embeddings.vectors, static_cast<Eigen::Index>(kept_rows), header.dim);
  // The words' checks (duplicates, the header's count) and index, serial, run while the other threads parse the
  // rows.
  LineError first_error;
  const auto check_and_index_words = [&] {
    FirstLines first_lines(total_rows);
    find_duplicates(chunks, first_lines, first_error);
    if (total_rows > header.words) {
      keep_first(first_error, header.words + 2,
                 "more rows than the " + std::to_string(header.words) + " the header announces");
    } else if (total_rows < header.words) {
      keep_first(first_error, total_rows + 2,
                 "the file ends after " + std::to_string(total_rows) + " rows, the header announces " +
                     std::to_string(header.words));
    }
    if (first_error.line > 0 || !plausible) return;  // an error follows: no index needed
    embeddings.words.reserve(kept_rows);
    embeddings.rows.reserve(kept_rows);
    index_kept_words(chunks, embeddings);
  };
  Progress progress(path + ": rows read", total_rows);  // a line every few seconds while a large file loads
  parallel_for_alongside(
      chunks.size(), threads,
      [&](std::size_t c) {
        prefault(chunks[c].text);
        parse_rows(chunks[c], header.dim, plausible ? &embeddings.vectors : nullptr);
        release(chunks[c].text);
        progress.advance(chunks[c].words.size());
      },
      check_and_index_words);
  progress.finish();
  for (const Chunk& chunk : chunks) keep_first(first_error, chunk.error.line, chunk.error.message);
  if (first_error.line > 0) throw_input_error(path, first_error.line, first_error.message);
  if (!plausible) {  // unreachable: some row is short; kept as a guard
    throw_input_error(
        path, 2,
        "the rows are too short for the dimension " + std::to_string(header.dim) + " the header announces");
  }
  log_loaded(embeddings, total_rows, start);
  return embeddings;
}

// The decompressed text of a gzip file in blocks of about kBlockBytes, each cut after its last line end (the rest
// starts the next block): the next block is inflated on a thread of its own while the caller parses this one.
class GzipBlocks {
 public:
  static constexpr std::size_t kBlockBytes = std::size_t{16} << 20;
  // Room before each block for the end of the last one's last line (a line is a few KB).
  static constexpr std::size_t kHeadroom = std::size_t{1} << 20;

  explicit GzipBlocks(const std::string& path) : stream_(path) { inflate_next(std::string()); }

  // The next block (its first line starts a line of the file), valid until the next call; false at the end of
  // the text. The two buffers take turns: one inflated on a thread of its own while the other is read; neither
  // is zeroed nor copied (the last block's unfinished line goes in front of the next, in its headroom).
  bool next(std::string_view& block) {
    if (ended_) {
      if (carry_.empty()) return false;
      long_line_ = std::move(carry_);
      carry_.clear();
      block = long_line_;
      return true;
    }
    std::string inflated = inflated_.get();
    const std::size_t size = inflated.size() - kHeadroom;
    ended_ = size < kBlockBytes;
    if (!ended_) inflate_next(std::move(reading_));
    reading_ = std::move(inflated);
    std::string_view data(reading_.data() + kHeadroom, size);
    const std::size_t last_newline = ended_ ? data.size() - 1 : data.rfind('\n');
    if (last_newline == std::string_view::npos || carry_.size() > kHeadroom) {
      // A line longer than a block, or than the headroom (rare): copied whole.
      carry_.append(data);
      if (last_newline == std::string_view::npos) return next(block);
      const std::size_t tail = data.size() - 1 - last_newline;
      long_line_.assign(carry_, 0, carry_.size() - tail);
      carry_.erase(0, carry_.size() - tail);
      block = long_line_;
      return true;
    }
    char* const start = reading_.data() + kHeadroom - carry_.size();
    std::copy(carry_.begin(), carry_.end(), start);
    block = std::string_view(start, carry_.size() + last_newline + 1);
    carry_.assign(data.substr(last_newline + 1));
    return !block.empty();
  }
  std::uint64_t position() const { return stream_.position(); }

 private:
  // Inflates the next block into `buffer` (recycled: its bytes are overwritten, not zeroed first, when it is
  // already of the size), after kHeadroom bytes.
  void inflate_next(std::string buffer) {
    inflated_ = std::async(std::launch::async, [this, buffer = std::move(buffer)]() mutable {
      if (buffer.size() != kHeadroom + kBlockBytes) buffer.resize(kHeadroom + kBlockBytes);
      buffer.resize(kHeadroom + stream_.read(buffer.data() + kHeadroom, kBlockBytes));
      return std::move(buffer);
    });
  }

  detail::GzipStream stream_;
  std::string carry_;      // the last block's unfinished line
  std::string reading_;    // the buffer of the block handed out last
  std::string long_line_;  // a block copied whole (see next)
  bool ended_ = false;
  std::future<std::string> inflated_;  // declared last: destroyed (waited for) before the stream
};

// A .vec.gz, inflated and parsed a block at a time in one pass: only the kept rows and the words (to find
// duplicates) stay, never the text. The same vectors and errors (lines of the decompressed text) as the .vec.
Embeddings load_vec_gz(const std::string& path, const LoadOptions& options, Clock::time_point start) {
  GzipBlocks blocks(path);
  std::string_view block;
  if (!blocks.next(block))
    throw_input_error(path, 1, "empty file (expected a header '<number of words> <dimension>')");
  std::string_view text = block;
  if (strip_utf8_bom(text)) logger().warn("{}: starts with a UTF-8 byte order mark; ignored", path);
  const auto header_end = text.find('\n');
  const VecHeader header = parse_vec_header(path, strip_line_end(text.substr(0, header_end)));
  text.remove_prefix(header_end == std::string_view::npos ? text.size() : header_end + 1);

  const int threads = resolve_threads(options.threads);
  const auto dim = static_cast<std::size_t>(header.dim);
  Embeddings embeddings;
  embeddings.path = path;
  std::deque<std::string> word_bytes;  // every word read so far (duplicates are looked for in all of them)
  // Room for the words the header announces (at most 4M: a header is not trusted with memory).
  FirstLines first_lines(std::min<std::size_t>(header.words, std::size_t{1} << 22));
  std::size_t total_rows = 0, kept_rows = 0, charged = 0;
  LineError first_error;
  Progress progress(path + ": rows read", header.words);
  while (true) {
    std::vector<Chunk> chunks = split_into_chunks(
        text, options.chunk_bytes > 0 ? options.chunk_bytes : automatic_chunk_bytes(text.size(), threads));
    parallel_for(chunks.size(), threads, [&](std::size_t c) { scan_words(chunks[c], options); });
    const std::size_t block_first_row = total_rows, block_first_kept = kept_rows;
    place_chunks(chunks, options, total_rows, kept_rows);
    for (Chunk& chunk : chunks) {
      // The words move to where they stay (a short string's bytes move with it): their views follow.
      const char* old_bytes = chunk.word_bytes.data();
      const std::string& bytes = word_bytes.emplace_back(std::move(chunk.word_bytes));
      for (std::string_view& word : chunk.words) word = {bytes.data() + (word.data() - old_bytes), word.size()};
    }
    // As parse_vec_text's: rows too short for the dimension are only checked, with no matrix.
    const bool plausible = kept_rows - block_first_kept <= text.size() / (2 * dim);
    if (plausible && kept_rows > static_cast<std::size_t>(embeddings.vectors.rows())) {
      // Room for twice the rows so far (mremap'd by realloc, not copied, once large): few reallocations.
      const std::size_t rows = std::min(header.words, 2 * kept_rows);
      guard_loading_memory(path, kept_rows, dim, options, charged);
      embeddings.vectors.conservativeResize(static_cast<Eigen::Index>(std::max(rows, kept_rows)), header.dim);
    }
    const auto check_and_index_words = [&] {
      find_duplicates(chunks, first_lines, first_error);
      if (total_rows > header.words) {
        keep_first(first_error, header.words + 2,
                   "more rows than the " + std::to_string(header.words) + " the header announces");
      }
      if (first_error.line == 0 && plausible) index_kept_words(chunks, embeddings);
    };
    parallel_for_alongside(
        chunks.size(), threads,
        [&](std::size_t c) { parse_rows(chunks[c], header.dim, plausible ? &embeddings.vectors : nullptr); },
        check_and_index_words);
    progress.advance(total_rows - block_first_row);
    for (const Chunk& chunk : chunks) keep_first(first_error, chunk.error.line, chunk.error.message);
    if (first_error.line > 0) throw_input_error(path, first_error.line, first_error.message);
    if (!plausible) {  // unreachable: some row is short; kept as a guard
      throw_input_error(
          path, chunks.front().first_line,
          "the rows are too short for the dimension " + std::to_string(header.dim) + " the header announces");
    }
    if (!blocks.next(block)) break;
    text = block;
  }
  progress.finish();
  if (total_rows < header.words) {
    throw_input_error(path, total_rows + 2,
                      "the file ends after " + std::to_string(total_rows) + " rows, the header announces " +
                          std::to_string(header.words));
  }
  embeddings.vectors.conservativeResize(static_cast<Eigen::Index>(kept_rows), header.dim);
  logger().debug("{}: {} bytes inflated by {}", path, blocks.position(), detail::gzip_inflater());
  log_loaded(embeddings, total_rows, start);
  return embeddings;
}

}  // namespace

Embeddings load_vec(const std::string& path, const LoadOptions& options) {
  const auto start = Clock::now();
  if (detail::has_gzip_magic(path)) return load_vec_gz(path, options, start);
  const detail::MappedFile file(path);
  return parse_vec_text(
      path, file.contents(), [&file](std::string_view part) { file.prefault(part); },
      [&file](std::string_view part) { file.release(part); }, options, start);
}

std::string format_vec(const std::vector<std::string>& words, const Matrix& vectors, int threads) {
  TERMALIGN_CHECK(words.size() == static_cast<std::size_t>(vectors.rows()), "one word per row");
  constexpr std::size_t kBlock = 1024;
  const std::size_t blocks = (words.size() + kBlock - 1) / kBlock;
  std::vector<std::string> texts(blocks);
  parallel_for(blocks, threads, [&](std::size_t block) {
    fmt::memory_buffer out;
    for (std::size_t r = block * kBlock; r < std::min(words.size(), (block + 1) * kBlock); ++r) {
      fmt::format_to(std::back_inserter(out), "{}", words[r]);
      // The shortest text that reads back to the same float.
      for (const float value : vectors.row(static_cast<Eigen::Index>(r)))
        fmt::format_to(std::back_inserter(out), " {}", value);
      out.push_back('\n');
    }
    texts[block] = fmt::to_string(out);
  });
  std::string text = fmt::format("{} {}\n", words.size(), vectors.cols());
  for (const auto& part : texts) text += part;
  return text;
}

namespace {

// The words of a .bin model kept (their dictionary ids, most frequent first), chosen block by block on the
// threads (cc.en.300.bin has 2M words).
std::vector<std::int32_t> kept_word_ids(const detail::FastTextModelFile& model, const LoadOptions& options,
                                        int threads) {
  const std::int32_t word_count = model.word_count();
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t blocks = (static_cast<std::size_t>(word_count) + kBlock - 1) / kBlock;
  std::vector<std::vector<std::int32_t>> kept(blocks);
  parallel_for(blocks, threads, [&](std::size_t block) {
    const auto end = static_cast<std::int32_t>(std::min<std::size_t>((block + 1) * kBlock, word_count));
    for (auto id = static_cast<std::int32_t>(block * kBlock); id < end; ++id) {
      if (static_cast<std::size_t>(id) < options.most_frequent || wanted_word(options, model.word(id)))
        kept[block].push_back(id);
    }
  });
  std::vector<std::int32_t> ids;
  for (const auto& block : kept) ids.insert(ids.end(), block.begin(), block.end());
  return ids;
}

// The embeddings of the words `ids` of `model`: each vector the mean of its rows, as getWordVector.
Embeddings word_vectors_of(const std::string& path, std::shared_ptr<const SubwordModel> model,
                           const std::vector<std::int32_t>& ids, int threads) {
  Embeddings embeddings;
  embeddings.path = path;
  embeddings.words.reserve(ids.size());
  embeddings.rows.reserve(ids.size());
  for (const std::int32_t id : ids) {
    std::string word(model->word(id));
    if (!is_valid_utf8(word)) {
      throw_input_error(path, 0, "dictionary word " + std::to_string(id + 1) + " is not valid UTF-8");
    }
    embeddings.rows.emplace(word, embeddings.words.size());
    embeddings.words.push_back(std::move(word));
  }
  detail::resize_in_huge_pages(embeddings.vectors, static_cast<Eigen::Index>(ids.size()), model->dim());
  // Each vector reads its rows from the file, a batch of words at a time: their rows are found, announced to the
  // kernel at once (read with a deep queue when the file is not in the page cache), then read and averaged.
  Progress progress(path + ": word vectors read", ids.size());
  constexpr std::size_t kBatch = std::size_t{1} << 16, kWordsPerStep = 1024;
  std::vector<std::vector<std::int32_t>> word_rows;
  for (std::size_t batch = 0; batch < ids.size(); batch += kBatch) {
    const std::size_t batch_end = std::min(ids.size(), batch + kBatch);
    word_rows.assign(batch_end - batch, {});
    const std::size_t steps = (batch_end - batch + kWordsPerStep - 1) / kWordsPerStep;
    const auto for_each_word = [&](auto&& visit) {
      parallel_for(steps, threads, [&](std::size_t step) {
        const std::size_t begin = batch + step * kWordsPerStep;
        const std::size_t end = std::min(batch_end, begin + kWordsPerStep);
        for (std::size_t row = begin; row < end; ++row) visit(row);
      });
    };
    for_each_word([&](std::size_t row) { model->subword_rows(embeddings.words[row], word_rows[row - batch]); });
    std::vector<std::int32_t> all;
    for (const auto& rows : word_rows) all.insert(all.end(), rows.begin(), rows.end());
    model->will_need(std::move(all));
    for_each_word([&](std::size_t row) {
      model->mean_of_rows(word_rows[row - batch], embeddings.vectors.row(static_cast<Eigen::Index>(row)).data());
    });
    progress.advance(batch_end - batch);
  }
  progress.finish();
  embeddings.subwords = std::move(model);
  return embeddings;
}

// Whether a gzip file's text starts with fastText's magic number: a gzipped .bin.
bool gzipped_fasttext_model(const std::string& path) {
  detail::GzipStream stream(path);
  std::int32_t magic = 0;
  return stream.read(reinterpret_cast<char*>(&magic), sizeof(magic)) == sizeof(magic) &&
         magic == detail::fasttext_magic;
}

// A .bin.gz in one pass: the dictionary, then the rows of the kept words and of the wanted words (for their
// subword vectors) picked out of the input matrix as it streams by; the model keeps the wanted words' rows.
Embeddings load_fasttext_bin_gz(const std::string& path, const LoadOptions& options, int threads,
                                Clock::time_point start) {
  detail::GzipStream stream(path);
  std::vector<std::int32_t> ids, wanted_rows;
  auto model = std::make_shared<SubwordModel>(
      path, stream, std::filesystem::file_size(path), [&](const detail::FastTextModelFile& dictionary) {
        const detail::FastTextModelFile& model = dictionary;  // the SubwordModel, still being constructed
        ids = kept_word_ids(model, options, threads);
        std::vector<std::int32_t> rows, word_rows;
        for (const std::int32_t id : ids) {
          model.subword_rows(model.word(id), word_rows);
          rows.insert(rows.end(), word_rows.begin(), word_rows.end());
        }
        // The words a run may ask subword vectors of (TermComposer: as written or lower-cased).
        for (const auto* words : {&options.wanted, &options.subword_wanted}) {
          for (const std::string& word : *words) {
            for (const std::string& form : {word, to_lower(word)}) {
              model.subword_rows(form, word_rows);
              wanted_rows.insert(wanted_rows.end(), word_rows.begin(), word_rows.end());
            }
          }
        }
        rows.insert(rows.end(), wanted_rows.begin(), wanted_rows.end());
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        std::size_t charged = 0;
        guard_loading_memory(path, ids.size() + rows.size(), static_cast<std::size_t>(model.dim()), options,
                             charged);
        return rows;
      });
  logger().debug("{}: {} bytes inflated by {}", path, stream.position(), detail::gzip_inflater());
  Embeddings embeddings = word_vectors_of(path, model, ids, threads);
  model->keep_only(std::move(wanted_rows));
  log_loaded(embeddings, static_cast<std::size_t>(model->word_count()), start);
  return embeddings;
}

}  // namespace

Embeddings load_fasttext_bin(const std::string& path, const LoadOptions& options) {
  const auto start = Clock::now();
  const int threads = resolve_threads(options.threads);
  if (detail::has_gzip_magic(path)) return load_fasttext_bin_gz(path, options, threads, start);
  auto model = std::make_shared<const SubwordModel>(path);
  const std::vector<std::int32_t> ids = kept_word_ids(*model, options, threads);
  std::size_t charged = 0;
  guard_loading_memory(path, ids.size(), static_cast<std::size_t>(model->dim()), options, charged);
  Embeddings embeddings = word_vectors_of(path, model, ids, threads);
  log_loaded(embeddings, static_cast<std::size_t>(model->word_count()), start);
  return embeddings;
}

std::optional<int> vector_file_dimension(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  try {
    std::string head(4096, '\0');
    if (detail::has_gzip_magic(path)) {
      detail::GzipStream stream(path);
      head.resize(stream.read(head.data(), head.size()));
    } else {
      std::ifstream file(path, std::ios::binary);
      file.read(head.data(), static_cast<std::streamsize>(head.size()));
      head.resize(static_cast<std::size_t>(file.gcount()));
    }
    std::int32_t numbers[3] = {0, 0, 0};  // a model's magic, version, dimension
    if (head.size() >= sizeof(numbers)) std::memcpy(numbers, head.data(), sizeof(numbers));
    if (numbers[0] == detail::fasttext_magic) {  // a version the reader refuses: the loader says so
      const bool known = (numbers[1] == 11 || numbers[1] == 12) && numbers[2] > 0;
      return known ? std::optional<int>(numbers[2]) : std::nullopt;
    }
    std::string_view text = head;
    strip_utf8_bom(text);
    const auto header_end = text.find('\n');
    if (header_end == std::string_view::npos) return std::nullopt;
    return parse_vec_header(path, strip_line_end(text.substr(0, header_end))).dim;
  } catch (const Error&) {
    return std::nullopt;  // the loader says what is wrong
  }
}

bool is_gzipped_fasttext_model(const std::string& path) {
  return detail::has_gzip_magic(path) && gzipped_fasttext_model(path);
}

Embeddings load_embeddings(const std::string& path, const LoadOptions& options) {
  const bool model = detail::has_fasttext_magic(path) || is_gzipped_fasttext_model(path);
  Embeddings embeddings = model ? load_fasttext_bin(path, options) : load_vec(path, options);
  if (options.fold_case) {
    for (std::size_t r = 0; r < embeddings.words.size(); ++r) {
      const std::string& word = embeddings.words[r];
      if (!may_change_when_lowered(word)) continue;
      std::string key = fold_case(word);
      if (key != word && embeddings.rows.count(key) == 0) embeddings.folded.try_emplace(std::move(key), r);
    }
  }
  return embeddings;
}

}  // namespace termalign
