#include "io/fasttext_model_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>

#include "io/gzip_stream.h"
#include "io/mapped_file.h"
#include "termalign/error.h"

namespace termalign::detail {

namespace {

// fastText's Dictionary::hash: FNV-1a over the bytes taken as signed chars, sign-extended to 32 bits.
constexpr std::uint32_t kFnvBasis = 2166136261u, kFnvPrime = 16777619u;
inline std::uint32_t fnv_step(std::uint32_t hash, char byte) {
  return (hash ^ static_cast<std::uint32_t>(static_cast<std::int8_t>(byte))) * kFnvPrime;
}
std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t hash = kFnvBasis;
  for (const char byte : text) hash = fnv_step(hash, byte);
  return hash;
}

constexpr std::int32_t kSupervisedModel = 3;  // fastText's model_name::sup
const std::string_view kEndOfSentence = "</s>";

// Reads of the mapped file that fail with "truncated" instead of running past its end.
class LayoutReader {
 public:
  LayoutReader(const std::string& path, std::string_view contents) : path_(path), contents_(contents) {}

  template <typename T>
  T read(const char* part) {
    T value;
    if (remaining() < sizeof(T)) truncated(part);
    std::memcpy(&value, contents_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  std::string_view word(const char* part) {
    const void* end = std::memchr(contents_.data() + offset_, '\0', remaining());
    if (end == nullptr) truncated(part);
    const std::size_t length = static_cast<const char*>(end) - (contents_.data() + offset_);
    const std::string_view text = contents_.substr(offset_, length);
    offset_ += length + 1;
    return text;
  }

  void skip(std::uint64_t bytes, const char* part) {
    if (bytes > remaining()) truncated(part);
    offset_ += bytes;
  }

  std::uint64_t offset() const { return offset_; }
  std::uint64_t remaining() const { return contents_.size() - offset_; }

  [[noreturn]] void fail(const std::string& message) const { throw_input_error(path_, 0, message); }
  [[noreturn]] void truncated(const char* part) const {
    fail(std::string("truncated fastText model: the file ends inside the ") + part);
  }

 private:
  const std::string& path_;
  std::string_view contents_;
  std::uint64_t offset_ = 0;
};

// The same reads from a gzip stream, through a buffer of decompressed bytes. remaining() is an upper bound: what
// deflate's largest ratio lets the rest of the compressed file hold.
class StreamReader {
 public:
  StreamReader(const std::string& path, GzipStream& stream, std::uint64_t compressed_bytes)
      : path_(path), stream_(stream), bound_(inflated_bound(compressed_bytes)), buffer_(kBufferBytes) {}

  template <typename T>
  T read(const char* part) {
    T value;
    bytes(reinterpret_cast<char*>(&value), sizeof(T), part);
    return value;
  }

  void bytes(char* out, std::size_t size, const char* part) {
    while (size > 0) {
      if (position_ == size_) fill(part);
      const std::size_t take = std::min(size, size_ - position_);
      if (out != nullptr) {
        std::memcpy(out, buffer_.data() + position_, take);
        out += take;
      }
      position_ += take;
      size -= take;
    }
  }

  std::string_view word(const char* part) {
    word_.clear();
    while (true) {
      if (position_ == size_) fill(part);
      const char* begin = buffer_.data() + position_;
      const void* end = std::memchr(begin, '\0', size_ - position_);
      const std::size_t length = end ? static_cast<const char*>(end) - begin : size_ - position_;
      word_.append(begin, length);
      position_ += length;
      if (end) {
        ++position_;
        return word_;
      }
      if (word_.size() > longest_word_bytes)
        fail(std::string("corrupt fastText model: a word of the ") + part + " is longer than " +
             std::to_string(longest_word_bytes) + " bytes");
    }
  }

  void skip(std::uint64_t size, const char* part) {
    while (size > 0) {
      if (position_ == size_) fill(part);
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(size, size_ - position_));
      position_ += take;
      size -= take;
    }
  }

  std::uint64_t offset() const { return consumed_ + position_; }
  std::uint64_t remaining() const { return bound_ > offset() ? bound_ - offset() : 0; }
  // True when the decompressed data ends here.
  bool at_end() {
    if (position_ < size_) return false;
    consumed_ += size_;
    position_ = 0;
    size_ = stream_.read(buffer_.data(), buffer_.size());
    return size_ == 0;
  }

  [[noreturn]] void fail(const std::string& message) const { throw_input_error(path_, 0, message); }
  [[noreturn]] void truncated(const char* part) const {
    fail(std::string("truncated fastText model: the file ends inside the ") + part);
  }

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  void fill(const char* part) {
    if (at_end()) truncated(part);
  }

  const std::string& path_;
  GzipStream& stream_;
  std::uint64_t bound_;
  std::vector<char> buffer_;
  std::size_t size_ = 0, position_ = 0;  // the buffer's bytes, and those read
  std::uint64_t consumed_ = 0;           // bytes before the buffer's
  std::string word_;
};

// A DenseMatrix's header: the quantization flag, rows and columns as int64, checked. Returns the rows.
// `expected_rows` < 0 accepts any count.
template <typename Reader>
std::int64_t read_matrix_header(Reader& reader, const char* part, std::int64_t expected_rows, std::int32_t dim) {
  if (reader.template read<std::uint8_t>(part) != 0)
    reader.fail("quantized fastText models (.ftz) are not supported");
  const auto rows = reader.template read<std::int64_t>(part);
  const auto columns = reader.template read<std::int64_t>(part);
  if (rows < 0 || (expected_rows >= 0 && rows != expected_rows) || columns != dim) {
    reader.fail(std::string("corrupt fastText model: the ") + part + " is " + std::to_string(rows) + " x " +
                std::to_string(columns) + ", expected " +
                (expected_rows >= 0 ? std::to_string(expected_rows) : std::string("n")) + " x " +
                std::to_string(dim));
  }
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(dim) * sizeof(float);
  if (static_cast<std::uint64_t>(rows) > reader.remaining() / row_bytes) reader.truncated(part);
  return rows;
}

// The header, then the rows x columns floats, skipped. Returns the offset of its first float.
template <typename Reader>
std::uint64_t skip_dense_matrix(Reader& reader, const char* part, std::int64_t expected_rows, std::int32_t dim) {
  const std::int64_t rows = read_matrix_header(reader, part, expected_rows, dim);
  const std::uint64_t first = reader.offset();
  reader.skip(static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(dim) * sizeof(float), part);
  return first;
}

}  // namespace

bool has_fasttext_magic(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::int32_t magic = 0;
  return stream.read(reinterpret_cast<char*>(&magic), sizeof(magic)) && magic == fasttext_magic;
}

template <typename Reader>
void FastTextModelFile::read_dictionary(Reader& reader) {
  if (reader.remaining() < sizeof(std::int32_t) ||
      reader.template read<std::int32_t>("header") != fasttext_magic) {
    reader.fail("not a fastText model (the file does not start with fastText's magic number)");
  }
  const auto version = reader.template read<std::int32_t>("header");
  if (version != 11 && version != 12) {
    reader.fail("unsupported fastText model version " + std::to_string(version) + " (expected 11 or 12)");
  }

  // Args::save: dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn, lrUpdateRate; t.
  std::int32_t arguments[12];
  for (auto& argument : arguments) argument = reader.template read<std::int32_t>("arguments");
  reader.template read<double>("arguments");
  const std::int32_t dim = arguments[0], model = arguments[7], bucket = arguments[8];
  minn_ = arguments[9];
  maxn_ = arguments[10];
  // FastText::loadModel: version 11's supervised models had no character n-grams.
  if (version == 11 && model == kSupervisedModel) maxn_ = 0;
  if (dim <= 0 || bucket < 0) {
    reader.fail("corrupt fastText model: dimension " + std::to_string(dim) + ", bucket " + std::to_string(bucket));
  }
  dim_ = dim;
  bucket_ = static_cast<std::uint32_t>(bucket);

  // Dictionary::save: size, nwords, nlabels, ntokens, pruneidx_size, the entries, the pruned n-gram index.
  entry_count_ = reader.template read<std::int32_t>("dictionary");
  word_count_ = reader.template read<std::int32_t>("dictionary");
  const auto label_count = reader.template read<std::int32_t>("dictionary");
  reader.template read<std::int64_t>("dictionary");
  pruned_size_ = reader.template read<std::int64_t>("dictionary");
  if (word_count_ < 0 || label_count < 0 || entry_count_ != std::int64_t{word_count_} + label_count ||
      pruned_size_ < -1) {
    reader.fail("corrupt fastText model: bad dictionary sizes");
  }
  // Each entry: its word, '\0', the count (int64), the type (int8). At least 10 bytes: the file must hold them.
  constexpr std::uint64_t kSmallestEntry = 10;
  if (static_cast<std::uint64_t>(entry_count_) > reader.remaining() / kSmallestEntry)
    reader.truncated("dictionary");
  // The input matrix holds the words then the n-gram buckets (or the pruned index's rows); the output one the
  // words or the labels. A supervised model's labels have no row of their own. Its rows are int32 ids, as
  // fastText's (Dictionary::pushHash adds nwords_ to a bucket in an int32): a model with more is corrupt.
  // Compared before they are added: the pruned index's size is any int64 in a corrupt file.
  const std::int64_t ngram_rows = pruned_size_ >= 0 ? pruned_size_ : std::int64_t{bucket};
  if (ngram_rows > std::int64_t{std::numeric_limits<std::int32_t>::max()} - word_count_) {
    reader.fail("corrupt fastText model: " + std::to_string(word_count_) + " words and " +
                std::to_string(ngram_rows) +
                " n-gram rows, more input-matrix rows than fastText's int32 ids reach");
  }
  input_rows_ = std::int64_t{word_count_} + ngram_rows;
  // The entries' offsets grow as entries are read, never reserved from the header's count alone: a corrupt count
  // passes the bound above in a large gzip file, whose bound is its compressed size times deflate's ratio.
  constexpr std::size_t kFirstEntries = std::size_t{1} << 16;
  word_offsets_.reserve(std::min(static_cast<std::size_t>(entry_count_) + 1, kFirstEntries));
  word_offsets_.push_back(0);
  for (std::int32_t entry = 0; entry < entry_count_; ++entry) {
    if (word_offsets_.size() == word_offsets_.capacity())  // doubled, up to the count
      word_offsets_.reserve(std::min(2 * word_offsets_.size(), static_cast<std::size_t>(entry_count_) + 1));
    words_ += reader.word("dictionary");
    word_offsets_.push_back(words_.size());
    reader.template read<std::int64_t>("dictionary");
    const auto type = reader.template read<std::int8_t>("dictionary");
    if (type != 0 && type != 1) reader.fail("corrupt fastText model: bad dictionary entry type");
  }
  words_.shrink_to_fit();
  if (pruned_size_ > 0 && static_cast<std::uint64_t>(pruned_size_) > reader.remaining() / 8)
    reader.truncated("pruned n-gram index");
  for (std::int64_t pair = 0; pair < pruned_size_; ++pair) {
    const auto ngram = reader.template read<std::int32_t>("pruned n-gram index");
    const auto row = reader.template read<std::int32_t>("pruned n-gram index");
    if (row < 0 || row >= pruned_size_) {
      reader.fail("corrupt fastText model: the pruned n-gram index sends bucket " + std::to_string(ngram) +
                  " to row " + std::to_string(row) + " of " + std::to_string(pruned_size_));
    }
    pruned_[ngram] = row;
  }
  // Dictionary::initNgrams hashes every entry's n-grams modulo the bucket count, pruned or not: with no bucket,
  // fastText itself divides by zero on the first n-gram.
  if (bucket_ == 0) {
    for (std::int32_t entry = 0; entry < entry_count_; ++entry) {
      if (word(entry) == kEndOfSentence) continue;
      bool any = false;
      for_each_ngram("<" + std::string(word(entry)) + ">", [&any](std::uint32_t) { any = true; });
      if (!any) continue;
      reader.fail("corrupt fastText model: character n-grams but no bucket (minn " + std::to_string(minn_) +
                  ", maxn " + std::to_string(maxn_) + ", bucket 0: entry " + std::to_string(entry + 1) +
                  " has n-grams, which fastText itself would hash modulo 0)");
    }
  }
}

FastTextModelFile::FastTextModelFile(const std::string& path) : path_(path) {
  {
    // The map is virtual memory only: of a 7.2 GB file, the dictionary's pages (a few tens of MB) are read.
    const MappedFile file(path);
    LayoutReader reader(path_, file.contents());
    read_dictionary(reader);
    input_offset_ = skip_dense_matrix(reader, "input matrix", input_rows_, dim_);
    skip_dense_matrix(reader, "output matrix", -1, dim_);
    if (reader.remaining() != 0) reader.fail("corrupt fastText model: unexpected data after the output matrix");
  }
  descriptor_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor_ < 0) throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  // Rows are read here and there: no read-ahead around each (on a cold cache it read 2-3 times the rows' bytes).
  ::posix_fadvise(descriptor_, 0, 0, POSIX_FADV_RANDOM);
  build_index();
}

