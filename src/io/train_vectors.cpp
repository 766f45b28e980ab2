#include "io/train_vectors.h"

#include <fasttext/fasttext.h>
#include <sys/stat.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "io/corpus.h"
#include "io/io.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

// Python's \w on str: str.isalnum() (letters L*, numbers N*) or '_'.
bool is_word_character(UChar32 c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  return (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_N_MASK)) != 0;
}

// Python's \s on str: str.isspace(), i.e. general category Zs or bidirectional class WS, B or S.
bool is_space_character(UChar32 c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  const UCharDirection direction = u_charDirection(c);
  return u_charType(c) == U_SPACE_SEPARATOR || direction == U_WHITE_SPACE_NEUTRAL ||
         direction == U_BLOCK_SEPARATOR || direction == U_SEGMENT_SEPARATOR;
}

// Hyphens (-, U+2010, U+2011) and apostrophes (', U+2019) stay inside a word when word characters surround them.
bool is_inner_separator(UChar32 c) { return c == '-' || c == '\'' || c == 0x2010 || c == 0x2011 || c == 0x2019; }

std::string join_tokens(const std::vector<std::string>& tokens, std::size_t begin, std::size_t end) {
  std::string joined = tokens[begin];
  for (std::size_t i = begin + 1; i < end; ++i) joined.append(term_joiner).append(tokens[i]);
  return joined;
}

// A joined term is at least two tokens and a joiner; a corpus token holding the joiner is the joiner alone.
bool is_joined_term(const std::string& token) {
  return token.size() > term_joiner.size() && token.find(term_joiner) != std::string::npos;
}

