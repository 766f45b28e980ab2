#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/io.h"
#include "io/train_vectors.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"

using termalign::join_terms;
using termalign::joined_term_token;
using termalign::TermIndex;
using termalign::tokenize;
using Tokens = std::vector<std::string>;

namespace {

const std::string kFixtures = TERMALIGN_SOURCE_DIR "/tests/data/train_vectors";
const std::string kJoiner = "\xE2\x96\x81";  // U+2581, written out here rather than taken from the header

// A fresh directory for one test case's outputs.
std::string output_directory(const std::string& name) {
  const std::string directory = TERMALIGN_BINARY_DIR "/test-data/train_vectors/" + name;
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  return directory;
}

std::set<std::string> files_in(const std::string& directory) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) names.insert(entry.path().filename());
  return names;
}

// A synthetic corpus: each template sentence `repeats` times, then one line of words seen once, then blank lines.
// Next to each sentence, its tokens as the README's tokeniser gives them after lower-casing and joining the terms
// of terms.txt, written by hand.
struct SyntheticCorpus {
  std::vector<std::pair<std::string, Tokens>> sentences = {
      {"Open the Drop-down Menu (see Tools).",
       {"open", "the", "drop-down" + kJoiner + "menu", "(", "see", "tools", ")", "."}},
      {"Right-click to open the context menu bar.",
       {"right-click", "to", "open", "the", "context" + kJoiner + "menu" + kJoiner + "bar", "."}},
      {"The context menu lists commands.", {"the", "context" + kJoiner + "menu", "lists", "commands", "."}},
      {"Each menu has a context.", {"each", "menu", "has", "a", "context", "."}},
      {"Choose a style in the drop-down list.", {"choose", "a", "style", "in", "the", "drop-down", "list", "."}},
  };
  std::pair<std::string, Tokens> once = {"Rarely seen word", {"rarely", "seen", "word"}};
  int repeats = 60;

  std::string text() const {
    std::string corpus;
    for (int i = 0; i < repeats; ++i) {
      for (const auto& sentence : sentences) corpus += sentence.first + "\n";
    }
    return corpus + once.first + "\n\n\n";
  }
  std::size_t lines() const { return sentences.size() * repeats + 3; }
  std::size_t tokens() const {
    std::size_t count = once.second.size();
    for (const auto& sentence : sentences) count += sentence.second.size() * repeats;
    return count;
  }
  // Words seen at least min_count times, plus fastText's end-of-sentence word "</s>".
  std::set<std::string> vocabulary(int min_count) const {
    std::map<std::string, int> counts;
    for (const auto& sentence : sentences) {
      for (const auto& token : sentence.second) counts[token] += repeats;
    }
    for (const auto& token : once.second) ++counts[token];
    std::set<std::string> words = {"</s>"};
    for (const auto& [word, count] : counts) {
      if (count >= min_count) words.insert(word);
    }
    return words;
  }
};

termalign::TrainVectorsOptions tiny_options(const std::string& directory, const std::string& corpus_path) {
  termalign::TrainVectorsOptions options;
  options.corpus = corpus_path;
  options.out = directory + "/vectors";
  options.terms = kFixtures + "/terms.txt";
  options.dim = 8;
  options.epoch = 1;
  options.min_count = 2;
  options.bucket = 1000;
  options.threads = 1;
  return options;
}

termalign::ErrorKind error_kind(const termalign::TrainVectorsOptions& options, std::string& message) {
  try {
    termalign::train_vectors(options);
  } catch (const termalign::Error& error) {
    message = error.what();
    return error.kind();
  }
  FAIL("train_vectors did not throw");
  return termalign::ErrorKind::internal;
}

