// Readers of term lists and pair files: what they keep, the errors (with file and line) and the warnings.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "captured_log.h"
#include "io/io.h"
#include "termalign/error.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"

using termalign::PairFileKind;
using namespace std::string_literals;

namespace {

// Writes `contents` as a fixture file in the build tree and returns its path.
std::string fixture(const std::string& name, const std::string& contents) {
  const std::string directory = TERMALIGN_BINARY_DIR "/test-data/lexicon";
  std::filesystem::create_directories(directory);
  const std::string path = directory + "/" + name;
  termalign::write_file_atomically(path, contents);
  return path;
}

// `read` must throw an input error whose message starts with "path:line:" and contains `words`.
void check_input_error(const std::function<void()>& read, const std::string& path, std::size_t line,
                       const std::string& words) {
  try {
    read();
    FAIL("no error for " << path);
  } catch (const termalign::Error& error) {
    const std::string message = error.what();
    CAPTURE(message);
    CHECK(error.kind() == termalign::ErrorKind::input);
    CHECK(message.rfind(path + ":" + std::to_string(line) + ": ", 0) == 0);
    CHECK(message.find(words) != std::string::npos);
  }
}

void check_term_list_error(const std::string& name, const std::string& contents, std::size_t line,
                           const std::string& words) {
  const std::string path = fixture(name, contents);
  check_input_error([&] { termalign::read_term_list(path); }, path, line, words);
}

void check_pairs_error(const std::string& name, const std::string& contents, std::size_t line,
                       const std::string& words) {
  const std::string path = fixture(name, contents);
  check_input_error([&] { termalign::read_pairs(path, PairFileKind::submission); }, path, line, words);
}

}  // namespace

TEST_CASE("a term list keeps stripped terms in order, skips blank lines and gives ids", "[lexicon]") {
  CapturedLog log;
  const auto list = termalign::read_term_list(fixture("terms.txt", "alpha\n  beta gamma \t\n\n \ndelta"));
  REQUIRE(list.terms == std::vector<std::string>{"alpha", "beta gamma", "delta"});
  CHECK(list.size() == 3);
  CHECK(list.id("beta gamma") == 1u);
  CHECK(list.id("delta") == 2u);
  CHECK_FALSE(list.id("beta").has_value());
  CHECK(list.contains("alpha"));
  CHECK_FALSE(list.contains(" alpha"));
  CHECK(log.warnings_with("terms.txt") == 0);
}

TEST_CASE("term list errors name the file and the line", "[lexicon]") {
  check_term_list_error("utf8.txt", "ok\nna\xC3\x28ve\n", 2, "not valid UTF-8");
  check_term_list_error("overlong.txt", "a\nb\n\xC0\xAF\n", 3, "not valid UTF-8");
  check_term_list_error("nul.txt", "a\n\nb\0c\n"s, 3, "NUL byte");
  check_term_list_error("tab.txt", "a\nb\tc\n", 2, "TAB");
  const std::string missing = TERMALIGN_BINARY_DIR "/test-data/lexicon/no-such-file.txt";
  try {
    termalign::read_term_list(missing);
    FAIL("no error for a missing file");
  } catch (const termalign::Error& error) {
    CHECK(error.kind() == termalign::ErrorKind::input);
    CHECK(std::string(error.what()).rfind(missing + ": ", 0) == 0);
  }
}

TEST_CASE("a term list accepts duplicates, CRLF and a BOM with one warning each", "[lexicon]") {
  SECTION("duplicates") {
    CapturedLog log;
    const auto list = termalign::read_term_list(fixture("dup-terms.txt", "a\nb\na\n a \nc\n"));
    CHECK(list.terms == std::vector<std::string>{"a", "b", "c"});
    CHECK(log.warnings_with("dup-terms.txt: 2 repeated") == 1);
  }
  SECTION("CRLF") {
    CapturedLog log;
    const auto list = termalign::read_term_list(fixture("crlf-terms.txt", "a b\r\nc\r\nd\n"));
    CHECK(list.terms == std::vector<std::string>{"a b", "c", "d"});
    CHECK(log.warnings_with("crlf-terms.txt: 2 lines end with CRLF") == 1);
  }
  SECTION("BOM") {
    CapturedLog log;
    const auto list = termalign::read_term_list(fixture("bom-terms.txt",
                                                        "\xEF\xBB\xBF"
                                                        "a\nb\n"));
    CHECK(list.terms == std::vector<std::string>{"a", "b"});
    CHECK(log.warnings_with("bom-terms.txt") == 1);
    CHECK(log.warnings_with("byte order mark") == 1);
  }
}

TEST_CASE("pair files keep stripped pairs in order with their line numbers", "[lexicon]") {
  CapturedLog log;
  const auto list = termalign::read_pairs(fixture("pairs.tsv", "  menu bar\tbarre de menus \n\n\ncell\tcellule"),
                                          PairFileKind::gold);
  REQUIRE(list.pairs.size() == 2);
  CHECK(list.pairs[0] == std::make_pair(std::string("menu bar"), std::string("barre de menus")));
  CHECK(list.pairs[1] == std::make_pair(std::string("cell"), std::string("cellule")));
  CHECK(list.lines == std::vector<std::size_t>{1, 4});
  CHECK(list.duplicates == 0);
  CHECK(log.warnings_with("pairs.tsv") == 0);
}