FastTextModelFile::FastTextModelFile(
    const std::string& path, GzipStream& stream, std::uint64_t compressed_bytes,
    const std::function<std::vector<std::int32_t>(const FastTextModelFile&)>& rows_needed)
    : path_(path) {
  StreamReader reader(path_, stream, compressed_bytes);
  read_dictionary(reader);
  build_index();
  // The matrix's header is checked before the caller picks rows of it (and is charged for them).
  read_matrix_header(reader, "input matrix", input_rows_, dim_);
  held_rows_ = rows_needed(*this);
  std::sort(held_rows_.begin(), held_rows_.end());
  held_rows_.erase(std::unique(held_rows_.begin(), held_rows_.end()), held_rows_.end());
  const std::size_t row_bytes = static_cast<std::size_t>(dim_) * sizeof(float);
  held_values_.resize(held_rows_.size() * static_cast<std::size_t>(dim_));
  std::int64_t next_row = 0;
  for (std::size_t i = 0; i < held_rows_.size(); ++i) {
    reader.skip(static_cast<std::uint64_t>(held_rows_[i] - next_row) * row_bytes, "input matrix");
    reader.bytes(reinterpret_cast<char*>(held_values_.data() + i * static_cast<std::size_t>(dim_)), row_bytes,
                 "input matrix");
    next_row = held_rows_[i] + 1;
  }
  // The rest is read for the checks only (the output matrix's size, the gzip trailer's CRC and length): a
  // damaged download is an error, not vectors silently wrong.
  reader.skip(static_cast<std::uint64_t>(input_rows_ - next_row) * row_bytes, "input matrix");
  skip_dense_matrix(reader, "output matrix", -1, dim_);
  if (!reader.at_end()) reader.fail("corrupt fastText model: unexpected data after the output matrix");
}