int run_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("tokenize follows the README's regular expression", "[train-vectors]") {
  CHECK(tokenize("Open the Drop-down menu (see l\xE2\x80\x99utilisateur's).") ==
        Tokens{"Open", "the", "Drop-down", "menu", "(", "see", "l\xE2\x80\x99utilisateur's", ")", "."});
  // A hyphen or apostrophe stays only between word characters.
  CHECK(tokenize("a--b x- -y 'quoted' e\xE2\x80\x90mail") ==
        Tokens{"a", "-", "-", "b", "x", "-", "-", "y", "'", "quoted", "'", "e\xE2\x80\x90mail"});
  // '_' and digits are word characters; other punctuation is one token per character.
  CHECK(tokenize("file_name 3.5 \xE2\x82\xAC"
                 "42!?") == Tokens{"file_name", "3", ".", "5", "\xE2\x82\xAC", "42", "!", "?"});
  // Non-ASCII letters are word characters; U+00A0 and tabs are spaces; U+2581 is never part of a word.
  CHECK(tokenize("na\xC3\xAFve\xC2\xA0"
                 "caf\xC3\xA9\t\xD0\xB4\xD0\xB0 a\xE2\x96\x81"
                 "b") == Tokens{"na\xC3\xAFve", "caf\xC3\xA9", "\xD0\xB4\xD0\xB0", "a", kJoiner, "b"});
  CHECK(tokenize("  \t ").empty());
  CHECK(tokenize("").empty());
  CHECK(tokenize("bad \xFF byte") == Tokens{"bad", "\xFF", "byte"});
}

TEST_CASE("joined_term_token glues the term's tokens with U+2581", "[train-vectors]") {
  CHECK(termalign::term_joiner == kJoiner);
  CHECK(joined_term_token("drop-down menu") == "drop-down" + kJoiner + "menu");
  CHECK(joined_term_token("dictionnaires de l'utilisateur") ==
        "dictionnaires" + kJoiner + "de" + kJoiner + "l'utilisateur");
  CHECK(joined_term_token("menu") == "menu");
  CHECK(joined_term_token("Context  Menu") == "Context" + kJoiner + "Menu");  // no case change
  CHECK(joined_term_token("c++") == "c" + kJoiner + "+" + kJoiner + "+");
}

TEST_CASE("join_terms joins the longest term first, left to right", "[train-vectors]") {
  const TermIndex index({"a b", "a b c", "b c d", "c d", "x", "e f g h"});
  CHECK(index.size() == 5);  // "x" has one token: nothing to join
  const std::string ab = "a" + kJoiner + "b", abc = ab + kJoiner + "c", cd = "c" + kJoiner + "d";

  // Overlapping: "a b c" starts first and is the longest there, so "b c d" and "c d" lose their tokens.
  CHECK(join_terms({"a", "b", "c", "d"}, index) == Tokens{abc, "d"});
  CHECK(join_terms({"a", "b", "x", "c", "d"}, index) == Tokens{ab, "x", cd});
  // A term at the sentence end, and a longer term cut by the sentence end.
  CHECK(join_terms({"z", "c", "d"}, index) == Tokens{"z", cd});
  CHECK(join_terms({"e", "f", "g"}, index) == Tokens{"e", "f", "g"});
  CHECK(join_terms({"z", "b", "c", "d", "b", "c", "d"}, index) ==
        Tokens{"z", "b" + kJoiner + "c" + kJoiner + "d", "b" + kJoiner + "c" + kJoiner + "d"});
  // No match, empty input, and case matters.
  CHECK(join_terms({"b", "a", "d", "c"}, index) == Tokens{"b", "a", "d", "c"});
  CHECK(join_terms({}, index).empty());
  CHECK(join_terms({"A", "b"}, index) == Tokens{"A", "b"});
  CHECK(join_terms({"a", "b"}, TermIndex()) == Tokens{"a", "b"});
  CHECK(index.longest_match({"a", "b", "c"}, 0) == 3);
  CHECK(index.longest_match({"a", "b", "c"}, 1) == 0);
  CHECK(index.longest_match({"a", "b", "c"}, 3) == 0);
}

TEST_CASE("train-vectors options are validated in words", "[train-vectors]") {
  const auto message_of = [](const termalign::TrainVectorsOptions& options) -> std::string {
    try {
      options.validate();
    } catch (const termalign::Error& error) {
      CHECK(error.kind() == termalign::ErrorKind::usage);
      return error.what();
    }
    return "";
  };
  termalign::TrainVectorsOptions good;
  good.corpus = "corpus.txt";
  good.out = "out";
  CHECK(message_of(good).empty());
  auto bad = good;
  bad.dim = 0;
  CHECK(message_of(bad) == "The vector dimension (--dim) must be at least 1 (got 0).");
  bad = good, bad.epoch = -1;
  CHECK(message_of(bad).find("--epoch") != std::string::npos);
  bad = good, bad.min_count = 0;
  CHECK(message_of(bad).find("--min-count") != std::string::npos);
  bad = good, bad.threads = 0;
  CHECK(message_of(bad).find("--threads") != std::string::npos);
  bad = good, bad.minn = 7;
  CHECK(message_of(bad).find("--maxn") != std::string::npos);
  bad.maxn = 0;  // sub-words off: minn no longer matters
  CHECK(message_of(bad).empty());
  bad = good, bad.bucket = 0;
  CHECK(message_of(bad).find("--bucket") != std::string::npos);
  bad = good, bad.learning_rate = 0;
  CHECK(message_of(bad).find("--lr") != std::string::npos);
  bad = good, bad.corpus.clear();
  CHECK(message_of(bad).find("--corpus") != std::string::npos);
  CHECK(termalign::parse_vector_model("cbow") == termalign::VectorModel::cbow);
  CHECK_THROWS_WITH(termalign::parse_vector_model("glove"), Catch::Contains("skipgram or cbow"));
}

