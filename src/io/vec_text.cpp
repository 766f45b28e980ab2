// A .vec file: header "count dim", then "word v1 ... vdim" per line, cut into chunks at line ends and parsed on
// the threads (the words, then the values); the mapped file's pages are read a chunk at a time.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <string_view>

#include "io/float_field.h"
#include "io/io.h"
#include "io/mapped_file.h"
#include "io/vector_loading.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/huge_pages.h"
#include "util/parallel.h"
#include "util/resources.h"

namespace termalign::detail {

namespace {

// The longest value of a .vec row, its separator included (a float's shortest text takes 15 characters).
constexpr std::size_t kLongestValue = 64;

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

// The text of a .vec file, parsed on the threads. `prefault` maps a piece of it before it is read and `release`
// drops a piece read (a memory map's pages: the file is read twice, a piece at a time, and never resident as a
// whole beside the vectors), or they do nothing.
Embeddings parse_vec_text(const std::string& path, std::string_view contents,
                          const std::function<void(std::string_view)>& prefault,
                          const std::function<void(std::string_view)>& release, const LoadOptions& options,
                          Clock::time_point start) {
  const VecHeader header = take_vec_header(path, contents);
  const int threads = resolve_threads(options.threads);
  std::vector<Chunk> chunks = split_into_chunks(
      contents, options.chunk_bytes > 0 ? options.chunk_bytes : automatic_chunk_bytes(contents.size(), threads));
  parallel_for(chunks.size(), threads, [&](std::size_t c) {
    prefault(chunks[c].text);  // at 20k x 20k: 2,000 of align's page faults
    scan_words(chunks[c], options, header.dim);
    release(chunks[c].text);
  });

  // Place the chunks: file lines, the most frequent rows, matrix rows; then look for duplicates in file order.
  std::size_t total_rows = 0, kept_rows = 0;
  place_chunks(chunks, options, total_rows, kept_rows);
  // A valid row holds dim values and dim separators, so at least 2 dim bytes. When the body is too short for
  // that, some row is malformed: the rows are only checked, to report the first bad line, and the matrix (which
  // a header announcing a huge dimension would make huge) is never allocated.
  const bool plausible = kept_rows <= contents.size() / (2 * static_cast<std::size_t>(header.dim));
  const std::size_t row_bytes = static_cast<std::size_t>(header.dim) * sizeof(float);
  LoadingCharge charge(path, options);
  charge.reading(LoadingCharge::Reading::words, word_bytes_of(chunks) + FirstLines::bytes_for(total_rows));
  if (plausible) charge.vectors(kept_rows, kept_rows * row_bytes);
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
  charge.keep(kept_rows * row_bytes);
  log_loaded(embeddings, total_rows, start);
  return embeddings;
}

}  // namespace

void keep_first(LineError& first, std::size_t line, std::string message) {
  if (line > 0 && (first.line == 0 || line < first.line)) first = {line, std::move(message)};
}

std::string_view strip_line_end(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  return line;
}

std::size_t longest_vec_line(int dim) {
  return longest_word_bytes + static_cast<std::size_t>(dim) * kLongestValue;
}

std::string long_vec_line(int dim) {
  const std::string longer = "longer than " + std::to_string(longest_vec_line(dim)) + " bytes";
  if (dim == 0) return "the first line is " + longer + ": not a .vec header '<number of words> <dimension>'";
  return "the line is " + longer + ", more than a word and " + std::to_string(dim) +
         " values take (a word of at most " + std::to_string(longest_word_bytes) + " bytes, " +
         std::to_string(kLongestValue) + " a value)";
}

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

VecHeader take_vec_header(const std::string& path, std::string_view& text) {
  if (text.empty()) throw_input_error(path, 1, "empty file (expected a header '<number of words> <dimension>')");
  if (strip_utf8_bom(text)) {  // as the other inputs: a UTF-8 byte order mark is ignored
    logger().warn("{}: starts with a UTF-8 byte order mark; ignored", path);
  }
  const auto header_end = text.find('\n');
  const std::string_view line = text.substr(0, header_end);
  if (line.size() > longest_vec_line(0)) throw_input_error(path, 1, long_vec_line(0));
  const VecHeader header = parse_vec_header(path, strip_line_end(line));
  text.remove_prefix(header_end == std::string_view::npos ? text.size() : header_end + 1);
  return header;
}

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

void scan_words(Chunk& chunk, const LoadOptions& options, int dim) {
  std::vector<std::size_t> ends;
  const std::size_t longest_line = longest_vec_line(dim);
  for_each_line(chunk.text, [&](std::size_t index, std::string_view line) {
    const std::string_view word = line.substr(0, line.find(' '));
    chunk.word_bytes += word;
    ends.push_back(chunk.word_bytes.size());
    chunk.kept.push_back(wanted_word(options, word));
    if (line.size() > longest_line) {
      keep_first(chunk.error, index + 1, long_vec_line(dim));
    } else if (word.empty()) {
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

std::size_t word_bytes_of(const std::vector<Chunk>& chunks) {
  std::size_t bytes = 0;
  for (const Chunk& chunk : chunks) {
    bytes +=
        chunk.word_bytes.capacity() + chunk.words.capacity() * sizeof(std::string_view) + chunk.kept.capacity();
  }
  return bytes;
}

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

void index_kept_words(const std::vector<Chunk>& chunks, Embeddings& embeddings) {
  for (const Chunk& chunk : chunks) {
    for (std::size_t index = 0; index < chunk.words.size(); ++index) {
      if (!chunk.kept[index]) continue;
      embeddings.rows.emplace(std::string(chunk.words[index]), embeddings.words.size());
      embeddings.words.emplace_back(chunk.words[index]);
    }
  }
}

Embeddings load_vec_text(const std::string& path, const LoadOptions& options, Clock::time_point start) {
  const MappedFile file(path);
  return parse_vec_text(
      path, file.contents(), [&file](std::string_view part) { file.prefault(part); },
      [&file](std::string_view part) { file.release(part); }, options, start);
}

}  // namespace termalign::detail