FastTextModelFile::~FastTextModelFile() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void FastTextModelFile::build_index() {
  std::size_t capacity = 16;
  while (capacity < 2 * static_cast<std::size_t>(entry_count_)) capacity *= 2;
  slots_.assign(capacity, -1);
  const std::size_t mask = capacity - 1;
  for (std::int32_t entry = 0; entry < entry_count_; ++entry) {
    const std::string_view text = word(entry);
    std::size_t slot = fnv1a(text) & mask;
    while (slots_[slot] >= 0 && word(slots_[slot]) != text) slot = (slot + 1) & mask;
    if (slots_[slot] >= 0) {  // fastText never writes a word twice
      throw_input_error(path_, 0,
                        "corrupt fastText model: dictionary entry " + std::to_string(entry + 1) +
                            " repeats entry " + std::to_string(slots_[slot] + 1) + " ('" +
                            std::string(text.substr(0, 40)) + "')");
    }
    slots_[slot] = entry;
  }
}

std::int32_t FastTextModelFile::id(std::string_view text) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = fnv1a(text) & mask;; slot = (slot + 1) & mask) {
    const std::int32_t entry = slots_[slot];
    if (entry < 0 || word(entry) == text) return entry;
  }
}

template <typename Visit>
void FastTextModelFile::for_each_ngram(const std::string& marked, Visit&& visit) const {
  // Dictionary::computeSubwords: n counts UTF-8 characters; no n-gram starts inside a character. n is a size_t
  // there, compared with the int minn and maxn: a negative maxn means every length, a negative minn none.
  const auto shortest = static_cast<std::size_t>(minn_), longest = static_cast<std::size_t>(maxn_);
  const auto continuation = [&marked](std::size_t at) {
    return (static_cast<unsigned char>(marked[at]) & 0xC0) == 0x80;
  };
  for (std::size_t i = 0; i < marked.size(); ++i) {
    if (continuation(i)) continue;
    std::uint32_t hash = kFnvBasis;
    for (std::size_t j = i, n = 1; j < marked.size() && n <= longest; ++n) {
      hash = fnv_step(hash, marked[j++]);
      while (j < marked.size() && continuation(j)) hash = fnv_step(hash, marked[j++]);
      if (n < shortest || (n == 1 && (i == 0 || j == marked.size()))) continue;
      visit(hash);
    }
  }
}

