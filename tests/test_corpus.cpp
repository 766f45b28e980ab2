#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "captured_log.h"
#include "io/corpus.h"
#include "io/io.h"
#include "io/train_vectors.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/count_map.h"

using namespace termalign;

namespace {

std::string corpus_file(const std::string& name, const std::string& text) {
  const std::string dir = std::string(TERMALIGN_BINARY_DIR) + "/test_corpus";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  write_file_atomically(path, text);
  return path;
}

// The words of a text with every apostrophe (' or U+2019) read as a space: the data README's words of a term
// occurrence, split further at apostrophes.
std::vector<std::string> words_of(const std::string& text) {
  std::string spaced = text;
  for (std::size_t at; (at = spaced.find("\xE2\x80\x99")) != std::string::npos;) spaced.replace(at, 3, " ");
  for (char& c : spaced)
    if (c == '\'') c = ' ';
  return tokenize(spaced);
}

// The statistics by brute force: every sentence, every start position, the smoothed PPMI of the definition.
struct Expected {
  std::vector<std::uint64_t> count, sentences;
  std::vector<std::map<std::string, double>> ppmi;
};

Expected brute_force(const std::vector<std::string>& lines, const std::vector<std::string>& terms, int window) {
  Expected expected{std::vector<std::uint64_t>(terms.size()), std::vector<std::uint64_t>(terms.size()),
                    std::vector<std::map<std::string, double>>(terms.size())};
  std::map<std::string, double> word_count;
  std::vector<std::map<std::string, double>> context(terms.size());
  const auto is_word = [](const std::string& token) {
    return std::isalnum(static_cast<unsigned char>(token[0])) || static_cast<unsigned char>(token[0]) >= 0x80;
  };
  for (const std::string& line : lines) {
    const std::vector<std::string> tokens = words_of(to_lower(line));
    for (const std::string& token : tokens)
      if (is_word(token)) word_count[token] += 1;
    for (std::size_t t = 0; t < terms.size(); ++t) {
      const std::vector<std::string> term = words_of(terms[t]);
      bool in_sentence = false;
      for (std::size_t i = 0; i + term.size() <= tokens.size(); ++i) {
        if (!std::equal(term.begin(), term.end(), tokens.begin() + static_cast<std::ptrdiff_t>(i))) continue;
        ++expected.count[t];
        in_sentence = true;
        for (std::size_t j = 0; j < tokens.size(); ++j) {
          const bool before = j < i && i - j <= static_cast<std::size_t>(window);
          const bool after = j >= i + term.size() && j - (i + term.size()) < static_cast<std::size_t>(window);
          if ((before || after) && is_word(tokens[j])) context[t][tokens[j]] += 1;
        }
      }
      expected.sentences[t] += in_sentence;
    }
  }
  double smoothed = 0;
  for (const auto& entry : word_count) smoothed += std::pow(entry.second, 0.75);
  for (std::size_t t = 0; t < terms.size(); ++t) {
    double total = 0;
    for (const auto& entry : context[t]) total += entry.second;
    for (const auto& [word, count] : context[t]) {
      const double pmi = std::log(count / total) - std::log(std::pow(word_count[word], 0.75) / smoothed);
      if (pmi > 0) expected.ppmi[t][word] = pmi;
    }
  }
  return expected;
}

}  // namespace

TEST_CASE("corpus statistics equal brute force, on any thread count and across many piece borders", "[corpus]") {
  // Random sentences over a small vocabulary (accents, capitals, hyphens, punctuation), so that terms overlap and
  // recur; pieces of a few bytes cut the corpus at almost every line.
  std::mt19937 generator(7);
  const std::vector<std::string> vocabulary = {
      "Menu",   "déroulant", "drop-down", "menu", "de", "l'utilisateur", "d’abandon", "fichier", "Fichier",
      "ouvrir", ",",         ".",         "(",    ")",  "données",       "base",      "la"};
  std::uniform_int_distribution<std::size_t> pick(0, vocabulary.size() - 1), length(0, 14);
  std::vector<std::string> lines;
  std::string text;
  for (int s = 0; s < 300; ++s) {
    std::string line;
    for (std::size_t w = length(generator); w > 0; --w)
      line += (line.empty() ? "" : " ") + vocabulary[pick(generator)];
    lines.push_back(line);
    text += line + "\n";
  }
  const std::string path = corpus_file("random.txt", text);
  const std::vector<std::string> terms = {
      "menu",        "menu déroulant",   "drop-down menu", "base de données", "fichier",
      "absent term", "de l'utilisateur", "utilisateur",    "abandon",         "drop"};
  const Expected expected = brute_force(lines, terms, 3);
  for (const int threads : {1, 2, 3}) {
    for (const std::size_t chunk : {std::size_t(7), std::size_t(64), std::size_t(0)}) {
      CorpusOptions options;
      options.window = 3;
      options.threads = threads;
      options.chunk_bytes = chunk;
      const CorpusStatistics statistics = gather_corpus_statistics(path, terms, options);
      CHECK(statistics.term_count == expected.count);
      CHECK(statistics.term_sentences == expected.sentences);
      for (std::size_t t = 0; t < terms.size(); ++t) {
        std::map<std::string, double> found;
        for (const auto& [id, value] : statistics.context[t]) found[statistics.words[id]] = value;
        REQUIRE(found.size() == expected.ppmi[t].size());
        for (const auto& [word, value] : expected.ppmi[t]) CHECK(found[word] == Approx(value).epsilon(1e-5));
      }
    }
  }
  CHECK(expected.count[1] > 0);  // the multi-word terms do occur
  CHECK(expected.count[5] == 0);
  // A word after an elided article occurs (the words split at apostrophes, straight or curly); `drop` does not
  // occur in `drop-down`.
  CHECK(expected.count[7] > 0);
  CHECK(expected.count[8] > 0);
  CHECK(expected.count[9] == 0);
  // Terms written with capitals are found as their lower-case forms are: the corpus is lower-cased, so are they.
  std::vector<std::string> capitalised = {
      "Menu",        "Menu Déroulant",   "DROP-DOWN menu", "Base de Données", "FICHIER",
      "Absent Term", "De L'utilisateur", "Utilisateur",    "ABANDON",         "Drop"};
  const CorpusStatistics statistics = gather_corpus_statistics(path, capitalised, CorpusOptions{3, 2, 0});
  CHECK(statistics.term_count == expected.count);
  CHECK(statistics.term_sentences == expected.sentences);
}