// A file beside `target` that exists for the life of this object, unless committed onto a target.
class ScratchFile {
 public:
  ScratchFile(const std::string& target, const std::string& suffix) {
    std::string pattern = target + suffix + ".XXXXXX";
    const int descriptor = ::mkstemp(pattern.data());
    if (descriptor < 0)
      throw_output_error(target, std::string("cannot create a file beside it: ") + std::strerror(errno));
    ::close(descriptor);
    path_ = pattern;
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() {
    if (path_.empty()) return;
    std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }
  // Renames the file onto `target` with the usual permissions of a new file; it is no longer removed.
  void commit(const std::string& target) {
    ::chmod(path_.c_str(), static_cast<mode_t>(new_file_permissions()));
    if (std::rename(path_.c_str(), target.c_str()) != 0) {
      throw_output_error(target, std::string("cannot rename the finished file onto it: ") + std::strerror(errno));
    }
    path_.clear();
  }

 private:
  std::string path_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct TokenizedCorpus {
  std::size_t lines = 0, tokens = 0, joined_occurrences = 0, non_nfc_lines = 0;
  std::unordered_set<std::string> joined_terms;
};

// Writes the corpus tokenised (lower-cased when asked, terms joined) as one space-separated line per non-empty
// sentence: the whitespace-split input fastText expects.
TokenizedCorpus tokenize_corpus(const TrainVectorsOptions& options, const TermIndex& terms,
                                const std::string& tokenized_path) {
  std::error_code error;
  if (std::filesystem::is_directory(options.corpus, error)) {
    throw_input_error(options.corpus, 0, "the corpus is a directory, not a text file.");
  }
  std::ifstream input(options.corpus, std::ios::binary);
  if (!input) throw_input_error(options.corpus, 0, std::string("cannot open the corpus: ") + std::strerror(errno));
  std::FILE* output = std::fopen(tokenized_path.c_str(), "wb");
  if (!output) throw_output_error(tokenized_path, std::string("cannot write: ") + std::strerror(errno));
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(output, std::fclose);

  TokenizedCorpus corpus;
  std::string line, tokenized;
  while (std::getline(input, line)) {
    throw_if_interrupted();
    ++corpus.lines;
    if (corpus.lines == 1 && line.rfind(kUtf8Bom, 0) == 0) line.erase(0, kUtf8Bom.size());
    if (!is_valid_utf8(line)) throw_input_error(options.corpus, corpus.lines, "line is not valid UTF-8.");
    // In NFC, as the corpus evidence reads it (gather_corpus_statistics): decomposed accents would split words at
    // their combining marks.
    if (!is_nfc(line)) {
      line = to_nfc(line);
      ++corpus.non_nfc_lines;
    }
    std::vector<std::string> tokens = tokenize(options.lowercase ? to_lower(line) : line);
    if (terms.size() != 0) tokens = join_terms(tokens, terms);
    if (tokens.empty()) continue;
    tokenized.clear();
    for (const std::string& token : tokens) {
      if (!tokenized.empty()) tokenized += ' ';
      tokenized += token;
      if (is_joined_term(token)) {
        ++corpus.joined_occurrences;
        corpus.joined_terms.insert(token);
      }
    }
    tokenized += '\n';
    corpus.tokens += tokens.size();
    if (std::fwrite(tokenized.data(), 1, tokenized.size(), output) != tokenized.size()) {
      throw_output_error(tokenized_path, std::string("cannot write: ") + std::strerror(errno));
    }
  }
  if (input.bad()) throw_input_error(options.corpus, corpus.lines, "cannot read the corpus.");
  if (std::fflush(output) != 0)
    throw_output_error(tokenized_path, std::string("cannot write: ") + std::strerror(errno));
  if (corpus.tokens == 0)
    throw_input_error(options.corpus, 0, "the corpus is empty: it holds no token to train on.");
  if (corpus.non_nfc_lines > 0) warn_read_in_nfc(options.corpus, corpus.non_nfc_lines);
  return corpus;
}

fasttext::Args fasttext_args(const TrainVectorsOptions& options, const std::string& tokenized_path) {
  fasttext::Args args;
  args.input = tokenized_path;
  args.output = options.out;
  args.model = options.model == VectorModel::cbow ? fasttext::model_name::cbow : fasttext::model_name::sg;
  args.loss = fasttext::loss_name::ns;
  args.dim = options.dim;
  args.epoch = options.epoch;
  args.minCount = options.min_count;
  args.minn = options.minn;
  args.maxn = options.maxn;
  args.bucket = options.maxn == 0 ? 0 : options.bucket;  // without n-grams the buckets would be unused memory
  args.lr = options.learning_rate;
  args.ws = options.window;
  args.neg = options.negatives;
  args.thread = options.threads;
  args.seed = options.seed;
  args.verbose = 0;  // fastText's own progress goes to stderr/stdout; ours goes through the logger
  return args;
}

// fastText's callback runs on every training thread: one of them logs, at most every `interval`. With one thread
// fastText trains on the calling thread, and the callback is a polling point (interrupt.h) whose error unwinds
// through fastText; its own threads (several) have no interruption scope, so nothing is thrown there (it would end
// the process): the training then stops only between the steps of train_vectors.
class TrainingProgress {
 public:
  explicit TrainingProgress(std::chrono::seconds interval) : interval_(interval) {}
  void operator()(float progress, float loss, double words_per_second_per_thread, double learning_rate,
                  int64_t eta_seconds) {
    log_if_due(progress, loss, words_per_second_per_thread, learning_rate, eta_seconds);
    throw_if_interrupted();
  }

 private:
  // fastText computes the loss only when it prints its own progress (verbose > 1), so it is not logged.
  void log_if_due(float progress, float, double words_per_second_per_thread, double, int64_t eta_seconds) {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < interval_) return;
    last_ = now;
    logger().info("train-vectors: {:.1f}% trained, {:.0f} words/s/thread, about {} s left", 100.0 * progress,
                  words_per_second_per_thread, eta_seconds);
  }

  std::mutex mutex_;
  std::chrono::seconds interval_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// fastText reports failures as std::invalid_argument; the messages here say what to change.
void train_fasttext(fasttext::FastText& model, const TrainVectorsOptions& options,
                    const std::string& tokenized_path) {
  TrainingProgress progress(std::chrono::seconds(10));
  try {
    model.train(fasttext_args(options, tokenized_path), std::ref(progress));
  } catch (const std::invalid_argument& error) {
    if (std::string(error.what()).find("Empty vocabulary") != std::string::npos) {
      throw_input_error(options.corpus, 0,
                        "no word occurs " + std::to_string(options.min_count) +
                            " times or more: nothing to train; lower --min-count or use a larger corpus.");
    }
    throw_input_error(options.corpus, 0, std::string("fastText cannot train on it: ") + error.what());
  }
}

void save_output(const std::string& path, const std::function<void(const std::string&)>& save) {
  ScratchFile scratch(path, ".tmp");
  try {
    save(scratch.path());
  } catch (const std::invalid_argument& error) {
    throw_output_error(path, std::string("cannot write: ") + error.what());
  }
  scratch.commit(path);
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const int64_t length = static_cast<int64_t>(text.size());
  // The code point at `at` (negative for an invalid sequence) and the offset after it.
  auto next = [&](int64_t at, UChar32& c) {
    U8_NEXT(bytes, at, length, c);
    return at;
  };
  auto word_at = [&](int64_t at, int64_t& after) {
    UChar32 c;
    after = next(at, c);
    return c >= 0 && is_word_character(c);
  };
  std::vector<std::string> tokens;
  int64_t start = 0;
  while (start < length) {
    UChar32 c;
    int64_t end = next(start, c);
    if (c >= 0 && is_space_character(c)) {
      start = end;
      continue;
    }
    if (c >= 0 && is_word_character(c)) {
      for (;;) {  // \w+ then (?:[-'...]\w+)*
        int64_t after;
        while (end < length && word_at(end, after)) end = after;
        if (end >= length) break;
        UChar32 separator;
        const int64_t after_separator = next(end, separator);
        if (!is_inner_separator(separator) || after_separator >= length || !word_at(after_separator, after)) break;
        end = after;
      }
    }
    tokens.emplace_back(text.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start)));
    start = end;
  }
  return tokens;
}

