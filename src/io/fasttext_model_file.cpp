#include "io/fasttext_model_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "termalign/error.h"

namespace termalign::detail {

namespace {

// Sequential reads that fail with "truncated" instead of running past the end of the file.
class ModelFileReader {
 public:
  explicit ModelFileReader(const std::string& path) : path_(path), stream_(path, std::ios::binary) {
    if (!stream_) throw_input_error(path_, 0, std::string("cannot open file: ") + std::strerror(errno));
    stream_.seekg(0, std::ios::end);
    size_ = static_cast<std::uint64_t>(stream_.tellg());
    stream_.seekg(0);
  }

  template <typename T>
  T read(const char* part) {
    T value;
    if (remaining() < sizeof(T) || !stream_.read(reinterpret_cast<char*>(&value), sizeof(T))) truncated(part);
    offset_ += sizeof(T);
    return value;
  }

  void skip_word(const char* part) {
    std::string word;
    std::getline(stream_, word, '\0');
    if (!stream_ || stream_.eof()) truncated(part);
    offset_ += word.size() + 1;
  }

  void skip(std::uint64_t bytes, const char* part) {
    if (bytes > remaining()) truncated(part);
    offset_ += bytes;
    stream_.seekg(static_cast<std::streamoff>(offset_));
  }

  std::uint64_t remaining() const { return size_ - offset_; }

  [[noreturn]] void fail(const std::string& message) const { throw_input_error(path_, 0, message); }
  [[noreturn]] void truncated(const char* part) const {
    fail(std::string("truncated fastText model: the file ends inside the ") + part);
  }

 private:
  std::string path_;
  std::ifstream stream_;
  std::uint64_t size_ = 0, offset_ = 0;
};

// A DenseMatrix: rows and columns (int64), then rows x columns floats. `expected_rows` < 0 accepts any count.
void skip_dense_matrix(ModelFileReader& reader, const char* part, std::int64_t expected_rows, std::int32_t dim) {
  if (reader.read<std::uint8_t>(part) != 0) reader.fail("quantized fastText models (.ftz) are not supported");
  const auto rows = reader.read<std::int64_t>(part);
  const auto columns = reader.read<std::int64_t>(part);
  if (rows < 0 || (expected_rows >= 0 && rows != expected_rows) || columns != dim) {
    reader.fail(std::string("corrupt fastText model: the ") + part + " is " + std::to_string(rows) + " x " +
                std::to_string(columns) + ", expected " +
                (expected_rows >= 0 ? std::to_string(expected_rows) : std::string("n")) + " x " +
                std::to_string(dim));
  }
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(dim) * sizeof(float);
  if (static_cast<std::uint64_t>(rows) > reader.remaining() / row_bytes) reader.truncated(part);
  reader.skip(static_cast<std::uint64_t>(rows) * row_bytes, part);
}

}  // namespace

bool has_fasttext_magic(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::int32_t magic = 0;
  return stream.read(reinterpret_cast<char*>(&magic), sizeof(magic)) && magic == fasttext_magic;
}

void check_fasttext_model_file(const std::string& path) {
  ModelFileReader reader(path);
  if (reader.remaining() < sizeof(std::int32_t) || reader.read<std::int32_t>("header") != fasttext_magic) {
    reader.fail("not a fastText model (the file does not start with fastText's magic number)");
  }
  const auto version = reader.read<std::int32_t>("header");
  if (version != 11 && version != 12) {
    reader.fail("unsupported fastText model version " + std::to_string(version) + " (expected 11 or 12)");
  }

  // Args::save: dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn, lrUpdateRate; t.
  std::int32_t arguments[12];
  for (auto& argument : arguments) argument = reader.read<std::int32_t>("arguments");
  reader.read<double>("arguments");
  const std::int32_t dim = arguments[0], bucket = arguments[8];
  if (dim <= 0 || bucket < 0) {
    reader.fail("corrupt fastText model: dimension " + std::to_string(dim) + ", bucket " + std::to_string(bucket));
  }

  // Dictionary::save: size, nwords, nlabels, ntokens, pruneidx_size, the entries, the pruned n-gram index.
  const auto entries = reader.read<std::int32_t>("dictionary");
  const auto word_count = reader.read<std::int32_t>("dictionary");
  const auto label_count = reader.read<std::int32_t>("dictionary");
  reader.read<std::int64_t>("dictionary");
  const auto pruned_ngrams = reader.read<std::int64_t>("dictionary");
  if (word_count < 0 || label_count < 0 || entries != word_count + label_count) {
    reader.fail("corrupt fastText model: bad dictionary sizes");
  }
  for (std::int32_t entry = 0; entry < entries; ++entry) {
    reader.skip_word("dictionary");
    reader.read<std::int64_t>("dictionary");
    const auto type = reader.read<std::int8_t>("dictionary");
    if (type != 0 && type != 1) reader.fail("corrupt fastText model: bad dictionary entry type");
  }
  // Only quantization prunes the n-gram index (its size is -1 otherwise).
  if (pruned_ngrams >= 0) reader.fail("quantized fastText models (.ftz) are not supported");

  // The input matrix holds the words then the n-gram buckets; the output one the words or the labels.
  skip_dense_matrix(reader, "input matrix", std::int64_t{word_count} + bucket, dim);
  skip_dense_matrix(reader, "output matrix", -1, dim);
  if (reader.remaining() != 0) reader.fail("corrupt fastText model: unexpected data after the output matrix");
}

}  // namespace termalign::detail