TEST_CASE("train_vectors on a tiny corpus writes loadable .bin and .vec with joined terms", "[train-vectors]") {
  const std::string directory = output_directory("tiny");
  const SyntheticCorpus synthetic;
  const std::string corpus_path = directory + "/corpus.txt";
  termalign::write_file_atomically(corpus_path, synthetic.text());
  const auto options = tiny_options(directory, corpus_path);

  const termalign::TrainVectorsReport report = termalign::train_vectors(options);
  CHECK(report.lines == synthetic.lines());
  CHECK(report.tokens == synthetic.tokens());
  CHECK(report.joined_occurrences == 3u * synthetic.repeats);
  CHECK(report.joined_terms == 3);
  const std::set<std::string> vocabulary = synthetic.vocabulary(options.min_count);
  CHECK(report.vocabulary == vocabulary.size());
  // Only the outputs are left: the tokenised corpus and the partial outputs were removed.
  CHECK(files_in(directory) == std::set<std::string>{"corpus.txt", "vectors.bin", "vectors.vec"});

  const termalign::Embeddings vec = termalign::load_embeddings(directory + "/vectors.vec");
  const termalign::Embeddings bin = termalign::load_embeddings(directory + "/vectors.bin");
  CHECK(vec.dim() == 8);
  CHECK(bin.dim() == 8);
  CHECK(bin.has_subwords());
  CHECK(std::set<std::string>(vec.words.begin(), vec.words.end()) == vocabulary);
  CHECK(std::set<std::string>(bin.words.begin(), bin.words.end()) == vocabulary);
  const std::string joined = joined_term_token("drop-down menu");
  REQUIRE(vec.row(joined));
  REQUIRE(bin.row(joined));
  CHECK(vec.row("context" + kJoiner + "menu" + kJoiner + "bar"));
  CHECK_FALSE(vec.row("rarely"));  // seen once, min_count 2
  // The .vec holds the .bin's vectors at 5 significant digits.
  for (const std::string& word : {joined, std::string("menu"), std::string(".")}) {
    const auto vec_row = vec.vectors.row(static_cast<Eigen::Index>(*vec.row(word)));
    const auto bin_row = bin.vectors.row(static_cast<Eigen::Index>(*bin.row(word)));
    for (int j = 0; j < 8; ++j) CHECK(vec_row(j) == Approx(bin_row(j)).epsilon(1e-4).margin(1e-6));
  }
}

TEST_CASE("train_vectors with one thread and a fixed seed is reproducible", "[train-vectors]") {
  const std::string directory = output_directory("seed");
  const std::string corpus_path = directory + "/corpus.txt";
  termalign::write_file_atomically(corpus_path, SyntheticCorpus().text());
  auto options = tiny_options(directory, corpus_path);
  options.seed = 7;
  options.out = directory + "/first";
  termalign::train_vectors(options);
  options.out = directory + "/second";
  termalign::train_vectors(options);
  options.seed = 8;
  options.out = directory + "/other-seed";
  termalign::train_vectors(options);
  const std::string first = termalign::read_file(directory + "/first.vec");
  CHECK(first == termalign::read_file(directory + "/second.vec"));
  CHECK(termalign::read_file(directory + "/first.bin") == termalign::read_file(directory + "/second.bin"));
  CHECK(first != termalign::read_file(directory + "/other-seed.vec"));
}

