// A .vec.gz: inflated a block at a time on a thread of its own, each block parsed as a .vec's chunks.
#include <algorithm>
#include <deque>
#include <filesystem>
#include <future>
#include <string_view>

#include "io/gzip_stream.h"
#include "io/io.h"
#include "io/vector_loading.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"
#include "util/resources.h"

namespace termalign::detail {

namespace {

// The decompressed text of a gzip file in blocks of about kBlockBytes, each cut after its last line end (the rest
// starts the next block): the next block is inflated on a thread of its own while the caller parses this one.
class GzipBlocks {
 public:
  static constexpr std::size_t kBlockBytes = std::size_t{16} << 20;
  // Room before each block for the end of the last one's last line (a line is a few KB).
  static constexpr std::size_t kHeadroom = std::size_t{1} << 20;

  // The two buffers, and the unfinished line as it grows, are charged to `charge` before they are allocated.
  GzipBlocks(const std::string& path, LoadingCharge& charge) : stream_(path), charge_(charge) {
    account(0);
    inflate_next(std::string());
  }

  // The next block (its first line starts a line of the file), valid until the next call; false at the end of
  // the text. The line left unfinished by the last block is line `line` of a .vec of dimension `dim` (0: its
  // header): when it runs past longest_vec_line(dim) bytes without a line end, an input error there says so. The
  // two buffers take turns: one inflated on a thread of its own while the other is read; neither is zeroed nor
  // copied (the last block's unfinished line goes in front of the next, in its headroom).
  bool next(std::string_view& block, std::size_t line, int dim) {
    while (true) {
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
        if (last_newline == std::string_view::npos && carry_.size() + data.size() > longest_vec_line(dim))
          throw_input_error(stream_.path(), line, long_vec_line(dim));
        account(carry_.size() + data.size());
        carry_.append(data);
        if (last_newline == std::string_view::npos) continue;
        const std::size_t tail = data.size() - 1 - last_newline;
        long_line_.assign(carry_, 0, carry_.size() - tail);
        carry_.erase(0, carry_.size() - tail);
        account(0);
        block = long_line_;
        return true;
      }
      char* const start = reading_.data() + kHeadroom - carry_.size();
      std::copy(carry_.begin(), carry_.end(), start);
      block = std::string_view(start, carry_.size() + last_newline + 1);
      carry_.assign(data.substr(last_newline + 1));
      account(0);
      return !block.empty();
    }
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
  // The buffers' charge, the unfinished line at `carry_bytes` when it is about to grow to that.
  void account(std::size_t carry_bytes) {
    charge_.reading(
        LoadingCharge::Reading::buffers,
        2 * (kHeadroom + kBlockBytes) + std::max(carry_bytes, carry_.capacity()) + long_line_.capacity());
  }

  GzipStream stream_;
  LoadingCharge& charge_;
  std::string carry_;      // the last block's unfinished line
  std::string reading_;    // the buffer of the block handed out last
  std::string long_line_;  // a block copied whole (see next)
  bool ended_ = false;
  std::future<std::string> inflated_;  // declared last: destroyed (waited for) before the stream
};

}  // namespace

// A .vec.gz, inflated and parsed a block at a time in one pass: only the kept rows and the words (to find
// duplicates) stay, never the text. The same vectors and errors (lines of the decompressed text) as the .vec.
Embeddings load_vec_gz(const std::string& path, const LoadOptions& options, Clock::time_point start) {
  LoadingCharge charge(path, options);
  GzipBlocks blocks(path, charge);
  std::string_view block;
  blocks.next(block, 1, 0);  // nothing in an empty file, which take_vec_header reports
  std::string_view text = block;
  const VecHeader header = take_vec_header(path, text);

  const int threads = resolve_threads(options.threads);
  const auto dim = static_cast<std::size_t>(header.dim);
  const std::size_t row_bytes = dim * sizeof(float);
  Embeddings embeddings;
  embeddings.path = path;
  std::deque<std::string> word_bytes;  // every word read so far (duplicates are looked for in all of them)
  std::size_t words_read_bytes = 0;
  // Room for the words the header announces, at most 4M and what the file can hold (a row takes 2 dim + 2 bytes
  // at least): a header is not trusted with memory.
  std::error_code unknown_size;
  const std::uint64_t file_bytes = std::filesystem::file_size(path, unknown_size);
  const std::size_t expected =
      std::min<std::uint64_t>({header.words, std::uint64_t{1} << 22,
                               unknown_size ? header.words : inflated_bound(file_bytes) / (2 * dim + 2)});
  charge.reading(LoadingCharge::Reading::words, FirstLines::bytes_for(expected));
  FirstLines first_lines(expected);
  std::size_t total_rows = 0, kept_rows = 0;
  LineError first_error;
  Progress progress(path + ": rows read", header.words);
  while (true) {
    std::vector<Chunk> chunks = split_into_chunks(
        text, options.chunk_bytes > 0 ? options.chunk_bytes : automatic_chunk_bytes(text.size(), threads));
    parallel_for(chunks.size(), threads, [&](std::size_t c) { scan_words(chunks[c], options, header.dim); });
    const std::size_t block_first_row = total_rows, block_first_kept = kept_rows;
    place_chunks(chunks, options, total_rows, kept_rows);
    for (Chunk& chunk : chunks) {
      // The words move to where they stay (a short string's bytes move with it): their views follow.
      const char* old_bytes = chunk.word_bytes.data();
      const std::string& bytes = word_bytes.emplace_back(std::move(chunk.word_bytes));
      words_read_bytes += bytes.capacity();
      for (std::string_view& word : chunk.words) word = {bytes.data() + (word.data() - old_bytes), word.size()};
    }
    // The words and the duplicate table with room for them (its old slots beside the new while it grows).
    const std::size_t words_bytes = words_read_bytes + word_bytes_of(chunks),
                      table = std::max(FirstLines::bytes_for(total_rows), first_lines.bytes());
    if (table > first_lines.bytes()) {
      charge.reading(LoadingCharge::Reading::words, words_bytes + table + first_lines.bytes());
      first_lines.reserve(total_rows);
    }
    charge.reading(LoadingCharge::Reading::words, words_bytes + table);
    // As parse_vec_text's: rows too short for the dimension are only checked, with no matrix.
    const bool plausible = kept_rows - block_first_kept <= text.size() / (2 * dim);
    if (plausible && kept_rows > static_cast<std::size_t>(embeddings.vectors.rows())) {
      // Room for twice the rows so far (mremap'd by realloc, not copied, once large): few reallocations.
      const std::size_t rows = std::max(std::min(header.words, 2 * kept_rows), kept_rows);
      charge.vectors(kept_rows, rows * row_bytes);
      embeddings.vectors.conservativeResize(static_cast<Eigen::Index>(rows), header.dim);
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
    if (!blocks.next(block, total_rows + 2, header.dim)) break;
    text = block;
  }
  progress.finish();
  if (total_rows < header.words) {
    throw_input_error(path, total_rows + 2,
                      "the file ends after " + std::to_string(total_rows) + " rows, the header announces " +
                          std::to_string(header.words));
  }
  embeddings.vectors.conservativeResize(static_cast<Eigen::Index>(kept_rows), header.dim);
  charge.keep(kept_rows * row_bytes);
  logger().debug("{}: {} bytes inflated by {}", path, blocks.position(), detail::gzip_inflater());
  log_loaded(embeddings, total_rows, start);
  return embeddings;
}

}  // namespace termalign::detail