TEST_CASE("pair file errors name the file and the line", "[lexicon]") {
  check_pairs_error("one-column.tsv", "a\tb\nc\n", 2, "exactly 2 TAB-separated columns");
  check_pairs_error("three-columns.tsv", "a\tb\nc\td\n\ne\tf\tg\n", 4, "exactly 2 TAB-separated columns");
  check_pairs_error("empty-source.tsv", "a\tb\n \tb\n", 2, "empty source term");
  check_pairs_error("empty-target.tsv", "a\tb\nc\td\ne\t\n", 3, "empty target term");
  check_pairs_error("utf8-pairs.tsv", "a\t\xE9t\xE9\n", 1, "not valid UTF-8");
  check_pairs_error("nul-pairs.tsv", "a\tb\nc\td\0\n"s, 2, "NUL byte");
  SECTION("a gold file with no pair") {
    for (const std::string contents : {"", "\n \n\n"}) {
      const std::string path = fixture("empty-gold.tsv", contents);
      CHECK_THROWS_WITH(termalign::read_pairs(path, PairFileKind::gold),
                        Catch::StartsWith(path) && Catch::Contains("holds no pair"));
    }
  }
  SECTION("an empty submission is accepted") {
    CHECK(termalign::read_pairs(fixture("empty-submission.tsv", "\n"), PairFileKind::submission).pairs.empty());
  }
}

TEST_CASE("pair files accept duplicates, CRLF and a BOM with one warning each", "[lexicon]") {
  SECTION("duplicates: the first occurrence is kept") {
    CapturedLog log;
    const auto list = termalign::read_pairs(fixture("dup-pairs.tsv", "a\tb\nc\td\na\tb\nc\td\na\tb\n"),
                                            PairFileKind::submission);
    CHECK(list.pairs.size() == 2);
    CHECK(list.lines == std::vector<std::size_t>{1, 2});
    CHECK(list.duplicates == 3);
    CHECK(log.warnings_with("dup-pairs.tsv: 3 repeated") == 1);
  }
  SECTION("CRLF") {
    CapturedLog log;
    const auto list = termalign::read_pairs(fixture("crlf-pairs.tsv", "a\tb\r\nc\td\r\n"), PairFileKind::gold);
    REQUIRE(list.pairs.size() == 2);
    CHECK(list.pairs[0].second == "b");
    CHECK(log.warnings_with("crlf-pairs.tsv: 2 lines end with CRLF") == 1);
  }
  SECTION("BOM") {
    CapturedLog log;
    const auto list = termalign::read_pairs(fixture("bom-pairs.tsv",
                                                    "\xEF\xBB\xBF"
                                                    "a\tb\n"),
                                            PairFileKind::seed_lexicon);
    REQUIRE(list.pairs.size() == 1);
    CHECK(list.pairs[0].first == "a");
    CHECK(log.warnings_with("bom-pairs.tsv") == 1);
  }
}

TEST_CASE("read_file reads regular files of any size, pipes as they come, and names a folder", "[lexicon]") {
  // Sizes around the reader's 4 KiB probe and its growth.
  for (const std::size_t size : {0, 1, 4095, 4096, 4097, 70000}) {
    INFO("size " << size);
    std::string contents(size, 'x');
    for (std::size_t i = 0; i < size; ++i) contents[i] = static_cast<char>('a' + i * 7 % 26);
    CHECK(termalign::read_file(fixture("read-" + std::to_string(size) + ".txt", contents)) == contents);
  }
  const std::string fifo = TERMALIGN_BINARY_DIR "/test-data/lexicon/pipe";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string sent;
  for (int i = 0; i < 20000; ++i) sent += "term " + std::to_string(i) + "\n";  // about 190 KB, several pipe loads
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << sent; });
  const std::string received = termalign::read_file(fifo);
  writer.join();
  CHECK(received == sent);
  std::filesystem::remove(fifo);
  CHECK_THROWS_WITH(termalign::read_file(TERMALIGN_BINARY_DIR "/test-data/lexicon"),
                    Catch::Contains("is a folder, not a file"));
  CHECK_THROWS_WITH(termalign::read_file(TERMALIGN_BINARY_DIR "/test-data/lexicon/missing.txt"),
                    Catch::Contains("cannot open file"));
}

TEST_CASE("the submission cap is floor(10 x (|D1| + |D2|) / 2)", "[lexicon]") {
  CHECK(termalign::submission_cap(1, 2) == 15);
  CHECK(termalign::submission_cap(0, 0) == 0);
  CHECK(termalign::submission_cap(1270, 9712) == 54910);
}

TEST_CASE("nested terms are the list's other terms found as words in a row of a term", "[lexicon]") {
  const auto list = termalign::read_term_list(
      fixture("nested.txt",
              "barre d'outils standard\nbarre\nbarre d'outils\noutils\nd'outils standard\nstandard\n"
              "barre standard\nbar\noutils standard barre\n"));
  const auto parts = termalign::nested_terms(list);
  REQUIRE(parts.size() == list.size());
  const auto named = [&](std::size_t id) {
    std::vector<std::string> names;
    for (const std::uint32_t part : parts[id]) names.push_back(list.terms[part]);
    std::sort(names.begin(), names.end());
    return names;
  };
  // Words in a row only (not `barre standard`, not `outils`, a part of a word), never the term itself.
  CHECK(named(0) == std::vector<std::string>{"barre", "barre d'outils", "d'outils standard", "standard"});
  CHECK(named(1).empty());
  CHECK(named(2) == std::vector<std::string>{"barre"});
  CHECK(named(6) == std::vector<std::string>{"barre", "standard"});
  CHECK(named(7).empty());  // `bar` is no word of `barre`
  CHECK(named(8) == std::vector<std::string>{"barre", "outils", "standard"});
  // A part found twice counts once; a very long term costs look-ups of parts of up to 8 words only.
  std::string repeated = "barre";
  for (int i = 0; i < 100000; ++i) repeated += " barre";
  const auto long_list = termalign::read_term_list(fixture("nested-long.txt", "barre\n" + repeated + "\n"));
  CHECK(termalign::nested_terms(long_list)[1] == std::vector<std::uint32_t>{0});
}