TEST_CASE("train_vectors reads a corpus with decomposed accents (NFD) in NFC", "[train-vectors]") {
  const std::string directory = output_directory("nfd");
  // "é" composed (U+00E9) and decomposed (e + U+0301).
  std::string nfc, nfd;
  for (int i = 0; i < 20; ++i) {
    nfc +=
        "la base de donn\xC3\xA9"
        "es est ouverte et modifi\xC3\xA9"
        "e\n";
    nfd +=
        "la base de donne\xCC\x81"
        "es est ouverte et modifie\xCC\x81"
        "e\n";
  }
  const auto vocabulary = [&](const std::string& name, const std::string& text) {
    const std::string corpus_path = directory + "/" + name + ".txt";
    termalign::write_file_atomically(corpus_path, text);
    auto options = tiny_options(directory, corpus_path);
    options.out = directory + "/" + name;
    termalign::train_vectors(options);
    const termalign::Embeddings vec = termalign::load_embeddings(options.out + ".vec");
    return std::set<std::string>(vec.words.begin(), vec.words.end());
  };
  const std::set<std::string> composed = vocabulary("nfc", nfc);
  CHECK(composed.count("donn\xC3\xA9"
                       "es") == 1);
  CHECK(vocabulary("nfd", nfd) == composed);  // before, `donne`, `es` and the bare accent were words
}

TEST_CASE("train_vectors rejects missing, empty and malformed corpora", "[train-vectors]") {
  const std::string directory = output_directory("errors");
  std::string message;
  auto options = tiny_options(directory, directory + "/missing.txt");
  CHECK(error_kind(options, message) == termalign::ErrorKind::input);
  CHECK(message.find("missing.txt") != std::string::npos);

  // Blank lines and spaces only: no token. An existing output stays as it was.
  termalign::write_file_atomically(directory + "/vectors.vec", "old");
  termalign::write_file_atomically(directory + "/blank.txt", "\n  \n\t\n");
  options.corpus = directory + "/blank.txt";
  CHECK(error_kind(options, message) == termalign::ErrorKind::input);
  CHECK(message.find("blank.txt: the corpus is empty") != std::string::npos);
  CHECK(termalign::read_file(directory + "/vectors.vec") == "old");

  options.corpus = kFixtures + "/bad-utf8.txt";
  CHECK(error_kind(options, message) == termalign::ErrorKind::input);
  CHECK(message.find("bad-utf8.txt:3: ") != std::string::npos);

  // Every word is seen once: nothing reaches min_count 2.
  termalign::write_file_atomically(directory + "/once.txt", "every word here is new\n");
  options.corpus = directory + "/once.txt";
  CHECK(error_kind(options, message) == termalign::ErrorKind::input);
  CHECK(message.find("--min-count") != std::string::npos);

  options.out = directory + "/no-such-directory/vectors";
  CHECK(error_kind(options, message) == termalign::ErrorKind::output);
  CHECK(files_in(directory) == std::set<std::string>{"vectors.vec", "blank.txt", "once.txt"});
}

TEST_CASE("termalign train-vectors writes nothing to stdout", "[train-vectors]") {
  const std::string directory = output_directory("cli");
  const std::string corpus_path = directory + "/corpus.txt";
  termalign::write_file_atomically(corpus_path, SyntheticCorpus().text());
  const std::string command = std::string(TERMALIGN_CLI) + " train-vectors --corpus '" + corpus_path +
                              "' --out '" + directory + "/cli' --terms '" + kFixtures +
                              "/terms.txt' --dim 8 --epoch 1 --min-count 2 --bucket 1000 --threads 1";
  CHECK(run_shell(command + " > '" + directory + "/stdout.txt' 2> '" + directory + "/stderr.txt'") == 0);
  CHECK(termalign::read_file(directory + "/stdout.txt").empty());
  CHECK(termalign::read_file(directory + "/stderr.txt").find("train-vectors: trained") != std::string::npos);
  CHECK(termalign::load_embeddings(directory + "/cli.vec").dim() == 8);
  CHECK(termalign::load_embeddings(directory + "/cli.bin").row(joined_term_token("context menu")));

  CHECK(run_shell(command + " --model glove > /dev/null 2>&1") == 2);
  CHECK(run_shell(command + " --dim 0 > /dev/null 2>&1") == 2);
  CHECK(run_shell(std::string(TERMALIGN_CLI) + " train-vectors --corpus '" + directory + "/missing.txt' --out '" +
                  directory + "/missing' > /dev/null 2>&1") == 3);
}