TEST_CASE("corpus statistics: decomposed accents (NFD) in the corpus or the terms match their NFC forms",
          "[corpus]") {
  // "é" composed (U+00E9) and decomposed (e + U+0301).
  const std::string composed = "\xC3\xA9", decomposed = "e\xCC\x81";
  const auto spelled = [](std::string text, const std::string& e) {
    for (std::size_t at; (at = text.find('#')) != std::string::npos;) text.replace(at, 1, e);
    return text;
  };
  const std::string sentences = "la base de donn#es est ouverte\nune autre base de donn#es\nrien ici\n";
  const std::vector<std::string> terms = {spelled("base de donn#es", composed), spelled("donn#es", decomposed)};
  const std::string nfc = corpus_file("nfc.txt", spelled(sentences, composed));
  const std::string nfd = corpus_file("nfd.txt", spelled(sentences, decomposed));
  CHECK(is_nfc(spelled(sentences, composed)));
  CHECK_FALSE(is_nfc(spelled(sentences, decomposed)));
  CHECK(to_nfc(spelled(sentences, decomposed)) == spelled(sentences, composed));
  CapturedLog log;
  const CorpusStatistics from_nfc = gather_corpus_statistics(nfc, terms, CorpusOptions{3, 1, 0});
  CHECK(log.warnings_with("not in Unicode NFC") == 0);
  const CorpusStatistics from_nfd = gather_corpus_statistics(nfd, terms, CorpusOptions{3, 1, 0});
  CHECK(log.warnings_with("2 lines are not in Unicode NFC") == 1);
  CHECK(from_nfc.term_count == std::vector<std::uint64_t>{2, 2});
  CHECK(from_nfd.term_count == from_nfc.term_count);
  CHECK(from_nfd.words == from_nfc.words);
}

TEST_CASE("corpus statistics: bad input names the file and line", "[corpus]") {
  const std::string bad = corpus_file("bad.txt", "good line\nalso good\nbad \xC3\x28 byte\n");
  CorpusOptions options;
  options.chunk_bytes = 4;
  try {
    gather_corpus_statistics(bad, {"good"}, options);
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(error.kind() == ErrorKind::input);
    CHECK_THAT(error.what(), Catch::Contains(bad + ":3"));
  }
  CHECK_THROWS_WITH(gather_corpus_statistics(corpus_file("x", "a") + ".missing", {"a"}),
                    Catch::Contains(".missing") && Catch::Contains("cannot open"));
}

TEST_CASE("corpus statistics log their progress", "[corpus]") {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "a line of the corpus\n";
  const std::string path = corpus_file("progress.txt", text);
  CapturedLog log;
  const ProgressInterval every_step(std::chrono::milliseconds(0));
  CorpusOptions options;
  options.chunk_bytes = 256;
  gather_corpus_statistics(path, {"corpus"}, options);
  const auto lines = log.lines_with("info", "corpus " + path + ", bytes");
  REQUIRE(lines.size() >= 2);  // a line per batch of pieces
  CHECK_THAT(lines.back(), Catch::Contains("(100%"));
}

TEST_CASE("sparse cosine equals the dense one", "[corpus]") {
  const SparseVector a = {{0, 1.0f}, {3, 2.0f}, {7, 0.5f}}, b = {{3, 1.0f}, {5, 4.0f}, {7, 2.0f}};
  const double dense = (2.0 * 1.0 + 0.5 * 2.0) / std::sqrt((1 + 4 + 0.25) * (1 + 16 + 4));
  CHECK(sparse_cosine(a, b) == Approx(dense));
  CHECK(sparse_cosine(a, {}) == 0);
}

TEST_CASE("CountMap counts as a std::map does, across many growths of its table", "[corpus]") {
  detail::CountMap counts;
  std::map<std::uint64_t, std::uint32_t> expected;
  std::mt19937_64 random(5);
  // Keys as the corpus pass makes them (term << 32 | word), many repeated, and some of either half all ones.
  for (int i = 0; i < 300000; ++i) {
    const std::uint64_t term = random() % 3000, word = i % 97 == 0 ? 0xFFFFFFFEu : random() % (1 + i / 10);
    const std::uint64_t key = i % 1001 == 0 ? (std::uint64_t{0xFFFFFFFFu} << 32) | 7 : (term << 32) | word;
    counts.increment(key);
    ++expected[key];
  }
  CHECK(counts.size() == expected.size());
  std::map<std::uint64_t, std::uint32_t> seen;
  counts.for_each([&](std::uint64_t key, std::uint32_t count) { CHECK(seen.emplace(key, count).second); });
  CHECK(seen == expected);
  CHECK(detail::CountMap().size() == 0);
}