std::string joined_term_token(std::string_view term) {
  const std::vector<std::string> tokens = tokenize(term);
  return tokens.empty() ? std::string() : join_tokens(tokens, 0, tokens.size());
}

TermIndex::TermIndex(const std::vector<std::string>& terms) {
  for (const std::string& term : terms) {
    const std::vector<std::string> tokens = tokenize(term);
    if (tokens.size() < 2) continue;
    joined_.insert(join_tokens(tokens, 0, tokens.size()));
    first_words_.insert(tokens.front());
    longest_ = std::max(longest_, tokens.size());
  }
}

std::size_t TermIndex::longest_match(const std::vector<std::string>& tokens, std::size_t begin) const {
  if (begin >= tokens.size() || first_words_.count(tokens[begin]) == 0) return 0;
  const std::size_t end = std::min(tokens.size(), begin + longest_);
  std::size_t longest = 0;
  std::string candidate = tokens[begin];
  for (std::size_t i = begin + 1; i < end; ++i) {
    candidate.append(term_joiner).append(tokens[i]);
    if (joined_.count(candidate) != 0) longest = i + 1 - begin;
  }
  return longest;
}

std::vector<std::string> join_terms(const std::vector<std::string>& tokens, const TermIndex& terms) {
  std::vector<std::string> joined;
  joined.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size();) {
    const std::size_t length = terms.longest_match(tokens, i);
    if (length == 0) {
      joined.push_back(tokens[i++]);
    } else {
      joined.push_back(join_tokens(tokens, i, i + length));
      i += length;
    }
  }
  return joined;
}

const char* to_string(VectorModel model) { return model == VectorModel::cbow ? "cbow" : "skipgram"; }

VectorModel parse_vector_model(const std::string& name) {
  for (auto value : {VectorModel::skipgram, VectorModel::cbow}) {
    if (name == to_string(value)) return value;
  }
  throw_usage_error("Unknown vector model '" + name + "': use skipgram or cbow.");
}