void FastTextModelFile::append_ngram_rows(const std::string& marked, std::vector<std::int32_t>& rows) const {
  // Dictionary::pushHash. A model without buckets has no n-gram of its words (read_dictionary checks); another
  // word's would be hashed modulo 0 by fastText: here it has none. A row is below input_rows_, within int32.
  if (bucket_ == 0 || pruned_size_ == 0) return;
  for_each_ngram(marked, [&](std::uint32_t hash) {
    auto ngram = static_cast<std::int32_t>(hash % bucket_);
    if (pruned_size_ > 0) {
      const auto found = pruned_.find(ngram);
      if (found == pruned_.end()) return;
      ngram = found->second;
    }
    rows.push_back(word_count_ + ngram);
  });
}

void FastTextModelFile::subword_rows(std::string_view text, std::vector<std::int32_t>& rows) const {
  rows.clear();
  const std::int32_t entry = id(text);
  // A label's entry (after the words) indexes the input matrix as fastText does, where it has that row.
  if (entry >= 0 && entry < input_rows_) rows.push_back(entry);
  if (text == kEndOfSentence) return;
  std::string marked;
  marked.reserve(text.size() + 2);
  marked += '<';
  marked += text;
  marked += '>';
  append_ngram_rows(marked, rows);
}

bool FastTextModelFile::word_vector(std::string_view text, float* out) const {
  std::vector<std::int32_t> rows;
  subword_rows(text, rows);
  if (!holds(rows)) return false;
  mean_of_rows(rows, out);
  return true;
}

