// Word embeddings: a vocabulary plus a row-major float matrix, loaded from fastText .vec text or .bin models.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace termalign {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;

// A fastText model kept for the vectors of out-of-vocabulary words (character n-grams). Opaque.
class SubwordModel;

struct Embeddings {
  std::string path;
  std::vector<std::string> words;                     // row -> word, in file order (most frequent first)
  std::unordered_map<std::string, std::size_t> rows;  // word -> row
  Matrix vectors;                                     // words.size() x dim, row-major
  std::shared_ptr<const SubwordModel> subwords;       // set when loaded from a .bin model
  // Loaded with LoadOptions::fold_case: a folded form (fold_case: lower case, ё as е) -> the row of its first
  // (most frequent) word of that form, for the forms without a row of their own (`datei` -> `Datei` in cased
  // German vectors, `отчет` -> `отчёт`).
  std::unordered_map<std::string, std::size_t> folded;

  std::size_t size() const { return words.size(); }
  int dim() const { return static_cast<int>(vectors.cols()); }
  std::optional<std::size_t> row(const std::string& word) const;
  // The row of `word` as written, else of its lower-cased form, else of its folded form or a word of that form
  // (folded): lists and vectors need not agree on case, nor on ё and е, in either direction.
  std::optional<std::size_t> row_any_case(const std::string& word) const;
  bool has_subwords() const { return subwords != nullptr; }
  // The vector fastText's getWordVector gives `word` (sum of its n-gram vectors over their count), raw (before
  // any normalisation). Returns false (and leaves `out` alone) without a .bin model or when the vector is zero.
  bool subword_vector(const std::string& word, RowVector& out) const;
};

struct LoadOptions {
  // When `restrict_words` is set, only the words in `wanted` plus the first `most_frequent` rows of the file are
  // kept (a .vec lists its words most frequent first); otherwise every word is loaded.
  bool restrict_words = false;
  std::unordered_set<std::string> wanted;
  std::size_t most_frequent = 0;
  // Also keep a word whose folded form (fold_case) is wanted, and index the words by that form
  // (Embeddings::folded): lower-cased term lists over cased vectors.
  bool fold_case = false;
  int threads = 0;  // .vec parsing threads; 0 = all
  // .vec parsing: the file is cut at line ends into pieces of about this many bytes, parsed in parallel;
  // 0 = automatic (a few MB). Tests use tiny pieces so that small files cross many borders.
  std::size_t chunk_bytes = 0;
  // The bytes of vectors the loads of one run have kept so far, shared by its two sides so that together they stay
  // within the memory limit (memory_limit() in util/resources.h) with the scoring; null: this load alone.
  std::shared_ptr<std::atomic<std::size_t>> shared_charge;
  // Words whose subword vectors the run may ask of a gzipped model (.bin.gz, read in one pass), without keeping
  // them as rows: the corpus evidence's frequent corpus words. Nothing for other files, which answer any word.
  std::unordered_set<std::string> subword_wanted;
};

// .vec text: header "count dim", then "word v1 ... vdim" per line. Errors name the file and line: a bad header,
// a row with the wrong number of values, a value that is not a finite number, a duplicate word, fewer rows than
// the header announced, invalid UTF-8 in a word. A gzip file (.vec.gz, told by its magic number) is inflated and
// parsed a block at a time, never held whole: the same vectors, the same errors (lines of the decompressed
// text); a truncated or corrupt gzip file (a bad CRC or length included) is an input error.
Embeddings load_vec(const std::string& path, const LoadOptions& options = {});

// .vec text of `words` and their rows (header "count dim"; each value the shortest text that reads back to the
// same float), formatted on `threads` threads.
std::string format_vec(const std::vector<std::string>& words, const Matrix& vectors, int threads = 1);

// fastText .bin model: the in-vocabulary words' vectors (as getWordVector, bit for bit) and the model, kept for
// the out-of-vocabulary words. A gzipped model (.bin.gz) is read in one pass, keeping the rows of the kept words
// and of `wanted`'s and `subword_wanted`'s (whose subword vectors are then available; other words' are not). A
// file that is not a fastText model, a truncated or damaged one, is an input error.
Embeddings load_fasttext_bin(const std::string& path, const LoadOptions& options = {});

// The dimension a vector file's header announces (.vec, .bin, either gzipped), read without loading the file:
// nullopt when it cannot be told (not a file, a header the loader will report as bad).
std::optional<int> vector_file_dimension(const std::string& path);

// Whether `path` is a gzipped fastText model (.bin.gz, told by content): read in one pass, it answers the subword
// vectors of the words asked for in advance only (LoadOptions::wanted and subword_wanted).
bool is_gzipped_fasttext_model(const std::string& path);

// Chooses by content: a fastText model's magic number means .bin (gzipped or not), anything else is read as .vec.
Embeddings load_embeddings(const std::string& path, const LoadOptions& options = {});

// Each distinct load (the file and the LoadOptions that decide which of its words are kept) is read once; later
// runs get a copy of it (a run normalises its vectors in place), so they see exactly what a fresh load gives.
// Vectors given in memory (provide) stand for a name that is not a file. Thread-safe.
class VectorCache {
 public:
  // load_embeddings(path, options) the first time, a copy of the kept vectors after.
  Embeddings load(const std::string& path, const LoadOptions& options);
  // Vectors a program gives: load(name, any options) returns a copy of them.
  void provide(const std::string& name, Embeddings vectors);
  // How many files were read (not counting copies handed out).
  std::size_t files_read() const;
  // What a run derived from its inputs, kept under `key` for the runs after it: the Aligner's scheduler keeps a
  // run's term lists and mapped term vectors, which the runs of a grid that differ only in the scoring, ranking
  // and orthography reuse. Null when nothing is kept under `key`.
  std::shared_ptr<const void> find_state(const std::string& key) const;
  void keep_state(const std::string& key, std::shared_ptr<const void> state);
  void clear();

 private:
  struct Entry {
    std::string path;
    bool any_options = false;  // provided: the options do not matter
    std::string signature;     // file_signature when it was read: a file changed since is read again
    LoadOptions options;       // the words kept (wanted, most_frequent); the threads do not matter
    std::shared_ptr<const Embeddings> vectors;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::vector<std::pair<std::string, std::shared_ptr<const void>>> states_;
  std::size_t files_read_ = 0;
};

}  // namespace termalign