void TrainVectorsOptions::validate() const {
  auto at_least = [](const char* what, double value, double minimum) {
    if (value < minimum) {
      throw_usage_error(std::string("The ") + what + " must be at least " +
                        std::to_string(static_cast<int>(minimum)) + " (got " +
                        std::to_string(static_cast<long long>(value)) + ").");
    }
  };
  if (corpus.empty()) throw_usage_error("No corpus given: pass --corpus FILE (one sentence per line).");
  if (out.empty()) throw_usage_error("No output given: pass --out PREFIX (writes PREFIX.bin and PREFIX.vec).");
  at_least("vector dimension (--dim)", dim, 1);
  at_least("number of epochs (--epoch)", epoch, 1);
  at_least("minimum word count (--min-count)", min_count, 1);
  at_least("context window (--window)", window, 1);
  at_least("number of negative samples (--negatives)", negatives, 1);
  at_least("number of threads (--threads)", threads, 1);
  if (maxn != 0) {
    at_least("shortest character n-gram (--minn) with sub-words on", minn, 1);
    if (maxn < minn) {
      throw_usage_error("The longest character n-gram (--maxn) must be at least --minn (got maxn " +
                        std::to_string(maxn) + ", minn " + std::to_string(minn) +
                        "); --maxn 0 turns sub-words off.");
    }
    at_least("number of n-gram hash buckets (--bucket) with sub-words on", bucket, 1);
  }
  if (!(learning_rate > 0) || !(learning_rate < 10)) {
    throw_usage_error("The learning rate (--lr) must be above 0 and below 10 (got " +
                      std::to_string(learning_rate) + "); fastText's default is 0.05.");
  }
}

TrainVectorsReport train_vectors(const TrainVectorsOptions& options) {
  options.validate();
  TrainVectorsReport report;
  TermIndex terms;
  if (!options.terms.empty()) {
    std::vector<std::string> term_list = read_term_list(options.terms).terms;
    if (options.lowercase) {
      for (std::string& term : term_list) term = to_lower(term);
    }
    terms = TermIndex(term_list);
    logger().info("train-vectors: {} multi-word terms of {} will be joined into single tokens", terms.size(),
                  options.terms);
  }

  auto start = std::chrono::steady_clock::now();
  logger().info("train-vectors: tokenising {}", options.corpus);
  const ScratchFile tokenized(options.out, ".tokens");
  TokenizedCorpus corpus = tokenize_corpus(options, terms, tokenized.path());
  report.lines = corpus.lines;
  report.tokens = corpus.tokens;
  report.joined_occurrences = corpus.joined_occurrences;
  report.joined_terms = corpus.joined_terms.size();
  report.tokenize_seconds = seconds_since(start);
  logger().info("train-vectors: {} lines, {} tokens; {} occurrences of {} multi-word terms joined ({:.1f} s)",
                report.lines, report.tokens, report.joined_occurrences, report.joined_terms,
                report.tokenize_seconds);

  start = std::chrono::steady_clock::now();
  logger().info(
      "train-vectors: training fastText {} (dim {}, epoch {}, min-count {}, n-grams {}-{}, bucket {}, "
      "{} thread(s), seed {})",
      to_string(options.model), options.dim, options.epoch, options.min_count, options.minn, options.maxn,
      options.bucket, options.threads, options.seed);
  throw_if_interrupted();
  fasttext::FastText model;
  train_fasttext(model, options, tokenized.path());
  throw_if_interrupted();
  report.vocabulary = static_cast<std::size_t>(model.getDictionary()->nwords());
  report.train_seconds = seconds_since(start);
  logger().info("train-vectors: trained {} words in {:.1f} s", report.vocabulary, report.train_seconds);

  start = std::chrono::steady_clock::now();
  save_output(options.out + ".bin", [&](const std::string& path) { model.saveModel(path); });
  save_output(options.out + ".vec", [&](const std::string& path) { model.saveVectors(path); });
  report.save_seconds = seconds_since(start);
  logger().info("train-vectors: wrote {}.bin and {}.vec ({:.1f} s)", options.out, options.out,
                report.save_seconds);
  return report;
}

}  // namespace termalign