bool FastTextModelFile::holds(const std::vector<std::int32_t>& rows) const {
  if (descriptor_ >= 0) return true;
  return std::all_of(rows.begin(), rows.end(), [this](std::int32_t row) {
    return std::binary_search(held_rows_.begin(), held_rows_.end(), row);
  });
}

void FastTextModelFile::keep_only(std::vector<std::int32_t> rows) {
  if (descriptor_ >= 0) return;
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::vector<float> values(rows.size() * static_cast<std::size_t>(dim_));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const float* row = held_row(rows[i]);
    TERMALIGN_CHECK(row != nullptr, "only held rows are kept");
    std::copy_n(row, dim_, values.data() + i * static_cast<std::size_t>(dim_));
  }
  held_rows_ = std::move(rows);
  held_values_ = std::move(values);
}

const float* FastTextModelFile::held_row(std::int32_t row) const {
  const auto found = std::lower_bound(held_rows_.begin(), held_rows_.end(), row);
  if (found == held_rows_.end() || *found != row) return nullptr;
  return held_values_.data() +
         static_cast<std::size_t>(found - held_rows_.begin()) * static_cast<std::size_t>(dim_);
}

void FastTextModelFile::will_need(std::vector<std::int32_t> rows) const {
  if (descriptor_ < 0) return;  // the rows are in memory
  std::sort(rows.begin(), rows.end());
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(dim_) * sizeof(float);
  constexpr std::uint64_t kPage = 4096;
  std::uint64_t begin = 0, end = 0;  // the bytes of the rows gathered so far: one call for rows a page apart
  for (const std::int32_t row : rows) {
    const std::uint64_t first = input_offset_ + static_cast<std::uint64_t>(row) * row_bytes;
    if (end > 0 && first <= end + kPage) {
      end = std::max(end, first + row_bytes);
      continue;
    }
    if (end > 0)
      ::posix_fadvise(descriptor_, static_cast<off_t>(begin), static_cast<off_t>(end - begin),
                      POSIX_FADV_WILLNEED);
    begin = first;
    end = first + row_bytes;
  }
  if (end > 0)
    ::posix_fadvise(descriptor_, static_cast<off_t>(begin), static_cast<off_t>(end - begin), POSIX_FADV_WILLNEED);
}

void FastTextModelFile::mean_of_rows(const std::vector<std::int32_t>& rows, float* out) const {
  const std::size_t row_bytes = static_cast<std::size_t>(dim_) * sizeof(float);
  std::vector<float> row(static_cast<std::size_t>(dim_));
  std::fill_n(out, dim_, 0.0f);
  for (const std::int32_t index : rows) {
    if (descriptor_ < 0) {
      const float* held = held_row(index);
      TERMALIGN_CHECK(held != nullptr, "the rows of a streamed model are held");
      for (int j = 0; j < dim_; ++j) out[j] += held[j];
      continue;
    }
    auto offset = static_cast<off_t>(input_offset_ + static_cast<std::uint64_t>(index) * row_bytes);
    auto* into = reinterpret_cast<char*>(row.data());
    for (std::size_t done = 0; done < row_bytes;) {
      const ssize_t got = ::pread(descriptor_, into + done, row_bytes - done, offset + static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        throw_input_error(path_, 0,
                          got == 0 ? std::string("truncated fastText model: the file shrank while it was read")
                                   : std::string("cannot read the model: ") + std::strerror(errno));
      }
      done += static_cast<std::size_t>(got);
    }
    for (int j = 0; j < dim_; ++j) out[j] += row[j];
  }
  if (rows.empty()) return;
  const auto scale = static_cast<float>(1.0 / static_cast<double>(rows.size()));  // Vector::mul(real)
  for (int j = 0; j < dim_; ++j) out[j] *= scale;
}

}  // namespace termalign::detail
