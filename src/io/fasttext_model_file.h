// A fastText 0.9 model file (.bin) read for its word vectors only: the header, the arguments and the dictionary,
// then, on demand, the input-matrix rows a word's vector sums. Neither matrix is read whole and the output matrix
// is never read: cc.en.300.bin is 7.2 GB, of which a run needs a few tens of MB. A gzipped model (.bin.gz) is
// read in one pass instead, keeping in memory the rows a run asks for as they stream by.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace termalign::detail {

constexpr std::int32_t fasttext_magic = 793712314;

// The longest word the vector readers take, a .bin dictionary's or a .vec line's: past it the file is corrupt, and
// a gzip stream without the word's end is not held whole.
constexpr std::size_t longest_word_bytes = std::size_t{1} << 20;

class GzipStream;

// True when the file starts with fastText's magic number (false for a shorter file); an unreadable file is an
// input error naming it.
bool has_fasttext_magic(const std::string& path);

class FastTextModelFile {
 public:
  // Reads and checks the whole layout (magic, version 11 or 12, arguments, dictionary, pruned n-gram index, the
  // sizes of both matrices) against the file's size, reading neither matrix. Each fault is an input error naming
  // the file and what is wrong: a truncated file, a corrupt size, a quantized model (.ftz), another file.
  // Models as fastText reads them: a supervised model's labels are read (the words are its words); minn and maxn
  // are compared with n-gram lengths as size_t (a negative maxn: every length; a negative minn: none); a model
  // without buckets whose entries have n-grams, on which fastText divides by zero, is an input error.
  explicit FastTextModelFile(const std::string& path);
  // A gzipped model from `stream` (`compressed_bytes`: the file's size), in one pass: the layout as above, then
  // the input-matrix rows that rows_needed(*this) lists (called once the dictionary and the matrix's header are
  // read and checked) are kept as they stream by; the rest of the file is inflated for its checks (sizes, the
  // gzip trailer) and dropped. Only those rows can be read (holds).
  FastTextModelFile(const std::string& path, GzipStream& stream, std::uint64_t compressed_bytes,
                    const std::function<std::vector<std::int32_t>(const FastTextModelFile&)>& rows_needed);
  FastTextModelFile(const FastTextModelFile&) = delete;
  FastTextModelFile& operator=(const FastTextModelFile&) = delete;
  ~FastTextModelFile();

  const std::string& path() const { return path_; }
  int dim() const { return dim_; }
  // The dictionary's words (labels excluded), most frequent first, as fastText's Dictionary::getWord.
  std::int32_t word_count() const { return word_count_; }
  std::string_view word(std::int32_t id) const {
    return {words_.data() + word_offsets_[id], word_offsets_[id + 1] - word_offsets_[id]};
  }
  // Dictionary::getId: the entry of `word` (a word or a label), -1 when absent.
  std::int32_t id(std::string_view word) const;
  // Dictionary::getSubwords(word): the input-matrix rows whose mean is the word's vector, in fastText's order
  // (the word's own row when it has one, then its character n-grams of minn to maxn characters within '<' and
  // '>', hashed with FNV-1a over sign-extended bytes, through the pruned index when the model has one).
  void subword_rows(std::string_view word, std::vector<std::int32_t>& rows) const;
  // FastText::getWordVector, bit for bit: the rows summed in that order in float, times float(1.0 / count);
  // zero without rows. out: dim floats. Rows are read from the file (pread); safe to call concurrently. False
  // (out untouched) when a row is not held (a gzipped model's rows that were not asked for).
  bool word_vector(std::string_view word, float* out) const;
  // Whether every one of `rows` can be read: always for a .bin, the rows kept for a gzipped model.
  bool holds(const std::vector<std::int32_t>& rows) const;
  // A gzipped model keeps only these of its held rows (all held), the others freed; nothing for a .bin.
  void keep_only(std::vector<std::int32_t> rows);
  // The bytes of the rows held in memory (a gzipped model's).
  std::size_t held_bytes() const { return held_values_.size() * sizeof(float); }
  // The same from the word's subword_rows.
  void mean_of_rows(const std::vector<std::int32_t>& rows, float* out) const;
  // Asks the kernel to read these rows into the page cache now, all at once (POSIX_FADV_WILLNEED, neighbouring
  // rows in one call): a model not yet in the page cache is then read with a deep queue instead of one row at a
  // time. Advice only.
  void will_need(std::vector<std::int32_t> rows) const;

 private:
  template <typename Reader>
  void read_dictionary(Reader& reader);
  void build_index();
  // visit(hash) for each character n-gram of `marked` ('<' word '>') that fastText hashes, in its order.
  template <typename Visit>
  void for_each_ngram(const std::string& marked, Visit&& visit) const;
  const float* held_row(std::int32_t row) const;  // null when not held
  void append_ngram_rows(const std::string& marked, std::vector<std::int32_t>& rows) const;

  std::string path_;
  int descriptor_ = -1;
  int dim_ = 0, minn_ = 0, maxn_ = 0;
  std::uint32_t bucket_ = 0;
  std::int32_t word_count_ = 0, entry_count_ = 0;
  std::int64_t pruned_size_ = -1;                          // fastText's pruneidx_size_: -1 = not pruned
  std::unordered_map<std::int32_t, std::int32_t> pruned_;  // n-gram bucket -> row after the words
  std::uint64_t input_offset_ = 0;                         // the first float of the input matrix
  std::int64_t input_rows_ = 0;
  std::string words_;                      // every entry's bytes, one after another
  std::vector<std::size_t> word_offsets_;  // entry e's bytes: [word_offsets_[e], word_offsets_[e + 1])
  std::vector<std::int32_t> slots_;        // open addressing over FNV-1a: entry or -1
  std::vector<std::int32_t> held_rows_;    // a gzipped model's rows kept in memory, sorted (no descriptor_)
  std::vector<float> held_values_;         // their values, dim_ each
};

}  // namespace termalign::detail
