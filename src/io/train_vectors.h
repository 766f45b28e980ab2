// Training fastText vectors on a corpus (`termalign train-vectors`): the data's tokenisation, multi-word terms
// joined into single tokens, then libfasttext; writes <out>.bin and <out>.vec for `termalign align`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace termalign {

// Splits text into the tokens of the data's README ("Tokenisation"), the Python regular expression
// \w+(?:[-\u2010\u2011'\u2019]\w+)*|[^\w\s]: runs of word characters (letters, numbers, '_') in which a hyphen
// (-, U+2010, U+2011) or an apostrophe (', U+2019) between word characters is kept, or a single other non-space
// character. No case change and no normalisation. Invalid UTF-8 bytes are single-character tokens.
std::vector<std::string> tokenize(std::string_view text);

// Glue between the words of a joined multi-word term: U+2581 LOWER ONE EIGHTH BLOCK. It is neither a word nor a
// space character, so no token of tokenize() contains it next to other characters: a joined term can never be
// mistaken for a corpus word. ('_' would not do: it is a word character, and `file_name` occurs in the corpora.)
inline constexpr std::string_view term_joiner = "\xE2\x96\x81";

// The single token a term gets in trained vectors: its tokens joined with term_joiner
// ("drop-down menu" -> "drop-down▁menu"; a one-token term is itself). No case change: look up the lower-cased
// term in vectors trained with lowercase = true.
std::string joined_term_token(std::string_view term);

// The multi-word terms of a term list (terms of one token need no joining), indexed by their token sequences.
class TermIndex {
 public:
  TermIndex() = default;
  explicit TermIndex(const std::vector<std::string>& terms);
  // Number of distinct multi-word terms.
  std::size_t size() const { return joined_.size(); }
  // The longest term among tokens[begin, end) that starts at `begin`, as a count of tokens (0 when none).
  std::size_t longest_match(const std::vector<std::string>& tokens, std::size_t begin) const;

 private:
  std::unordered_set<std::string> joined_;       // joined_term_token of each multi-word term
  std::unordered_set<std::string> first_words_;  // first token of each: most positions are rejected here
  std::size_t longest_ = 0;                      // tokens in the longest term
};

// Replaces the occurrences of indexed terms in `tokens` by their joined token, greedily from left to right,
// the longest term first at each position (with "a b" and "a b c" indexed, "a b c d" gives "a▁b▁c", "d").
std::vector<std::string> join_terms(const std::vector<std::string>& tokens, const TermIndex& terms);

enum class VectorModel { skipgram, cbow };
const char* to_string(VectorModel model);
VectorModel parse_vector_model(const std::string& name);  // usage error on an unknown name

struct TrainVectorsOptions {
  std::string corpus;  // required: one sentence per line, UTF-8
  std::string out;     // required: writes <out>.bin and <out>.vec
  std::string terms;   // optional term list (one term per line): multi-word terms are joined into one token
  int dim = 100;       // vector dimension
  int epoch = 5;       // passes over the corpus
  int min_count = 3;   // words seen fewer times get no vector of their own
  int minn = 3;        // character n-grams of minn..maxn characters; maxn = 0 turns sub-words off
  int maxn = 6;
  int bucket = 20000;  // hash buckets of the n-grams (fastText's 2M makes an 800 MB model at dim 100; the
                       // data's general vectors used 20000)
  VectorModel model = VectorModel::skipgram;
  double learning_rate = 0.05;
  int window = 5;     // context window size
  int negatives = 5;  // negative samples
  // Training threads. With 1 thread and a fixed seed the output is the same on every run; with more, the
  // threads update the shared matrices without locks (Hogwild), so the vectors differ from run to run.
  int threads = 1;
  int seed = 0;
  bool lowercase = true;  // lower-case the corpus and the terms (as the data's vectors and term lists are)

  // Rejects bad values with a sentence a user can act on (usage error).
  void validate() const;
};

struct TrainVectorsReport {
  std::size_t lines = 0;               // corpus lines
  std::size_t tokens = 0;              // tokens after joining
  std::size_t joined_occurrences = 0;  // multi-word term occurrences replaced by one token
  std::size_t joined_terms = 0;        // distinct multi-word terms seen at least once
  std::size_t vocabulary = 0;          // words with a vector (min_count reached), fastText's "</s>" included
  double tokenize_seconds = 0, train_seconds = 0, save_seconds = 0;
};

// Tokenises options.corpus into a temporary file beside options.out (lower-cased, terms joined), trains fastText
// on it and writes <out>.bin (the model, with sub-words) and <out>.vec (text vectors of the vocabulary); each
// output replaces its file only once complete. A missing, unreadable or empty corpus, invalid UTF-8 (file:line)
// or a vocabulary empty under min_count is an input error.
TrainVectorsReport train_vectors(const TrainVectorsOptions& options);

}  // namespace termalign
